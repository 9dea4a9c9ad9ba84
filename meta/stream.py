"""Streaming upserts, exactly once: each micro-batch's commit records (query id, batch id).

Spark's `foreachBatch` sink is exactly-once only when it is idempotent for a repeated
batch id: after a crash between the table commit and the checkpoint's commit log, the
restarted query runs the same batch again. So the commit of a micro-batch writes a
`contest_stream_batch` row (table, the checkpoint's query id, batch id, the source
files it consumed) in the commit's own transaction (`commit_files(in_transaction=)`):
the batch is committed and recorded together or not at all, and a replay finds the row
and commits nothing. A source file another batch of the table consumed (a new
checkpoint over the same folder) is refused in the same transaction: counted twice
otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from meta.catalog import TableRef
from meta.commits import NO_PARTITION, CommitResult, DataFile, commit_files
from meta.connection import PgConnection, session
from meta.errors import CommitError
from meta.queries import head_partition

# Versions taken by another writer between choosing one and committing it are retried.
VERSION_RETRIES = 5

_COLUMNS = "query_id, batch_id, run_id, commit_id::text, version, rows, source_files, committed_at"


@dataclass(frozen=True)
class StreamBatch:
    query_id: str
    batch_id: int
    run_id: str | None
    commit_id: str
    version: int
    rows: int
    source_files: tuple[str, ...]
    committed_at: datetime


class BatchRecorded(CommitError):
    """The micro-batch is committed already (a replay): nothing was committed now."""

    def __init__(self, batch: StreamBatch):
        super().__init__(
            f"batch {batch.batch_id} of query {batch.query_id} is committed already "
            f"(version {batch.version})"
        )
        self.batch = batch


class SourceConsumed(CommitError):
    """A source file that another micro-batch of the table committed already."""


def _batch(row: Sequence[Any]) -> StreamBatch:
    q, b, run, cid, v, rows, files, at = row
    return StreamBatch(str(q), int(b), run, str(cid), int(v), int(rows), tuple(files), at)


def recorded(
    conn: PgConnection, table: TableRef, query_id: str, batch_id: int
) -> StreamBatch | None:
    """The committed micro-batch `batch_id` of `query_id`, or None."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        return _recorded(cur, table.table_id, query_id, batch_id)


def _recorded(cur: Any, table_id: str, query_id: str, batch_id: int) -> StreamBatch | None:
    cur.execute(
        f"SELECT {_COLUMNS} FROM contest_stream_batch WHERE table_id = %s AND query_id = %s "
        "AND batch_id = %s",
        (table_id, query_id, batch_id),
    )
    row = cur.fetchone()
    return None if row is None else _batch(row)


