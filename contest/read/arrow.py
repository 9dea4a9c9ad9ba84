"""A table merged in this process (pyarrow, no Spark): for tables that fit in memory.

What `contest.api`'s `read_arrow` returns and what the streaming benchmark checks
while a stream runs: the same checks and commits as `contest read` (checked_commits,
one head snapshot), the same per-bucket merge, sorted by key."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from contest.config import Config
from contest.read.files import BucketMerge, MergeTuning, files_by_bucket
from contest.read.job import ReadRequest, change_span, checked_commits
from meta.catalog import TableRef
from meta.connection import PgConnection


def read_merged(
    conn: PgConnection, cfg: Config, table: TableRef, request: ReadRequest | None = None
) -> pa.Table:
    """The table merged by primary key with its operators, sorted by key."""
    request = request or ReadRequest(out_dir="")
    commits, _, ops, _ = checked_commits(conn, cfg, table, request)
    keys = list(table.primary_keys)
    # The read's own merge of a bucket (change data too: contest/read/changes.py).
    span = change_span(cfg, table, request.versions)
    merge = BucketMerge.of(table, commits, ops, MergeTuning(method=cfg.read.merge), span)
    parts = [piece for files in files_by_bucket(commits).values() for piece in merge(files)]
    merged = pa.concat_tables(parts) if parts else merge.result.empty_table()
    order = pc.sort_indices(merged, sort_keys=[(k, "ascending") for k in keys])
    return merged.take(order)
