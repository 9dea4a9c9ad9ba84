"""The dashboard's sections for the workloads, streaming and the benchmarks apart from
the score, and the fault experiments (scores.py has the runs, the comparison, scale and
sweeps).

A line joins points of one series only: one sitting (a workload run, a stream
sitting, a benchmark invocation) at one scale; two sittings or two scales are two
series, never one line. Every chart says its n, and where n > 1 its spread (error bars
min–max, or a box).
"""

from __future__ import annotations

import plotly.graph_objects as go

from contest.dashboard.blocks import (
    PALETTE,
    Builder,
    esc,
    fmt,
    scale_order,
    section,
    short_time,
    strategy_order,
    when_desc,
)
from contest.dashboard.load import Item, Loaded
from contest.dashboard.records import bars, record_table
from contest.results import registry
from contest.results.benchmarks import DuckDBRecord, FaultRecord
from contest.results.streaming import StreamFreshness
from contest.results.workloads import PhaseRecord

# The tables the sections before Benchmarks show; every other table is a part of it.
OWN_SECTIONS = {
    "runs",
    "scale",
    "sweeps",
    "faults",
    "workloads",
    "stream_faults",
    "stream_freshness",
    "stream_metadata",
}
# The anchors links point at, kept from before the parts were drawn from the records.
ANCHORS = {
    "read_bench": "bench-read",
    "commit_paths": "bench-commits",
    "meta_replay": "bench-replay",
    "native_merge": "bench-native",
}


# -- workloads ---------------------------------------------------------------------------


def phase(i: Item) -> PhaseRecord:
    assert isinstance(i.row, PhaseRecord)
    return i.row


def workloads_section(b: Builder, loaded: Loaded) -> str:
    data = sorted(
        loaded.table("workloads"),
        key=lambda i: (phase(i).workload, i.labels.scale, i.origin, i.seq),
    )
    intro = (
        "Longevity runs (<code>workloads/&lt;workload&gt;.jsonl</code>): the time of each "
        "read against the batches applied before it, one chart per workload and scale, "
        "one line per strategy and run (a run is one sitting: two runs are two lines, "
        "never one); triangles on the axis mark compactions. Each point is one read "
        "(n=1): the spread is the line's own wobble, the load after each phase is in "
        "the table."
    )
    parts: list[str] = []
    groups = sorted(
        {(phase(i).workload, i.labels.scale) for i in data},
        key=lambda g: (g[0], scale_order(g[1])),
    )
    for workload, scale in groups:
        at = [i for i in data if phase(i).workload == workload and i.labels.scale == scale]
        fig = go.Figure()
        # A line per lane: a strategy, and its maintenance policy where the run had one
        # (two policies of one strategy are two tables, two curves), in its colour.
        lanes = sorted(
            {(i.labels.strategy, phase(i).lane) for i in at},
            key=lambda sl: (strategy_order(sl[0]), sl[1]),
        )
        for strategy, lane in lanes:
            runs = list(dict.fromkeys(phase(i).run_id for i in at if phase(i).lane == lane))
            for n, run in enumerate(runs):
                mine = [i for i in at if phase(i).lane == lane and phase(i).run_id == run]
                reads = [
                    i
                    for i in mine
                    if "read" in phase(i).phase_text.lower() and phase(i).seconds is not None
                ]
                label = lane if len(runs) == 1 else f"{lane} · run {run}"
                if reads:
                    fig.add_trace(
                        go.Scatter(
                            x=[phase(i).batches_applied for i in reads],
                            y=[phase(i).seconds for i in reads],
                            customdata=[b.key(i) for i in reads],
                            text=[f"{phase(i).phase_text} · run {run}" for i in reads],
                            mode="lines+markers",
                            name=label,
                            legendgroup=label,
                            marker={"color": b.colour(strategy), "size": 7},
                            line={
                                "color": b.colour(strategy),
                                "dash": "solid" if n == 0 else "dot",
                            },
                            hovertemplate="%{text} after %{x} batches: %{y:.2f} s<extra></extra>",
                        )
                    )
                # A compaction is an event on the batch axis, not a read time: marked on
                # the axis, its own seconds in the hover text.
                compactions = [
                    i
                    for i in mine
                    if "compact" in phase(i).phase_text.lower()
                    and "skipped" not in phase(i).phase_text
                ]
                if compactions:
                    fig.add_trace(
                        go.Scatter(
                            x=[phase(i).batches_applied for i in compactions],
                            y=[0] * len(compactions),
                            customdata=[b.key(i) for i in compactions],
                            text=[fmt(phase(i).seconds, "s1") for i in compactions],
                            mode="markers",
                            name=f"{label} compaction",
                            legendgroup=label,
                            showlegend=False,
                            cliponaxis=False,
                            marker={
                                "color": b.colour(strategy),
                                "symbol": "triangle-up",
                                "size": 12,
                            },
                            hovertemplate="compaction after %{x} batches (%{text} s)"
                            "<extra></extra>",
                        )
                    )
        fig.update_xaxes(title_text="batches applied")
        fig.update_yaxes(title_text="read seconds (n=1 a point)", rangemode="tozero")
        chart = b.figure(f"chart-workload-{len(parts)}", fig, height=380)
        lead = [("#", lambda i: esc(i.seq), True)]
        parts.append(
            f'<h3 data-workload="{esc(workload)}" data-scale="{esc(scale)}">'
            f"{esc(workload)} · scale {esc(scale)}</h3>"
            + chart
            + record_table(b, at, lead, what="phases")
        )
    none = (
        "No workload longevity results yet: <code>workloads/*.jsonl</code> holds none in "
        "this results folder."
    )
    return section("workloads", "Workload longevity", intro, "".join(parts), none)