def next_version(conn: PgConnection, table: TableRef, desc: str = NO_PARTITION) -> int:
    """The version after every one the table has committed or planned: a micro-batch
    committed with it applies after every earlier one (and after a bulk write's)."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT greatest((SELECT max(version) FROM contest_commit_version "
            "WHERE table_id = %(t)s AND partition_desc = %(d)s), "
            "(SELECT max(version) FROM contest_expected_version "
            "WHERE table_id = %(t)s AND partition_desc = %(d)s))",
            {"t": table.table_id, "d": desc},
        )
        top = cur.fetchone()[0]
    return 0 if top is None else int(top) + 1


def commit_batch(
    conn: PgConnection,
    table: TableRef,
    files: Sequence[DataFile],
    *,
    query_id: str,
    batch_id: int,
    source_files: Sequence[str],
    run_id: str | None = None,
    desc: str = NO_PARTITION,
) -> tuple[CommitResult, int]:
    """Commit a micro-batch's files with the next version, recording the batch in the
    same transaction: (the commit, its version). Raises BatchRecorded for a replayed
    batch id (nothing committed), SourceConsumed when a source file was committed by
    another batch."""
    rows = sum(f.rows for f in files)
    label = f"stream {query_id[:8]}#{batch_id}"
    for _attempt in range(VERSION_RETRIES):
        version = next_version(conn, table, desc)

        def record(cur: Any, commit_id: str, version: int = version) -> None:
            cur.execute(
                "INSERT INTO contest_stream_batch (table_id, partition_desc, query_id, batch_id, "
                "run_id, commit_id, version, rows, source_files) VALUES "
                "(%s, %s, %s, %s, %s, %s, %s, %s, %s::text[]) "
                "ON CONFLICT (table_id, query_id, batch_id) DO NOTHING RETURNING 1",
                (
                    table.table_id,
                    desc,
                    query_id,
                    batch_id,
                    run_id,
                    commit_id,
                    version,
                    rows,
                    list(source_files),
                ),
            )
            if cur.fetchone() is None:
                done = _recorded(cur, table.table_id, query_id, batch_id)
                assert done is not None  # the conflict is this row
                raise BatchRecorded(done)
            cur.execute(
                # `&&` finds the rows through the GIN index; unnest names the file.
                "SELECT b.query_id, b.batch_id, f FROM contest_stream_batch b, "
                "unnest(b.source_files) AS f WHERE b.table_id = %s AND b.source_files && "
                "%s::text[] AND NOT (b.query_id = %s AND b.batch_id = %s) "
                "AND f = ANY(%s::text[]) LIMIT 1",
                (table.table_id, list(source_files), query_id, batch_id, list(source_files)),
            )
            clash = cur.fetchone()
            if clash is not None:
                raise SourceConsumed(
                    f"{clash[2]} was committed to {table.namespace}.{table.name} by batch "
                    f"{clash[1]} of query {clash[0]}, and batch {batch_id} of query {query_id} "
                    "read it again (a new checkpoint over the same source folder?): nothing "
                    "committed; restart from the checkpoint that consumed it"
                )

        try:
            result = commit_files(
                conn, table, files, version=version, batch=label, in_transaction=record
            )
            return result, version
        except CommitError as exc:
            if isinstance(exc, BatchRecorded | SourceConsumed) or "already committed" not in str(
                exc
            ):
                raise
            # Another writer took the version meanwhile: take the next one.
    raise CommitError(
        f"batch {batch_id} of query {query_id}: no free version after {VERSION_RETRIES} tries "
        f"(another writer commits to {table.namespace}.{table.name} at the same time)"
    )


def last_sources(conn: PgConnection, table: TableRef, query_id: str) -> list[str]:
    """The source files of the query's newest committed micro-batch (none: []). Each
    micro-batch's files come after every earlier one's in the stream's order, so the
    last of these is the last the query committed (the caller's order: natural names,
    or an order column's ranges)."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT source_files FROM contest_stream_batch "
            "WHERE table_id = %s AND query_id = %s ORDER BY version DESC LIMIT 1",
            (table.table_id, query_id),
        )
        row = cur.fetchone()
    return [] if row is None else [str(f) for f in row[0]]


def batches(conn: PgConnection, table: TableRef, query_id: str | None = None) -> list[StreamBatch]:
    """The table's committed micro-batches (of one query, or all), in version order."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            f"SELECT {_COLUMNS} FROM contest_stream_batch WHERE table_id = %s "
            "AND (%s::text IS NULL OR query_id = %s) ORDER BY version",
            (table.table_id, query_id, query_id),
        )
        return [_batch(r) for r in cur.fetchall()]


def visible(conn: PgConnection, table: TableRef, desc: str = NO_PARTITION) -> list[StreamBatch]:
    """The micro-batches a read starting now applies: those in the head snapshot."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        head = head_partition(cur, table.table_id, desc)
        if head is None:
            return []
        cur.execute(
            f"SELECT {_COLUMNS} FROM contest_stream_batch WHERE table_id = %s "
            "AND partition_desc = %s AND commit_id = ANY(%s::uuid[]) ORDER BY version",
            (table.table_id, desc, head[1]),
        )
        return [_batch(r) for r in cur.fetchall()]


def committed_count(conn: PgConnection, name: str, namespace: str = "default") -> int:
    """How many micro-batches the named table has committed (0 before it exists): one
    query, as a kill trial polls it every few milliseconds."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM contest_stream_batch b JOIN table_info t "
            "ON b.table_id = t.table_id WHERE t.table_name = %s AND t.table_namespace = %s",
            (name, namespace),
        )
        return int(cur.fetchone()[0])
