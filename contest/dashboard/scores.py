"""The dashboard's sections for the score (rows/core/s and the jobs' seconds): the
evaluation runs, the peer comparison, scale and sweeps. Each is computed here from the
loaded records; page.py puts them on the page beside measured.py's sections."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from contest.dashboard.blocks import (
    PALETTE,
    REFERENCE,
    Builder,
    esc,
    plot_time,
    ratio_text,
    scale_order,
    section,
    short_time,
    strategy_order,
    summary_cell,
    table,
    when_asc,
    when_desc,
)
from contest.dashboard.load import LOCAL, UNKNOWN, Item, Loaded
from contest.dashboard.records import record_table
from contest.infra.noise import BUSY_RULE, NOISE_NOT_RECORDED
from contest.results.benchmarks import ScaleRecord
from contest.results.runs import RunRecord
from contest.results.shown import column

SCORE = column(RunRecord, "score").shown.header
WRITE = column(RunRecord, "write_s").shown.header
READ = column(RunRecord, "read_s").shown.header


def run(i: Item) -> RunRecord:
    """The run an item of the runs or sweeps table is."""
    assert isinstance(i.row, RunRecord)
    return i.row


def runs_section(b: Builder, loaded: Loaded) -> str:
    data = when_desc(sorted(loaded.table("runs"), key=lambda i: i.source), lambda i: run(i).when)
    if not data:
        return section("runs", "Runs", "", "", "No runs yet: runs.jsonl holds none.")
    scales = sorted({i.labels.scale for i in data}, key=scale_order)
    fig = make_subplots(
        rows=len(scales),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08,
        subplot_titles=[f"scale {s}" for s in scales],
    )
    for n, scale in enumerate(scales, start=1):
        at = [i for i in data if i.labels.scale == scale and run(i).score]
        for strategy in sorted({i.labels.strategy for i in at}, key=strategy_order):
            pts = sorted(
                (i for i in at if i.labels.strategy == strategy), key=lambda i: run(i).when or ""
            )
            # A run on a busy machine is an open cross: its timing is suspect; a local
            # (unpublished) run an open circle.
            symbols = [
                "x-open" if run(i).busy else "circle-open" if i.origin == LOCAL else "circle"
                for i in pts
            ]
            fig.add_trace(
                go.Scatter(
                    x=[plot_time(run(i).when or None) for i in pts],
                    y=[run(i).rows_per_core_s for i in pts],
                    customdata=[b.key(i) for i in pts],
                    text=[hover(i) for i in pts],
                    mode="markers",
                    name=f"{strategy} (n={len(pts)})",
                    legendgroup=strategy,
                    showlegend=True,
                    marker={"color": b.colour(strategy), "size": 9, "symbol": symbols},
                    hovertemplate=f"{strategy}<br>%{{y:,.0f}} {SCORE}<br>%{{x}}<br>%{{text}}"
                    "<extra></extra>",
                ),
                row=n,
                col=1,
            )
        fig.update_yaxes(title_text=SCORE, row=n, col=1, rangemode="tozero")
    chart = b.figure("chart-runs", fig, height=max(320, 230 * len(scales)))
    intro = (
        "Every evaluation in <code>runs.jsonl</code> (and the cluster runs under "
        "<code>cluster/</code>), newest first. The chart shows correct runs only, one "
        "panel per scale, over time, n runs per strategy in the legend: a cross marks a run "
        f"on a busy machine ({esc(BUSY_RULE)}: its timing is suspect; a run from before "
        f"the records carried per-job noise says {NOISE_NOT_RECORDED}, not judged), an "
        "open circle a local run not yet published; the table says why and the load "
        "before the write."
    )
    lead = [("source", lambda i: esc(source(i)), False)]
    return section("runs", "Runs", intro, chart + record_table(b, data, lead, what="runs"))


def source(i: Item) -> str:
    """The file a run comes from; a cluster's by its folder."""
    return i.source.removesuffix("/runs.jsonl")