# -- streaming ---------------------------------------------------------------------------


def fresh(i: Item) -> StreamFreshness:
    assert isinstance(i.row, StreamFreshness)
    return i.row


def streaming_section(b: Builder, loaded: Loaded) -> str:
    # Every streaming row has a sitting and a format (StreamRecord).
    def by_sitting(i: Item) -> tuple[str, str]:
        return i.row.sitting_text, i.row.format

    faults = sorted(loaded.table("stream_faults"), key=by_sitting)
    freshness = sorted(
        loaded.table("stream_freshness"), key=lambda i: (*by_sitting(i), fresh(i).rate_files_s)
    )
    meta = sorted(loaded.table("stream_metadata"), key=lambda i: by_sitting(i)[0])
    intro = (
        "<code>contest bench stream</code> (<code>streaming.jsonl</code>): kill trials and "
        "replays (nothing lost, nothing counted twice), freshness (a file's landing to its "
        "rows visible) and throughput at each feed rate, and the cost of a micro-batch "
        "commit as the history grows; each row with its sitting and the load around it."
    )
    parts = []
    if faults:
        parts.append(
            '<h3 id="stream-faults">Kill trials and replays</h3>'
            + record_table(b, faults, what="trials")
        )
    if freshness:
        fig = go.Figure()
        series = list(dict.fromkeys(by_sitting(i)[::-1] for i in freshness))
        for n, (fmt_name, sitting) in enumerate(series):
            pts = [i for i in freshness if by_sitting(i) == (sitting, fmt_name)]
            colour = PALETTE[n % len(PALETTE)]
            fig.add_trace(
                go.Scatter(
                    x=[fresh(i).rate_files_s for i in pts],
                    y=[fresh(i).freshness_p50_s for i in pts],
                    customdata=[b.key(i) for i in pts],
                    # The spread of each point's n files: p50 up to p99 (whisker).
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": [fresh(i).freshness_p99_s - fresh(i).freshness_p50_s for i in pts],
                        "arrayminus": [0] * len(pts),
                    },
                    text=[
                        f"n={fresh(i).files} files, p99 {fresh(i).freshness_p99_s:.2f} s"
                        for i in pts
                    ],
                    mode="lines+markers",
                    name=f"{fmt_name} · {short_time(sitting)}",
                    marker={"color": colour, "size": 8},
                    line={"color": colour},
                    hovertemplate="%{x} files/s: p50 %{y:.2f} s (%{text})<extra></extra>",
                )
            )
        fig.update_xaxes(title_text="feed rate (files/s)")
        fig.update_yaxes(title_text="freshness p50 s (whisker to p99)", rangemode="tozero")
        chart = b.figure("chart-stream-freshness", fig, height=380)
        parts.append(
            '<h3 id="stream-freshness">Freshness and throughput</h3>'
            + chart
            + record_table(b, freshness, what="rates")
        )
    if meta:
        parts.append(
            '<h3 id="stream-metadata">Metadata cost of a long stream</h3>'
            + record_table(b, meta, what="measurements")
        )
    return section("streaming", "Streaming", intro, "".join(parts), "No streaming results yet.")


