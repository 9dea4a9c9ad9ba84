"""The page of `contest bench stream` (streaming.md): the newest sitting's fault
cases and freshness runs beside each peer format's newest, with the boundary, peer and
metadata tables; apart from running the streams (bench.py), so `contest report` rebuilds
it from the records alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from contest.benchmarks.stream.boundary_page import render_boundary
from contest.benchmarks.stream.meta import render_meta
from contest.benchmarks.stream.peers import render_peers, render_per_format, sink_of, who
from contest.infra.noise import BUSY_RULE
from contest.results.streaming import StreamFault, StreamFreshness, StreamRecord, series_key


def render(records: Sequence[StreamRecord]) -> str:
    """The whole page."""
    own = [r for r in records if not is_peer(r)]
    newest = own[-1].sitting if own else None  # a peers-only sitting aside
    # Of each kind, the newest sitting that ran it (a sitting may run some parts only).
    last = {r.kind: r.sitting for r in own}
    rows = [r for r in own if r.sitting == last[r.kind]]
    # Each peer format's newest record of each kind (and feed rate), whichever
    # sitting ran it last.
    peers = sorted((r for r in records if is_peer(r)), key=lambda r: r.sitting or "")
    rows += list({(*series_key(r), sink_of(r)): r for r in peers}.values())
    lines = [
        "# Streaming upserts, exactly once",
        "",
        "`contest bench stream`: `contest stream run` (Spark Structured Streaming, file "
        "source, `foreachBatch`) as a child process over a folder that `contest stream "
        "feed`'s generator fills; each micro-batch one LakeSoul commit with the next "
        "version, (checkpoint query id, batch id, source files) recorded in the commit's "
        "transaction. After each case the merged table is compared with the oracle "
        "(DuckDB) over exactly the files the committed micro-batches consumed. The "
        "newest sitting that ran each part is shown"
        + (f" (the newest: {newest})" if newest else "")
        + _load(rows)
        + ".",
        "",
        "## Faults",
        "",
        "| format | case | trials | files fed / consumed | lost | double commits "
        "| replayed batches skipped | table = oracle |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if not isinstance(r, StreamFault) or r.table_commits is not None:
            continue
        fed = r.files_fed
        lines.append(
            f"| {r.format} | {r.case} | {r.trials} "
            f"| {fed if fed is not None else '-'} / {r.files_consumed} "
            f"| {r.lost_files} | {r.double_commits} | {r.batches_replayed} "
            f"| {'yes' if r.exact else 'NO: ' + '; '.join(r.problems)} |"
        )
    lines += render_boundary(rows) + render_peers(rows) + render_meta(rows)
    lines += [
        "",
        "## Freshness and throughput",
        "",
        "Freshness: a file's landing (its modification time, set when the feed renames "
        "it into the folder) to the first moment the table's head snapshot (where every "
        "read starts) holds its micro-batch, polled every 0.1 s; for a peer format, the "
        "first moment its log (Delta's `_delta_log`, Hudi's timeline, Paimon's "
        "snapshots) holds the commit of the micro-batch that read the file (the k-th "
        "data commit is the k-th micro-batch with files, checked: as many commits as "
        "micro-batches). Throughput: rows per "
        "core per second of the micro-batches' own work (write + commit), and rows per "
        "second from the first landing to the last visible. A warm-up file first (the "
        "first micro-batch of a JVM starts Spark's Python workers), not measured. "
        "The machine is shared by "
        "several engineers: timings are indicative only. Noise: other work's share of "
        "the CPUs, mean / highest 2 s, over the interval named (the row's own part; in "
        "rows stamped before parts were, the whole sitting), `-`: not measured; no "
        "freshness run records the noise of its own jobs, so no row is judged busy (the "
        f"one rule: {BUSY_RULE}).",
        "",
        "| format (, sink) | sitting | feed (files/s × rows) | files | micro-batches "
        "| freshness p50 s | p99 s | max s | rows/s | rows/core/s (batch work) | cores "
        "| noise | exact |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if not isinstance(r, StreamFreshness):
            continue
        label = who(r) if is_peer(r) else r.format
        lines.append(
            f"| {label} | {r.sitting or '-'} | {r.rate_files_s:g} × {r.rows_per_file:,} "
            f"| {r.files} | {r.micro_batches} | {r.freshness_p50_s} "
            f"| {r.freshness_p99_s} | {r.freshness_max_s} | {_or_dash(r.rows_per_s)} "
            f"| {_or_dash(r.rows_per_core_s)} | {r.cores} "
            f"| {r.stamp.summary() if r.stamp else '-'} | {'yes' if r.exact else 'NO'} |"
        )
    lines += render_per_format()
    return "\n".join(lines)


def _or_dash(value: object) -> str:
    """A figure, or "-" where the format gives none (Paimon's own sink times no batch)."""
    return "-" if value is None else str(value)


def is_peer(r: StreamRecord) -> bool:
    """A record of a peer format's stream (not the harness's LakeSoul sink)."""
    return not r.format.startswith("lakesoul")


def _load(rows: Sequence[StreamRecord]) -> str:
    """The sitting's load label (1-minute load average at its start and end; 2 cores)."""
    first = rows[0] if rows else None
    if first is None or first.load_1m_start is None or first.load_1m_end is None:
        return ""
    return (
        f"; load average {first.load_1m_start:.1f} at its start, "
        f"{first.load_1m_end:.1f} at its end, on 2 cores shared with other engineers"
    )
