"""A long stream's metadata cost, commit only: `meta.stream.commit_batch` called once per
micro-batch against the configured PostgreSQL (no Spark, no data files: each commit
names one small file), as `contest bench stream` part "metadata".

Each micro-batch's commit is one transaction: the (query id, batch id) row and its
source-file check, the next version, data_commit_info, the commit's version and a new
partition_info version whose snapshot is the head's plus this commit. The snapshot is
appended in PostgreSQL (`snapshot || commit id`), never read into the client and sent
back, so what a commit ships does not grow with the micro-batches before it; PostgreSQL
still stores each version's whole snapshot (LakeSoul's format: every partition version
lists its live commits), 16 bytes a commit. Reported: per-commit seconds over the first
and the last window of commits, their ratio, and the bytes of the head snapshot.
"""

from __future__ import annotations

import statistics
import time
import uuid as uuidlib
from collections.abc import Sequence
from typing import Any

from contest.config import Config
from contest.data.batches import SCHEMA
from contest.results.streaming import StreamMetadata, StreamRecord
from contest.sitting import Row, Say
from meta import catalog
from meta.commits import DataFile
from meta.connection import connect
from meta.stream import commit_batch
from meta.synthetic import generate_history

# Commits a window holds (the first and the last are compared).
WINDOW = 100


def commit_cost(conn: Any, cfg: Config, batches: int, history: int = 0, say: Say = print) -> Row:
    """`batches` micro-batch commits of one query into a new table; their timings.
    `history`: commits the table holds before the stream (a synthetic history made
    inside PostgreSQL, meta/synthetic.py), to show a commit's cost does not follow it."""
    name = f"bench_stream_meta_{uuidlib.uuid4().hex[:8]}"
    where = str(cfg.work_path.absolute() / "bench" / "stream-meta" / name)
    if history:
        table = generate_history(conn, name, where, history).table
    else:
        table = catalog.create_table(conn, name, where, SCHEMA, ["uuid"], 1)
    query = str(uuidlib.uuid4())
    seconds: list[float] = []
    try:
        for b in range(batches):
            f = _file(table.path, b)
            t0 = time.perf_counter()
            commit_batch(
                conn, table, [f], query_id=query, batch_id=b, source_files=[f"/feed/{b:06d}"]
            )
            seconds.append(time.perf_counter() - t0)
        snapshot_bytes = _snapshot_bytes(conn, table.table_id)
    finally:
        catalog.drop_table(conn, name, table.namespace)
    window = min(WINDOW, max(1, batches // 2))
    first = statistics.median(seconds[:window]) * 1000
    last = statistics.median(seconds[-window:]) * 1000
    say(
        f"metadata: {batches} micro-batch commits after {history:,}, median "
        f"{first:.2f} ms over the first {window}, {last:.2f} ms over the last {window} "
        f"(x{last / first:.2f}); head snapshot {snapshot_bytes:,} bytes"
    )
    return {
        "micro_batches": batches,
        "history_commits": history,
        "window": window,
        "commit_ms_first": round(first, 3),
        "commit_ms_last": round(last, 3),
        "last_over_first": round(last / first, 3),
        "commit_ms_p99": round(_p99(seconds) * 1000, 3),
        "head_snapshot_bytes": snapshot_bytes,
        "exact": True,
    }


def _file(table_path: str, b: int):
    return DataFile(f"{table_path}/part-{b:08d}_0000.parquet", 1, tuple(SCHEMA.names), 0, 1)


def _snapshot_bytes(conn: Any, table_id: str) -> int:
    pgc = connect(conn)
    try:
        with pgc, pgc.cursor() as cur:
            cur.execute(
                "SELECT pg_column_size(snapshot) FROM partition_info WHERE table_id = %s "
                "ORDER BY version DESC LIMIT 1",
                (table_id,),
            )
            row = cur.fetchone()
    finally:
        pgc.close()
    return int(row[0]) if row else 0


def _p99(values: list[float]) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[98]


def render_meta(rows: Sequence[StreamRecord]) -> list[str]:
    """The metadata-cost table (empty when that part did not run)."""
    meta = [r for r in rows if isinstance(r, StreamMetadata)]
    if not meta:
        return []
    lines = [
        "",
        "## Metadata cost of a long stream (commit only)",
        "",
        "`meta.stream.commit_batch` once per micro-batch against the embedded PostgreSQL, "
        "no Spark: the (query id, batch id) row, the next version, the commit and a new "
        "partition version whose snapshot PostgreSQL appends the commit to (the client "
        "never reads the snapshot). Median per-commit time over the first and the last "
        "window of commits; a synthetic history before the stream shows what the head "
        "snapshot's length costs (PostgreSQL still stores each version's whole snapshot, "
        "LakeSoul's format: 16 bytes a commit). Shared machine: indicative.",
        "",
        "| commits before | micro-batches | first window ms | last window ms | last / first "
        "| p99 ms | head snapshot bytes |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in meta:
        lines.append(
            f"| {r.history_commits:,} | {r.micro_batches or 0:,} "
            f"| {r.commit_ms_first} | {r.commit_ms_last} | {r.last_over_first} "
            f"| {r.commit_ms_p99} | {r.head_snapshot_bytes:,} |"
        )
    return lines