# -- fault experiments -----------------------------------------------------------------


def fault(i: Item) -> FaultRecord:
    assert isinstance(i.row, FaultRecord)
    return i.row


def faults_section(b: Builder, loaded: Loaded) -> str:
    data = sorted(loaded.table("faults"), key=lambda i: fault(i).name)
    data = when_desc(data, lambda i: fault(i).when)
    intro = (
        "<code>contest bench faults</code> (<code>faults.jsonl</code>): each experiment "
        "breaks a run on purpose and checks that nothing committed is lost and nothing "
        "half-done is visible."
    )
    table = record_table(b, data, what="experiments") if data else ""
    return section("faults", "Fault experiments", intro, table, "No fault experiments yet.")


# -- the other benchmarks ----------------------------------------------------------------


def duckdb_chart(b: Builder, items: list[Item]) -> str:
    """Each engine's rounds as a box per sitting, every round a point."""
    rounds = [i.row for i in items if isinstance(i.row, DuckDBRecord)]
    keys = [b.key(i) for i in items if isinstance(i.row, DuckDBRecord)]
    fig = go.Figure()
    sittings = list(dict.fromkeys(r.sitting for r in rounds))
    # optimized, duckdb, floor, and each labelled variant (DuckDB at equal memory, ...)
    for engine in dict.fromkeys(r.label for r in rounds):
        pts = [(r, k) for r, k in zip(rounds, keys, strict=True) if r.label == engine]
        n = {s: sum(1 for r, _ in pts if r.sitting == s) for s in sittings}
        fig.add_trace(
            go.Box(
                x=[f"{short_time(r.sitting)} (n={n[r.sitting]})" for r, _ in pts],
                y=[r.seconds for r, _ in pts],
                customdata=[k for _, k in pts],
                name=engine,
                boxpoints="all",
                pointpos=0,
                marker={"color": b.colour(engine)},
                hovertemplate=f"{engine}: %{{y:.1f}} s<extra></extra>",
            )
        )
    fig.update_layout(boxmode="group")
    fig.update_yaxes(title_text="seconds (whole processes)", rangemode="tozero")
    fig.update_xaxes(title_text=f"sitting ({len(sittings)})")
    return b.figure("chart-duckdb", fig, height=380)


def benchmarks_section(b: Builder, loaded: Loaded) -> str:
    """A part per results file no section above shows (every benchmark's, a new one's
    too): its table of the record's declared values and, where it declares one, its
    chart."""
    intro = (
        "Everything else <code>contest bench</code> measured, one part per results file: "
        "medians with their min–max and n, one series per sitting."
    )
    parts = []
    for kind in registry.FILES.values():
        name = kind.shown_in
        items = loaded.table(name)
        if name in OWN_SECTIONS or kind.table or not items:
            continue
        anchor = ANCHORS.get(name, f"bench-{name}")
        chart_id = f"chart-{anchor.removeprefix('bench-')}-bench"
        chart = duckdb_chart(b, items) if name == "duckdb" else bars(b, chart_id, items)
        parts.append(
            f'<h3 id="{esc(anchor)}">{esc(kind.title)} (<code>{esc(kind.pattern)}</code>)</h3>'
            + chart
            + record_table(b, items)
        )
    return section("benchmarks", "Benchmarks", intro, "".join(parts), "No benchmark results yet.")
