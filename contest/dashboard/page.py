"""The dashboard as one HTML page: Plotly charts and HTML tables over the merged results.

Everything is computed here, in Python, from the DuckDB tables (`load`); the page's
script (page.js) only filters. Each chart point and each table row carries the index
of its (strategy, scale, machine, commit) in `keys`; a filter change drops the points
and hides the rows whose key is not selected. Summary cells (n, median, min-max,
ratio) keep the values behind them (`data-members`) so the script can recompute them
for the filtered runs with the same rules and number formats as `fmt` and
`median` (blocks.py), which render the unfiltered page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from importlib import resources
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from contest.dashboard.blocks import (
    GENERATOR,
    PALETTE,
    REFERENCE,
    Builder,
    Row,
    empty,
    esc,
    fmt,
    gb,
    plot_time,
    ratio_text,
    rows,
    scale_order,
    section,
    short_time,
    strategy_order,
    summary_cell,
    table,
)
from contest.dashboard.load import DIMENSIONS, LOCAL, UNKNOWN, Loaded
from contest.dashboard.measured import benchmarks_section, streaming_section, workloads_section

# -- sections ----------------------------------------------------------------------------


def runs_section(b: Builder, loaded: Loaded) -> str:
    data = rows(loaded, 'SELECT * FROM runs ORDER BY "when" DESC NULLS LAST, source')
    if not data:
        return section("runs", "Runs", "", empty("No runs yet: runs.jsonl holds none."))
    scales = sorted({r["scale"] for r in data}, key=scale_order)
    fig = make_subplots(
        rows=len(scales),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=[f"scale {s}" for s in scales],
    )
    shown: set[str] = set()
    for i, scale in enumerate(scales, start=1):
        at = [r for r in data if r["scale"] == scale and r["correct"] and r["rows_per_core_s"]]
        for strategy in sorted({r["strategy"] for r in at}, key=strategy_order):
            pts = sorted(
                (r for r in at if r["strategy"] == strategy), key=lambda r: r["when"] or ""
            )
            # A run on a busy machine is an open cross: its timing is suspect; a local
            # (unpublished) run an open circle.
            symbols = [
                "x-open" if r["busy"] else "circle-open" if r["origin"] == LOCAL else "circle"
                for r in pts
            ]
            fig.add_trace(
                go.Scatter(
                    x=[plot_time(r["when"]) for r in pts],
                    y=[r["rows_per_core_s"] for r in pts],
                    customdata=[b.key(r) for r in pts],
                    text=[
                        f"{r['commit']} · {r['source']} · {r['origin']}"
                        + (f"<br>busy: {r['busy']}" if r["busy"] else "")
                        + (f"<br>load {r['load1']:.1f}" if r["load1"] is not None else "")
                        for r in pts
                    ],
                    mode="markers",
                    name=f"{strategy} (n={len(pts)})",
                    legendgroup=strategy,
                    showlegend=True,
                    marker={"color": b.colour(strategy), "size": 9, "symbol": symbols},
                    hovertemplate=f"{strategy}<br>%{{y:,.0f}} rows/core/s<br>%{{x}}<br>%{{text}}"
                    "<extra></extra>",
                ),
                row=i,
                col=1,
            )
            shown.add(strategy)
        fig.update_yaxes(title_text="rows/core/s", row=i, col=1, rangemode="tozero")
    chart = b.figure("chart-runs", fig, height=max(320, 230 * len(scales)))
    body = (
        (
            {"data-k": str(b.key(r))},
            [
                short_time(r["when"]),
                esc(r["source"]),
                esc(r["strategy"]),
                esc(r["scale"]),
                esc(r["machine"]),
                esc(r["commit"]),
                esc(r["correct"]),
                fmt(r["rows_per_core_s"], "int") if r["correct"] else "—",
                fmt(r["write_s"], "s1"),
                fmt(r["read_s"], "s1"),
                f'<span class="bad long">{esc(r["busy"])}</span>' if r["busy"] else "",
                fmt(r["load1"], "s1"),
                f'<span class="error">{esc(r["error"])}</span>' if r["error"] else "",
            ],
        )
        for r in data
    )
    headers = ["when (UTC)", "source", "strategy", "scale", "machine", "commit", "correct"]
    headers += ["rows/core/s", "write s", "read s", "busy machine", "load", "error"]
    intro = (
        "Every evaluation in <code>runs.jsonl</code> (and the cluster runs under "
        "<code>cluster/</code>), newest first. The chart shows correct runs only, one "
        "panel per scale, over time, n runs per strategy in the legend: a cross marks a run "
        "on a busy machine (load or CPU steal around its timed jobs: its timing is "
        "suspect), an open circle a local run not yet published; the table says why and "
        "the load before the write."
    )
    return section(
        "runs", "Runs", intro, chart + table(headers, body, numeric=(7, 8, 9, 11), what="runs")
    )


def comparison_section(b: Builder, loaded: Loaded) -> str:
    data = rows(
        loaded,
        "SELECT * FROM runs WHERE source = 'runs.jsonl' AND correct "
        'AND rows_per_core_s IS NOT NULL ORDER BY "when"',
    )
    if not data:
        return section("peers", "Peer comparison", "", empty("No correct runs yet."))
    scales = sorted({r["scale"] for r in data}, key=scale_order)
    fig = make_subplots(
        rows=1,
        cols=len(scales),
        subplot_titles=[f"scale {s}" for s in scales],
        horizontal_spacing=0.06,
    )
    for i, scale in enumerate(scales, start=1):
        at = [r for r in data if r["scale"] == scale]
        for strategy in sorted({r["strategy"] for r in at}, key=strategy_order):
            pts = [r for r in at if r["strategy"] == strategy]
            fig.add_trace(
                go.Box(
                    x=[f"{strategy} (n={len(pts)})"] * len(pts),
                    y=[r["rows_per_core_s"] for r in pts],
                    customdata=[b.key(r) for r in pts],
                    text=[f"{r['when']} · {r['commit']}" for r in pts],
                    name=strategy,
                    legendgroup=strategy,
                    showlegend=False,
                    boxpoints="all",
                    jitter=0.4,
                    pointpos=0,
                    marker={"color": b.colour(strategy), "size": 6},
                    line={"color": b.colour(strategy)},
                    hovertemplate=f"{strategy}<br>%{{y:,.0f}} rows/core/s<br>%{{text}}"
                    "<extra></extra>",
                ),
                row=1,
                col=i,
            )
        fig.update_yaxes(rangemode="tozero", row=1, col=i)
        fig.update_xaxes(tickangle=-35, row=1, col=i)
    fig.update_yaxes(title_text="rows/core/s", row=1, col=1)
    chart = b.figure("chart-peers", fig, height=420)

    groups: dict[tuple[str, str], list[Row]] = {}
    for r in data:
        groups.setdefault((r["scale"], r["strategy"]), []).append(r)
    order = sorted(groups, key=lambda g: (scale_order(g[0]), strategy_order(g[1])))

    def body() -> Iterable[tuple[dict[str, str], list[str]]]:
        for scale, strategy in order:
            members = groups[(scale, strategy)]
            ref = [r["rows_per_core_s"] for r in groups.get((scale, REFERENCE), [])]
            own = [r["rows_per_core_s"] for r in members]
            cols = [[b.key(r), r["rows_per_core_s"], r["write_s"], r["read_s"]] for r in members]
            attrs = {
                "data-members": json.dumps(cols),
                "data-group": f"{scale}|{strategy}",
                "data-ref": f"{scale}|{REFERENCE}",
            }
            yield (
                attrs,
                [
                    esc(scale),
                    esc(strategy),
                    summary_cell("n", 1, own),
                    summary_cell("median", 1, own),
                    summary_cell("range", 1, own),
                    summary_cell("median_s", 2, [r["write_s"] for r in members]),
                    summary_cell("median_s", 3, [r["read_s"] for r in members]),
                    f'<span data-agg="ratio" data-col="1">{ratio_text(ref, own)}</span>',
                ],
            )

    headers = ["scale", "strategy", "n", "median rows/core/s", "min–max", "median write s"]
    headers += ["median read s", f"{REFERENCE} ×"]
    intro = (
        "Correct runs of <code>runs.jsonl</code> per strategy and scale: n, median and "
        f"min–max of rows per core per second, and how many times {REFERENCE}'s median "
        "each strategy's is. Medians differ only where min–max ranges do not overlap; a "
        "ratio from a single run is marked as such."
    )
    return section(
        "peers",
        "Peer comparison",
        intro,
        chart + table(headers, body(), numeric=(2, 3, 4, 5, 6, 7), what="strategy × scale groups"),
    )


def scale_section(b: Builder, loaded: Loaded) -> str:
    data = rows(loaded, 'SELECT * FROM scale ORDER BY scale_value, "when"')
    if not data:
        return section("scale", "Scale", "", empty("No scale runs yet: scale.jsonl holds none."))
    ok = [r for r in data if r["correct"] and r["scale_value"]]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=["rows/core/s", "seconds per million rows"],
        horizontal_spacing=0.1,
    )
    for col, metric in ((1, "rows_per_core_s"), (2, "s_per_million_rows")):
        # A sitting is a series: scales measured in one invocation are joined, two
        # sittings never (a scale measured twice is two points, not a zigzag).
        sittings = list(dict.fromkeys(r["sitting"] for r in ok))
        for n, sitting in enumerate(sittings):
            pts = sorted(
                (r for r in ok if r["sitting"] == sitting and r[metric] is not None),
                key=lambda r: r["scale_value"],
            )
            fig.add_trace(
                go.Scatter(
                    x=[r["scale_value"] for r in pts],
                    y=[r[metric] for r in pts],
                    customdata=[b.key(r) for r in pts],
                    mode="lines+markers",
                    name=f"sitting {short_time(sitting)} (n=1 a scale)",
                    legendgroup=sitting,
                    showlegend=col == 1,
                    marker={"color": PALETTE[n % len(PALETTE)], "size": 8},
                    line={"color": PALETTE[n % len(PALETTE)]},
                    hovertemplate="scale %{x}<br>%{y:,.3~f}<extra></extra>",
                ),
                row=1,
                col=col,
            )
        ticks = sorted({r["scale_value"] for r in ok})
        fig.update_xaxes(
            type="log",
            title_text="scale",
            tickvals=ticks,
            ticktext=[f"{t:g}" for t in ticks],
            row=1,
            col=col,
        )
        fig.update_yaxes(rangemode="tozero", row=1, col=col)
    chart = b.figure("chart-scale", fig, height=360)
    body = (
        (
            {"data-k": str(b.key(r))},
            [
                esc(r["scale"]),
                fmt(r["rows"], "int"),
                esc(r["correct"]),
                fmt(r["write_s"], "s1"),
                fmt(r["read_s"], "s1"),
                fmt(r["rows_per_core_s"], "int"),
                f"{r['s_per_million_rows']:.3f}" if r["s_per_million_rows"] is not None else "—",
                gb(r["peak_rss_bytes"]),
                gb(r["stored_bytes"]),
                fmt(r["files_per_bucket"], "s1"),
                esc(r["commit"]),
                short_time(r["when"]),
            ],
        )
        for r in data
    )
    headers = ["scale", "rows", "correct", "write s", "read s", "rows/core/s", "s / M rows"]
    headers += ["peak RSS GB", "stored GB", "files/bucket", "commit", "when (UTC)"]
    intro = (
        "<code>contest bench scale</code> (<code>scale.jsonl</code>): the optimized "
        "pipeline at growing scales, one line per sitting (one run a scale each); a flat "
        "cost per row means it scales linearly."
    )
    return section(
        "scale",
        "Scale",
        intro,
        chart + table(headers, body, numeric=tuple(range(1, 10)), what="scales"),
    )


def sweep_rows(
    b: Builder, at: list[Row], cases: list[str]
) -> Iterable[tuple[dict[str, str], list[str]]]:
    """One summary row per case: runs, correct runs, median and min–max of those."""
    for case in cases:
        members = [r for r in at if r["case_name"] == case]
        good = [r for r in members if r["correct"] and r["rows_per_core_s"] is not None]
        values = [r["rows_per_core_s"] for r in good]
        cols = [[b.key(r), r["rows_per_core_s"] if r in good else None] for r in members]
        yield (
            {"data-members": json.dumps(cols)},
            [
                esc(case),
                summary_cell("n", 1, [r["rows_per_core_s"] for r in members]),
                summary_cell("count", 1, values),
                summary_cell("median", 1, values),
                summary_cell("range", 1, values),
            ],
        )


def sweeps_section(b: Builder, loaded: Loaded) -> str:
    data = rows(loaded, 'SELECT * FROM sweeps ORDER BY sweep, case_name, rep, "when"')
    intro = (
        "<code>contest sweep</code> results (<code>sweeps/&lt;name&gt;/runs.jsonl</code>): "
        "rows/core/s per case (n correct runs under each box, its spread the box); a case "
        "is better only where its min–max range clears the others'."
    )
    if not data:
        return section("sweeps", "Sweeps", intro, empty("No sweeps yet: sweeps/ holds none."))
    parts: list[str] = []
    for sweep in sorted({r["sweep"] for r in data}):
        at = [r for r in data if r["sweep"] == sweep]
        cases = list(dict.fromkeys(r["case_name"] for r in at))
        fig = go.Figure()
        for case in cases:
            pts = [
                r for r in at if r["case_name"] == case and r["correct"] and r["rows_per_core_s"]
            ]
            fig.add_trace(
                go.Box(
                    x=[f"{case} (n={len(pts)})"] * len(pts),
                    y=[r["rows_per_core_s"] for r in pts],
                    customdata=[b.key(r) for r in pts],
                    name=case,
                    boxpoints="all",
                    jitter=0.3,
                    pointpos=0,
                    showlegend=False,
                    hovertemplate="%{x}<br>%{y:,.0f} rows/core/s<extra></extra>",
                )
            )
        fig.update_yaxes(title_text="rows/core/s", rangemode="tozero")
        chart = b.figure(f"chart-sweep-{len(parts)}", fig, height=340)

        headers = ["case", "runs", "correct", "median rows/core/s", "min–max"]
        parts.append(
            f"<h3>{esc(sweep)}</h3>"
            + chart
            + table(headers, sweep_rows(b, at, cases), numeric=(1, 2, 3, 4), what="cases")
        )
    return section("sweeps", "Sweeps", intro, "".join(parts))


def faults_section(b: Builder, loaded: Loaded) -> str:
    data = rows(loaded, 'SELECT * FROM faults ORDER BY "when" DESC NULLS LAST, name')
    intro = (
        "<code>contest bench faults</code> (<code>faults.jsonl</code>): each experiment "
        "breaks a run on purpose and checks that nothing committed is lost and nothing "
        "half-done is visible."
    )
    if not data:
        return section("faults", "Fault experiments", intro, empty("No fault experiments yet."))
    body = (
        (
            {"data-k": str(b.key(r))},
            [
                esc(r["name"]),
                f'<span class="long">{esc(r["title"])}</span>',
                esc(r["scale"]),
                esc(r["trials"]),
                '<span class="ok">yes</span>' if r["goal_met"] else '<span class="bad">no</span>',
                esc(r["lost"]),
                esc(r["destroyed"]),
                esc(r["half_commits"]),
                esc(r["orphans_left"]),
                esc(r["recovered"]),
                fmt(r["seconds"], "s1"),
                esc(r["commit"]),
                short_time(r["when"]),
            ],
        )
        for r in data
    )
    headers = ["experiment", "what", "scale", "trials", "goal met", "rows lost", "destroyed"]
    headers += ["half commits", "orphans left", "recovered", "seconds", "commit", "when (UTC)"]
    return section(
        "faults",
        "Fault experiments",
        intro,
        table(headers, body, numeric=tuple(range(3, 11)), what="experiments"),
    )


# -- the page ----------------------------------------------------------------------------


def _newest(when: str | None) -> str:
    return f' title="newest record {short_time(when)} UTC"' if when else ""


def filters_html(b: Builder, loaded: Loaded) -> str:
    """One group of checkboxes per dimension, every value ticked; commits newest first."""
    latest: dict[str, str] = {}
    for table_name in ("runs", "sweeps", "faults", "workloads"):
        for commit, when in loaded.con.execute(
            f'SELECT commit, max("when") FROM {table_name} GROUP BY commit'
        ).fetchall():
            latest[commit] = max(latest.get(commit, ""), when or "")
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
    for strategy in sorted(
        {r[0] for r in loaded.con.execute("SELECT DISTINCT strategy FROM runs").fetchall()},
        key=strategy_order,
    ):
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