def hover(i: Item) -> str:
    r = run(i)
    return (
        f"{i.labels.commit} · {source(i)} · {i.origin}"
        + (f"<br>busy: {r.busy}" if r.busy else "")
        + (f"<br>load {r.load1:.1f}" if r.load1 is not None else "")
    )


def comparison_section(b: Builder, loaded: Loaded) -> str:
    data = when_asc(
        [
            i
            for i in loaded.table("runs")
            if i.kind == "runs" and run(i).correct and run(i).rows_per_core_s is not None
        ],
        lambda i: run(i).when,
    )
    if not data:
        return section("peers", "Peer comparison", "", "", "No correct runs yet.")
    scales = sorted({i.labels.scale for i in data}, key=scale_order)
    fig = make_subplots(
        rows=1,
        cols=len(scales),
        subplot_titles=[f"scale {s}" for s in scales],
        horizontal_spacing=0.06,
    )
    for n, scale in enumerate(scales, start=1):
        at = [i for i in data if i.labels.scale == scale]
        for strategy in sorted({i.labels.strategy for i in at}, key=strategy_order):
            pts = [i for i in at if i.labels.strategy == strategy]
            fig.add_trace(
                go.Box(
                    x=[f"{strategy} (n={len(pts)})"] * len(pts),
                    y=[run(i).rows_per_core_s for i in pts],
                    customdata=[b.key(i) for i in pts],
                    text=[f"{run(i).when or None} · {i.labels.commit}" for i in pts],
                    name=strategy,
                    legendgroup=strategy,
                    showlegend=False,
                    boxpoints="all",
                    jitter=0.4,
                    pointpos=0,
                    marker={"color": b.colour(strategy), "size": 6},
                    line={"color": b.colour(strategy)},
                    hovertemplate=f"{strategy}<br>%{{y:,.0f}} {SCORE}<br>%{{text}}<extra></extra>",
                ),
                row=1,
                col=n,
            )
        fig.update_yaxes(rangemode="tozero", row=1, col=n)
        fig.update_xaxes(tickangle=-35, row=1, col=n)
    fig.update_yaxes(title_text=SCORE, row=1, col=1)
    chart = b.figure("chart-peers", fig, height=420)

    groups: dict[tuple[str, str], list[RunRecord]] = {}
    keys: dict[int, int] = {}
    for i in data:
        groups.setdefault((i.labels.scale, i.labels.strategy), []).append(run(i))
        keys[id(i.row)] = b.key(i)
    order = sorted(groups, key=lambda g: (scale_order(g[0]), strategy_order(g[1])))

    def body() -> Iterable[tuple[dict[str, str], list[str]]]:
        for scale, strategy in order:
            members = groups[(scale, strategy)]
            ref = [r.rows_per_core_s for r in groups.get((scale, REFERENCE), [])]
            own = [r.rows_per_core_s for r in members]
            cols = [[keys[id(r)], r.rows_per_core_s, r.write_s, r.read_s] for r in members]
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
                    summary_cell("median_s", 2, [r.write_s for r in members]),
                    summary_cell("median_s", 3, [r.read_s for r in members]),
                    ratio_cell(known(ref), known(own)),
                ],
            )

    headers = ["scale", "strategy", "n", f"median {SCORE}", "min–max", f"median {WRITE}"]
    headers += [f"median {READ}", f"{REFERENCE} ×"]
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


def ratio_cell(ref: list[float], own: list[float]) -> str:
    return f'<span data-agg="ratio" data-col="1">{ratio_text(ref, own)}</span>'


def known(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None]


