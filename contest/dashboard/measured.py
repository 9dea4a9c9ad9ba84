"""The dashboard's sections for the workloads, streaming and the benchmarks apart from
the score (page.py has the runs, the comparison, scale, sweeps and faults).

A line joins points of one series only: one sitting (a workload run, a stream
sitting, a benchmark invocation) at one scale; two sittings or two scales are two
series, never one line. Every chart says its n, and where n > 1 its spread (error bars
min–max, or a box).
"""

from __future__ import annotations

from collections.abc import Iterable

import plotly.graph_objects as go

from contest.dashboard.blocks import (
    PALETTE,
    Builder,
    Row,
    empty,
    esc,
    fmt,
    rows,
    scale_order,
    section,
    short_time,
    strategy_order,
    table,
)
from contest.dashboard.load import Loaded


def _yes(v: bool | None) -> str:
    if v is None:
        return "—"
    return '<span class="ok">yes</span>' if v else '<span class="bad">NO</span>'


def _load(start: float | None, end: float | None) -> str:
    if start is None:
        return "—"
    return f"{start:.1f} → {end:.1f}" if end is not None else f"{start:.1f}"


def _body(b: Builder, data: list[Row], cells) -> Iterable[tuple[dict[str, str], list[str]]]:
    return (({"data-k": str(b.key(r))}, cells(r)) for r in data)


# -- workloads ---------------------------------------------------------------------------


