"""Synthetic commit histories for replay benchmarks (README, "Metadata: replay in
version order": long histories from streaming ingestion).

N commits, each with one data file and a version 1..N, arriving nearly in version
order (concurrent writers): arrival position = version + a deterministic jitter of
up to `jitter` places. Generated inside PostgreSQL (generate_series), so a million
commits take seconds, and stored as LakeSoul stores them: data_commit_info rows, our
version rows, and a head partition_info version whose snapshot lists every commit
in arrival order.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from meta import catalog
from meta.catalog import TableRef
from meta.commits import NO_PARTITION
from meta.connection import PgConnection, session
from meta.queries import head_partition, insert_partition_version

SCHEMA = pa.schema([("uuid", pa.string()), ("v", pa.int64())])


@dataclass(frozen=True)
class History:
    table: TableRef
    commits: int
    seconds: float


def generate_history(
    conn: PgConnection,
    name: str,
    path: str | Path,
    commits: int,
    seed: int = 1,
    jitter: int = 64,
    unversioned_every: int = 0,
) -> History:
    """Create table `name` with a history of `commits` commits (replacing any)."""
    if commits < 1:
        raise ValueError("commits must be at least 1")
    started = time.perf_counter()
    table = catalog.create_table(conn, name, path, SCHEMA, ["uuid"], 1, replace=True)
    args = {
        "tid": table.table_id,
        "desc": NO_PARTITION,
        "n": commits,
        "seed": str(seed),
        "jitter": max(jitter, 1),
        "path": table.path,
        "every": unversioned_every,
    }
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        # One statement: each commit id is computed once, and the commit rows go in in
        # commit-id order, so three of the four indexes they feed grow in order.
        cur.execute(
            "WITH c AS MATERIALIZED (SELECT g, md5(%(seed)s || ':' || g)::uuid AS cid "
            "FROM generate_series(1, %(n)s) AS g), "
            "d AS (INSERT INTO data_commit_info (table_id, partition_desc, commit_id, "
            "file_ops, commit_op, committed, timestamp) "
            "SELECT %(tid)s, %(desc)s, cid, "
            "ARRAY[ROW(%(path)s || '/part-' || lpad(g::text, 16, '0') || '_0000.parquet', "
            "'add', 1024, 'uuid,v')::data_file_op], 'MergeCommit', true, g "
            "FROM c ORDER BY cid), "
            "v AS (INSERT INTO contest_commit_version (table_id, partition_desc, commit_id, "
            "version) SELECT %(tid)s, %(desc)s, cid, g FROM c "
            "WHERE %(every)s = 0 OR g %% %(every)s <> 0 ORDER BY cid) "
            "INSERT INTO partition_info (table_id, partition_desc, version, commit_op, "
            "timestamp, snapshot, expression) "
            "SELECT %(tid)s, %(desc)s, 0, 'MergeCommit', 0, "
            "array_agg(cid ORDER BY g + abs(hashtext(%(seed)s || '/' || g)) %% %(jitter)s, g), "
            "'' FROM c",
            args,
        )
    with session(conn) as analyze:
        analyze.autocommit = True  # fresh statistics, as autovacuum would give them
        with analyze.cursor() as cur:
            for name in ("data_commit_info", "contest_commit_version", "partition_info"):
                cur.execute(f"ANALYZE {name}")  # fixed names, no input
    return History(table, commits, time.perf_counter() - started)


def head_commit_ids(conn: PgConnection, table: TableRef) -> tuple[int, list[str]]:
    """The head partition version and its snapshot (commit ids in order)."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        head = head_partition(cur, table.table_id, NO_PARTITION)
    return head if head is not None else (-1, [])


def unmerge(conn: PgConnection, table: TableRef, order: list[str]) -> int:
    """Put a history back in arrival order: a new head version whose snapshot is `order`,
    and no merge checkpoint, so the next merge replays every commit again (fault
    experiments merge one history many times). Returns the new head version."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        head = head_partition(cur, table.table_id, NO_PARTITION)
        version = (head[0] if head else -1) + 1
        insert_partition_version(cur, table.table_id, NO_PARTITION, version, "MergeCommit", order)
        cur.execute(
            "DELETE FROM contest_merge_checkpoint WHERE table_id = %s AND partition_desc = %s",
            (table.table_id, NO_PARTITION),
        )
    return version


def reset_history(conn: PgConnection, table_id: str) -> None:
    """Back to the generated history: drop the merged versions and the checkpoint, so
    the next merge replays it from scratch (driver and distributed paths compared)."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute("DELETE FROM partition_info WHERE table_id = %s AND version > 0", (table_id,))
        cur.execute("DELETE FROM contest_merge_checkpoint WHERE table_id = %s", (table_id,))