def scale_section(b: Builder, loaded: Loaded) -> str:
    data = sorted(loaded.table("scale"), key=lambda i: (scaled(i).scale, scaled(i).when))
    if not data:
        return section("scale", "Scale", "", "", "No scale runs yet: scale.jsonl holds none.")
    ok = [i for i in data if scaled(i).correct and scaled(i).scale]
    metrics: list[tuple[str, Callable[[ScaleRecord], float | None]]] = [
        (column(ScaleRecord, "rows_per_core_s").shown.header, lambda r: r.rows_per_core_s),
        (column(ScaleRecord, "s_per_million_rows").shown.header, lambda r: r.s_per_million_rows),
    ]
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=[title for title, _ in metrics],
        horizontal_spacing=0.1,
    )
    for col, (_, metric) in enumerate(metrics, start=1):
        # A sitting is a series: scales measured in one invocation are joined, two
        # sittings never (a scale measured twice is two points, not a zigzag).
        sittings = list(dict.fromkeys(scaled(i).series for i in ok))
        for n, sitting in enumerate(sittings):
            pts = sorted(
                (i for i in ok if scaled(i).series == sitting and metric(scaled(i)) is not None),
                key=lambda i: scaled(i).scale,
            )
            fig.add_trace(
                go.Scatter(
                    x=[scaled(i).scale for i in pts],
                    y=[metric(scaled(i)) for i in pts],
                    customdata=[b.key(i) for i in pts],
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
        ticks = sorted({scaled(i).scale for i in ok})
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
    intro = (
        "<code>contest bench scale</code> (<code>scale.jsonl</code>): the optimized "
        "pipeline at growing scales, one line per sitting (one run a scale each); a flat "
        "cost per row means it scales linearly."
    )
    return section("scale", "Scale", intro, chart + record_table(b, data, what="scales"))


def scaled(i: Item) -> ScaleRecord:
    assert isinstance(i.row, ScaleRecord)
    return i.row


def sweep_rows(
    b: Builder, at: list[Item], cases: list[str]
) -> Iterable[tuple[dict[str, str], list[str]]]:
    """One summary row per case: runs, correct runs, median and min–max of those."""
    for case in cases:
        members = [i for i in at if run(i).case_name == case]
        good = [i for i in members if run(i).score is not None]
        values = [run(i).rows_per_core_s for i in good]
        cols = [[b.key(i), run(i).rows_per_core_s if i in good else None] for i in members]
        yield (
            {"data-members": json.dumps(cols)},
            [
                esc(case),
                summary_cell("n", 1, [run(i).rows_per_core_s for i in members]),
                summary_cell("count", 1, values),
                summary_cell("median", 1, values),
                summary_cell("range", 1, values),
            ],
        )


def sweeps_section(b: Builder, loaded: Loaded) -> str:
    data = sorted(
        when_asc(loaded.table("sweeps"), lambda i: run(i).when),
        key=lambda i: (i.part or "", run(i).case_name, run(i).rep is None, run(i).rep or 0),
    )
    intro = (
        "<code>contest sweep</code> results (<code>sweeps/&lt;name&gt;/runs.jsonl</code>): "
        "rows/core/s per case (n correct runs under each box, its spread the box); a case "
        "is better only where its min–max range clears the others'."
    )
    parts: list[str] = []
    for sweep in sorted({i.part or UNKNOWN for i in data}):
        at = [i for i in data if (i.part or UNKNOWN) == sweep]
        cases = list(dict.fromkeys(run(i).case_name for i in at))
        fig = go.Figure()
        for case in cases:
            pts = [i for i in at if run(i).case_name == case and run(i).score]
            fig.add_trace(
                go.Box(
                    x=[f"{case} (n={len(pts)})"] * len(pts),
                    y=[run(i).rows_per_core_s for i in pts],
                    customdata=[b.key(i) for i in pts],
                    name=case,
                    boxpoints="all",
                    jitter=0.3,
                    pointpos=0,
                    showlegend=False,
                    hovertemplate=f"%{{x}}<br>%{{y:,.0f}} {SCORE}<extra></extra>",
                )
            )
        fig.update_yaxes(title_text=SCORE, rangemode="tozero")
        chart = b.figure(f"chart-sweep-{len(parts)}", fig, height=340)

        headers = ["case", "runs", "correct", f"median {SCORE}", "min–max"]
        parts.append(
            f"<h3>{esc(sweep)}</h3>"
            + chart
            + table(headers, sweep_rows(b, at, cases), numeric=(1, 2, 3, 4), what="cases")
        )
    return section("sweeps", "Sweeps", intro, "".join(parts), "No sweeps yet: sweeps/ holds none.")
