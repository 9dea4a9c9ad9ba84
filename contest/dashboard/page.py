"""The dashboard as one HTML page: Plotly charts and HTML tables over the merged results.

Everything is computed in Python, from the DuckDB tables (`load`); the page's script
(page.js) only filters. The sections are scores.py's and measured.py's; here is the page
around them: its navigation, filters, assets and data. Each chart point and each table
row carries the index of its (strategy, scale, machine, commit) in `keys`; a filter
change drops the points and hides the rows whose key is not selected. Summary cells
(n, median, min-max, ratio) keep the values behind them (`data-members`) so the script
can recompute them for the filtered runs with the same rules and number formats as
`fmt` and `median` (blocks.py), which render the unfiltered page.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

from plotly.offline import get_plotlyjs

from contest.dashboard.blocks import (
    GENERATOR,
    Builder,
    esc,
    scale_order,
    short_time,
    strategy_order,
)
from contest.dashboard.load import DIMENSIONS, UNKNOWN, Loaded
from contest.dashboard.measured import (
    benchmarks_section,
    faults_section,
    streaming_section,
    workloads_section,
)
from contest.dashboard.scores import comparison_section, runs_section, scale_section, sweeps_section


def _newest(when: str | None) -> str:
    return f' title="newest record {short_time(when)} UTC"' if when else ""


def filters_html(b: Builder, loaded: Loaded) -> str:
    """One group of checkboxes per dimension, every value ticked; commits newest first."""
    latest: dict[str, str] = {}
    for table_name in ("runs", "sweeps", "faults", "workloads"):
        for i in loaded.table(table_name):
            commit = i.labels.commit
            latest[commit] = max(latest.get(commit, ""), i.labels.when or "")
    values = {d: sorted({k[i] for k in b.keys}) for i, d in enumerate(DIMENSIONS)}
    values["scale"].sort(key=scale_order)
    values["strategy"].sort(key=strategy_order)
    values["commit"].sort(key=lambda c: latest.get(c, ""), reverse=True)
    values["commit"].sort(key=lambda c: c == UNKNOWN)  # stable: newest first, unknown last
    out = []
    for d in DIMENSIONS:
        boxes = "".join(
            f'<label class="chip"{_newest(latest.get(v)) if d == "commit" else ""}>'
            f'<input type="checkbox" data-dim="{d}" value="{esc(v)}" checked>{esc(v)}</label>'
            for v in values[d]
        )
        out.append(
            f'<fieldset class="filter" data-dim="{d}"><legend>{d}</legend>'
            f'<button type="button" data-all="{d}">all</button>'
            f'<button type="button" data-none="{d}">none</button>{boxes}</fieldset>'
        )
    return f'<form id="filters" onsubmit="return false">{"".join(out)}</form>'


def _asset(name: str) -> str:
    return (resources.files("contest.dashboard") / name).read_text(encoding="utf-8")


def _script_json(obj: Any) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(obj, separators=(",", ":")).replace("</", "<\\/")


def render(loaded: Loaded, generated: str, plotly_src: str | None = None) -> str:
    """The whole page. `plotly_src` names where the browser gets plotly.js (the server
    hands it out separately); None puts it inside the page, which then needs nothing
    else (`--out`)."""
    b = Builder()
    for strategy in sorted({i.labels.strategy for i in loaded.table("runs")}, key=strategy_order):
        b.colour(strategy)
    sections = [
        runs_section(b, loaded),
        comparison_section(b, loaded),
        scale_section(b, loaded),
        sweeps_section(b, loaded),
        faults_section(b, loaded),
        workloads_section(b, loaded),
        streaming_section(b, loaded),
        benchmarks_section(b, loaded),
    ]
    keys = [list(k) for k, _ in sorted(b.keys.items(), key=lambda kv: kv[1])]
    data = {"dims": list(DIMENSIONS), "keys": keys, "figures": b.figures}
    plotly = (
        f'<script src="{html.escape(plotly_src)}"></script>'
        if plotly_src
        else f"<script>{get_plotlyjs()}</script>"
    )
    skipped = "".join(
        f"<li>{esc(f)}: {n} line(s) that are not a record were skipped</li>"
        for f, n in loaded.skipped.items()
    )
    files = ", ".join(f"<code>{esc(f)}</code>" for f in loaded.files) or "none"
    nav = "".join(
        f'<a href="#{a}">{t}</a>'
        for a, t in (
            ("runs", "Runs"),
            ("peers", "Peer comparison"),
            ("scale", "Scale"),
            ("sweeps", "Sweeps"),
            ("faults", "Fault experiments"),
            ("workloads", "Workload longevity"),
            ("streaming", "Streaming"),
            ("benchmarks", "Benchmarks"),
        )
    )
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="{GENERATOR}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Results dashboard — {esc(loaded.root.name or str(loaded.root))}</title>
<style>{_asset("page.css")}</style>
{plotly}
</head>
<body>
<div class="layout">
<aside>
<h1>Results dashboard</h1>
<nav>{nav}</nav>
{filters_html(b, loaded)}
</aside>
<main>
<p class="meta">{esc(str(loaded.root))} · generated {esc(generated)} · files: {files}</p>
{f'<ul class="warn">{skipped}</ul>' if skipped else ""}
{"".join(sections)}
</main>
</div>
<script id="dashboard-data" type="application/json">{_script_json(data)}</script>
<script>{_asset("page.js")}</script>
</body>
</html>
"""