def workloads_section(b: Builder, loaded: Loaded) -> str:
    data = rows(loaded, "SELECT * FROM workloads ORDER BY workload, scale, origin, seq")
    intro = (
        "Longevity runs (<code>workloads/&lt;workload&gt;.jsonl</code>): the time of each "
        "read against the batches applied before it, one chart per workload and scale, "
        "one line per strategy and run (a run is one sitting: two runs are two lines, "
        "never one); triangles on the axis mark compactions. Each point is one read "
        "(n=1): the spread is the line's own wobble, the load after each phase is in "
        "the table."
    )
    if not data:
        return section(
            "workloads",
            "Workload longevity",
            intro,
            empty(
                "No workload longevity results yet: <code>workloads/*.jsonl</code> holds "
                "none in this results folder."
            ),
        )
    parts: list[str] = []
    groups = sorted(
        {(r["workload"], r["scale"]) for r in data}, key=lambda g: (g[0], scale_order(g[1]))
    )
    for workload, scale in groups:
        at = [r for r in data if r["workload"] == workload and r["scale"] == scale]
        fig = go.Figure()
        for strategy in sorted({r["strategy"] for r in at}, key=strategy_order):
            runs = list(dict.fromkeys(r["run_id"] for r in at if r["strategy"] == strategy))
            for i, run in enumerate(runs):
                mine = [r for r in at if r["strategy"] == strategy and r["run_id"] == run]
                reads = [
                    r for r in mine if "read" in r["phase"].lower() and r["seconds"] is not None
                ]
                label = strategy if len(runs) == 1 else f"{strategy} · run {run}"
                if reads:
                    fig.add_trace(
                        go.Scatter(
                            x=[r["batches_applied"] for r in reads],
                            y=[r["seconds"] for r in reads],
                            customdata=[b.key(r) for r in reads],
                            text=[f"{r['phase']} · run {run}" for r in reads],
                            mode="lines+markers",
                            name=label,
                            legendgroup=label,
                            marker={"color": b.colour(strategy), "size": 7},
                            line={
                                "color": b.colour(strategy),
                                "dash": "solid" if i == 0 else "dot",
                            },
                            hovertemplate="%{text} after %{x} batches: %{y:.2f} s<extra></extra>",
                        )
                    )
                # A compaction is an event on the batch axis, not a read time: marked on
                # the axis, its own seconds in the hover text.
                compactions = [
                    r
                    for r in mine
                    if "compact" in r["phase"].lower() and "skipped" not in r["phase"]
                ]
                if compactions:
                    fig.add_trace(
                        go.Scatter(
                            x=[r["batches_applied"] for r in compactions],
                            y=[0] * len(compactions),
                            customdata=[b.key(r) for r in compactions],
                            text=[fmt(r["seconds"], "s1") for r in compactions],
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
        body = _body(
            b,
            at,
            lambda r: [
                esc(r["seq"]),
                esc(r["phase"]),
                esc(r["strategy"]),
                esc(r["run_id"]),
                esc(r["scale"]),
                fmt(r["batches_applied"], "int"),
                f"{r['seconds']:.2f}" if r["seconds"] is not None else "—",
                esc(r["correct"]),
                fmt(r["files_per_bucket"], "s1"),
                fmt(r["load1"], "s1"),
                esc(r["commit"]),
            ],
        )
        headers = ["#", "phase", "strategy", "run", "scale", "batches applied", "seconds"]
        headers += ["correct", "files/bucket", "load", "commit"]
        parts.append(
            f'<h3 data-workload="{esc(workload)}" data-scale="{esc(scale)}">'
            f"{esc(workload)} · scale {esc(scale)}</h3>"
            + chart
            + table(headers, body, numeric=(0, 5, 6, 8, 9), what="phases")
        )
    return section("workloads", "Workload longevity", intro, "".join(parts))


# -- streaming ---------------------------------------------------------------------------


def streaming_section(b: Builder, loaded: Loaded) -> str:
    faults = rows(loaded, "SELECT * FROM stream_faults ORDER BY sitting, format")
    fresh = rows(loaded, "SELECT * FROM stream_freshness ORDER BY sitting, format, rate_files_s")
    meta = rows(loaded, "SELECT * FROM stream_metadata ORDER BY sitting")
    intro = (
        "<code>contest bench stream</code> (<code>streaming.jsonl</code>): kill trials and "
        "replays (nothing lost, nothing counted twice), freshness (a file's landing to its "
        "rows visible) and throughput at each feed rate, and the cost of a micro-batch "
        "commit as the history grows; each row with its sitting and the load around it."
    )
    if not (faults or fresh or meta):
        return section("streaming", "Streaming", intro, empty("No streaming results yet."))
    parts = []
    if faults:
        body = _body(
            b,
            faults,
            lambda r: [
                esc(r["format"]),
                f'<span class="long">{esc(r["case_name"])}</span>',
                short_time(r["sitting"]),
                esc(r["trials"]),
                f"{esc(r['files_fed'])} / {esc(r['files_consumed'])}",
                esc(r["lost_files"]),
                esc(r["double_commits"]),
                esc(r["batches_replayed"]),
                esc(r["table_commits"]),
                esc(r["double_keys"]),
                esc(r["lost_keys"]),
                _yes(r["exact"]),
                _load(r["load_start"], r["load_end"]),
            ],
        )
        headers = ["format", "case", "sitting", "trials", "files fed / consumed", "lost"]
        headers += ["double commits", "replays skipped", "table commits", "keys twice"]
        headers += ["keys lost", "exact", "load"]
        parts.append(
            '<h3 id="stream-faults">Kill trials and replays</h3>'
            + table(headers, body, numeric=(3, 5, 6, 7, 8, 9, 10), what="trials")
        )
    if fresh:
        fig = go.Figure()
        series = list(dict.fromkeys((r["format"], r["sitting"]) for r in fresh))
        for i, (fmt_name, sitting) in enumerate(series):
            pts = [r for r in fresh if r["format"] == fmt_name and r["sitting"] == sitting]
            colour = PALETTE[i % len(PALETTE)]
            fig.add_trace(
                go.Scatter(
                    x=[r["rate_files_s"] for r in pts],
                    y=[r["p50_s"] for r in pts],
                    customdata=[b.key(r) for r in pts],
                    # The spread of each point's n files: p50 up to p99 (whisker).
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": [r["p99_s"] - r["p50_s"] for r in pts],
                        "arrayminus": [0] * len(pts),
                    },
                    text=[f"n={r['files']} files, p99 {r['p99_s']:.2f} s" for r in pts],
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
        body = _body(
            b,
            fresh,
            lambda r: [
                esc(r["format"]),
                short_time(r["sitting"]),
                f"{r['rate_files_s']:g} × {fmt(r['rows_per_file'], 'int')}",
                esc(r["files"]),
                esc(r["micro_batches"]),
                f"{r['p50_s']:.2f}",
                f"{r['p99_s']:.2f}",
                f"{r['max_s']:.2f}" if r["max_s"] is not None else "—",
                fmt(r["rows_per_s"], "int"),
                fmt(r["rows_per_core_s"], "int"),
                _yes(r["exact"]),
                _load(r["load_start"], r["load_end"]),
            ],
        )
        headers = ["format", "sitting", "feed (files/s × rows)", "files (n)", "micro-batches"]
        headers += ["p50 s", "p99 s", "max s", "rows/s", "rows/core/s", "exact", "load"]
        parts.append(
            '<h3 id="stream-freshness">Freshness and throughput</h3>'
            + chart
            + table(headers, body, numeric=tuple(range(3, 10)), what="rates")
        )
    if meta:
        body = _body(
            b,
            meta,
            lambda r: [
                esc(r["format"]),
                short_time(r["sitting"]),
                fmt(r["history_commits"], "int"),
                fmt(r["micro_batches"], "int"),
                f"{r['commit_ms_first']:.3f}",
                f"{r['commit_ms_last']:.3f}",
                f"{r['commit_ms_p99']:.3f}",
                fmt(r["head_snapshot_bytes"], "int"),
            ],
        )
        headers = ["format", "sitting", "commits before", "micro-batches", "first window ms"]
        headers += ["last window ms", "p99 ms", "head snapshot bytes"]
        parts.append(
            '<h3 id="stream-metadata">Metadata cost of a long stream</h3>'
            + table(headers, body, numeric=tuple(range(2, 8)), what="measurements")
        )
    return section("streaming", "Streaming", intro, "".join(parts))


# -- the other benchmarks ----------------------------------------------------------------


def _bars(b: Builder, fig_id: str, data: list[Row], x: str, series: str, y: str,
          low: str, high: str, n: str, ytitle: str) -> str:  # fmt: skip
    """Medians as bars, one series per sitting, whiskers min–max, n in the hover."""
    fig = go.Figure()
    for i, s in enumerate(dict.fromkeys(r[series] for r in data)):
        pts = [r for r in data if r[series] == s]
        fig.add_trace(
            go.Bar(
                x=[r[x] for r in pts],
                y=[r[y] for r in pts],
                customdata=[b.key(r) for r in pts],
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [r[high] - r[y] for r in pts],
                    "arrayminus": [r[y] - r[low] for r in pts],
                },
                text=[f"n={r[n]}" for r in pts],
                textposition="outside",
                name=f"sitting {short_time(str(s))}",
                marker={"color": PALETTE[i % len(PALETTE)]},
                hovertemplate="%{x}: median %{y:.3f} (%{text}, whisker min–max)<extra></extra>",
            )
        )
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text=ytitle, rangemode="tozero")
    return b.figure(fig_id, fig, height=380)


def benchmarks_section(b: Builder, loaded: Loaded) -> str:
    intro = (
        "Everything else <code>contest bench</code> measured, one part per results file: "
        "medians with their min–max and n, one series per sitting."
    )
    parts = []
    read = rows(loaded, "SELECT * FROM read_bench ORDER BY sitting, median_s")
    if read:
        chart = _bars(b, "chart-read-bench", read, "variant", "sitting", "median_s", "min_s",
                      "max_s", "repeat", "read seconds (median)")  # fmt: skip
        body = _body(
            b,
            read,
            lambda r: [
                short_time(r["sitting"]),
                esc(r["variant"]),
                fmt(r["rows"], "int"),
                esc(r["repeat"]),
                f"{r['median_s']:.3f}",
                f"{r['min_s']:.3f}–{r['max_s']:.3f}",
                f"{r['vs_default']:.3f}×",
            ],
        )
        headers = ["sitting", "variant", "rows", "n", "median s", "min–max s", "vs default"]
        parts.append(
            '<h3 id="bench-read">Read variants (<code>read_bench.jsonl</code>)</h3>'
            + chart
            + table(headers, body, numeric=(2, 3, 4, 5, 6), what="variants")
        )
    comp = rows(loaded, 'SELECT * FROM compact ORDER BY "when"')
    if comp:
        body = _body(
            b,
            comp,
            lambda r: [
                short_time(r["when"]),
                esc(r["scale"]),
                fmt(r["rows"], "int"),
                esc(r["repeat"]),
                f"{r['files_per_bucket_before']:g} → {r['files_per_bucket_after']:g}",
                f"{r['median_before_s']:.2f} [{r['min_before_s']:.2f}–{r['max_before_s']:.2f}]",
                f"{r['median_after_s']:.2f} [{r['min_after_s']:.2f}–{r['max_after_s']:.2f}]",
                f"{r['speedup']:.2f}×",
            ],
        )
        headers = ["when (UTC)", "scale", "rows", "n", "files/bucket", "read s before [min–max]"]
        headers += ["read s after [min–max]", "speed-up"]
        parts.append(
            '<h3 id="bench-compact">Compaction (<code>compact.jsonl</code>)</h3>'
            + table(headers, body, numeric=(2, 3, 5, 6, 7), what="sittings")
        )
    duck = rows(loaded, "SELECT * FROM duckdb")
    if duck:
        fig = go.Figure()
        sittings = list(dict.fromkeys(r["sitting"] for r in duck))
        for engine in dict.fromkeys(r["engine"] for r in duck):  # optimized, duckdb, floor
            pts = [r for r in duck if r["engine"] == engine]
            n = {s: sum(1 for q in pts if q["sitting"] == s) for s in sittings}
            fig.add_trace(
                go.Box(
                    x=[f"{short_time(r['sitting'])} (n={n[r['sitting']]})" for r in pts],
                    y=[r["seconds"] for r in pts],
                    customdata=[b.key(r) for r in pts],
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
        chart = b.figure("chart-duckdb", fig, height=380)
        body = _body(
            b,
            duck,
            lambda r: [
                short_time(r["sitting"]),
                esc(r["engine"]),
                esc(r["round"]),
                fmt(r["seconds"], "s1"),
                _yes(r["correct"]),
                f"{r['peak_rss_bytes'] / 1e9:.2f}" if r["peak_rss_bytes"] else "—",
            ],
        )
        headers = ["sitting", "engine", "round", "seconds", "correct", "peak RSS GB"]
        parts.append(
            '<h3 id="bench-duckdb">DuckDB against optimized (<code>duckdb.jsonl</code>)</h3>'
            + chart
            + table(headers, body, numeric=(2, 3, 5), what="rounds")
        )
    cp = rows(loaded, "SELECT * FROM commit_paths ORDER BY sitting, path, round")
    if cp:
        body = _body(
            b,
            cp,
            lambda r: [
                short_time(r["sitting"]),
                esc(r["path"]),
                esc(r["round"]),
                esc(r["writers"]),
                f"{r['commits_per_s']:.1f}",
                esc(r["retries"]),
                esc(r["lost"]),
            ],
        )
        headers = ["sitting", "path", "round", "writers", "commits/s", "retries", "lost"]
        parts.append(
            '<h3 id="bench-commits">Commit paths (<code>commit_paths.jsonl</code>)</h3>'
            + table(headers, body, numeric=(2, 3, 4, 5, 6), what="rounds")
        )
    mr = rows(loaded, "SELECT * FROM meta_replay ORDER BY sitting, commits")
    if mr:
        body = _body(
            b,
            mr,
            lambda r: [
                short_time(r["sitting"]),
                fmt(r["commits"], "int"),
                f"{r['driver_s']:.3f}",
                f"{r['distributed_s']:.3f}",
                _yes(r["identical"]),
            ],
        )
        headers = ["sitting", "commits", "driver s (n=1)", "distributed s (n=1)", "identical"]
        parts.append(
            '<h3 id="bench-replay">Metadata replay (<code>meta_replay.jsonl</code>)</h3>'
            + table(headers, body, numeric=(1, 2, 3), what="histories")
        )
    nm = rows(loaded, "SELECT * FROM native_merge")
    if nm:
        body = _body(
            b,
            nm,
            lambda r: [
                esc(r["bench"]),
                esc(r["variant"]),
                esc(r["rounds"]),
                f"{r['median_s']:.4f}",
                f"{r['ratio']:.3f}",
                _yes(r["exact"]),
                fmt(r["load1"], "s1"),
            ],
        )
        headers = ["microbenchmark", "variant", "n", "median s", "ratio", "exact", "load"]
        parts.append(
            '<h3 id="bench-native">Native merge (<code>native_merge.jsonl</code>)</h3>'
            + table(headers, body, numeric=(2, 3, 4, 6), what="variants")
        )
    if not parts:
        return section("benchmarks", "Benchmarks", intro, empty("No benchmark results yet."))
    return section("benchmarks", "Benchmarks", intro, "".join(parts))
