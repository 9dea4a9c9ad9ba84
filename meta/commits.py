"""Commits of LakeSoul tables: make one, and read back which are live.

A commit follows LakeSoul's protocol: a data_commit_info row, then partition_info
version n+1 whose snapshot lists the live commits (a version taken by a concurrent
writer is a primary-key conflict, and the commit is retried on the new head), plus
the commit's user-defined version in `contest_commit_version`, all in one
transaction. Read back: the head snapshot's commits and files, the versions live, the
files live. The statements the package's modules share are meta/queries.py's; what a
compaction replaced, meta/compactions.py's.
"""

from __future__ import annotations

import csv
import random
import time
import uuid as uuidlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg2
import psycopg2.errors

from meta.catalog import TableRef
from meta.connection import TRANSIENT, PgConnection, connect, session
from meta.errors import CommitError, MetaError, TableError
from meta.queries import (
    append_partition_version,
    commit_rows,
    compaction_covers,
    head_partition,
    head_version,
    insert_partition_version,
    partition_descs,
)
from meta.replay import RESET_OPS

NO_PARTITION = "-5"  # LakeSoul's partition_desc for a table without range partitions
MAX_COMMIT_RETRIES = 50
COMMIT_OPS = ("MergeCommit", "AppendCommit", "UpdateCommit", "CompactionCommit")
VERSION_UNIQUE = "contest_commit_version_unique"


@dataclass(frozen=True)
class DataFile:
    path: str
    size: int
    columns: tuple[str, ...]
    bucket: int
    rows: int = 0


@dataclass(frozen=True)
class CommitResult:
    commit_id: str
    partition_version: int
    retries: int
    seconds: float


@dataclass(frozen=True)
class SnapshotCommit:
    commit_id: str
    commit_op: str
    files: tuple[DataFile, ...]
    version: int | None


def live_commit_count(conn: PgConnection, table: TableRef) -> int:
    """The most live commits of any partition of `table` (its head snapshots' size)."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT coalesce(max(cardinality(p.snapshot)), 0) FROM partition_info p "
            "WHERE p.table_id = %s AND p.version = (SELECT max(q.version) FROM "
            "partition_info q WHERE q.table_id = p.table_id "
            "AND q.partition_desc = p.partition_desc)",
            (table.table_id,),
        )
        return int(cur.fetchone()[0])


def metadata_size(conn: PgConnection, table: TableRef) -> tuple[int, int]:
    """The table's rows in LakeSoul's metadata (its commits and its partitions'
    versions) and their bytes as PostgreSQL stores each row: what a long history grows,
    and what compaction and cleanup leave."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT count(*), coalesce(sum(pg_column_size(d.*)), 0) FROM data_commit_info d "
            "WHERE d.table_id = %s UNION ALL SELECT count(*), "
            "coalesce(sum(pg_column_size(p.*)), 0) FROM partition_info p WHERE p.table_id = %s",
            (table.table_id, table.table_id),
        )
        rows = cur.fetchall()
    return sum(int(r[0]) for r in rows), sum(int(r[1]) for r in rows)


def file_ops(files: Iterable[DataFile]) -> list[tuple[str, str, int, str]]:
    return [(f.path, "add", f.size, ",".join(f.columns)) for f in files]


def commit_files(
    conn: PgConnection,
    table: TableRef,
    files: Sequence[DataFile],
    *,
    version: int | None = None,
    batch: str | None = None,
    commit_op: str = "MergeCommit",
    partition_desc: str = NO_PARTITION,
    covers: Sequence[int] = (),
    expect_head: int | None = None,
    in_transaction: Callable[[Any, str], None] | None = None,
) -> CommitResult:
    """Commit files as one LakeSoul commit; never lost under concurrent writers.

    MergeCommit/AppendCommit append the commit to the head snapshot; an UpdateCommit
    or CompactionCommit replaces the snapshot (it holds everything). The table must
    still exist (checked under a share lock in the commit's transaction), and a
    version is committed at most once per partition (a unique index). A compaction
    records the versions it `covers`. With `expect_head`, the commit lands only on that
    partition version (a compaction of what it read), else it fails naming the change.
    `in_transaction(cursor, commit_id)` runs first in the commit's transaction: what it
    writes lands with the commit or not at all, and an error it raises commits nothing."""
    if commit_op not in COMMIT_OPS:
        raise CommitError(f"unknown commit_op {commit_op!r}")
    commit_id = str(uuidlib.uuid4())
    started = time.perf_counter()
    now_ms = int(time.time() * 1000)
    ops = file_ops(files)
    retries = 0
    pgc = connect(conn)  # not `session`: a lost server is reconnected below, mid-loop
    try:
        while True:
            try:
                with pgc, pgc.cursor() as cur:
                    cur.execute(
                        "SELECT 1 FROM table_info WHERE table_id = %s FOR SHARE", (table.table_id,)
                    )
                    if cur.fetchone() is None:
                        raise CommitError(
                            f"table {table.namespace}.{table.name} was dropped while it was "
                            "being written: nothing committed"
                        )
                    if in_transaction is not None:
                        in_transaction(cur, commit_id)
                    cur.execute(
                        "INSERT INTO data_commit_info (table_id, partition_desc, commit_id, "
                        "file_ops, commit_op, committed, timestamp) "
                        "VALUES (%s, %s, %s, %s::data_file_op[], %s, true, %s)",
                        (table.table_id, partition_desc, commit_id, ops, commit_op, now_ms),
                    )
                    if version is not None:
                        cur.execute(
                            "INSERT INTO contest_commit_version "
                            "(table_id, partition_desc, commit_id, version, batch) "
                            "VALUES (%s, %s, %s, %s, %s)",
                            (table.table_id, partition_desc, commit_id, version, batch),
                        )
                    if covers:
                        cur.execute(
                            "INSERT INTO contest_compaction (table_id, partition_desc, "
                            "commit_id, versions) VALUES (%s, %s, %s, %s::bigint[])",
                            (table.table_id, partition_desc, commit_id, list(covers)),
                        )
                    head = head_version(cur, table.table_id, partition_desc)
                    if expect_head is not None and head != expect_head:
                        raise CommitError(
                            f"table {table.namespace}.{table.name} changed while it was being "
                            f"compacted (version {expect_head} -> "
                            f"{'none' if head is None else head}): nothing committed; run it again"
                        )
                    new_version = 0 if head is None else head + 1
                    if head is None or commit_op in RESET_OPS:
                        insert_partition_version(
                            cur,
                            table.table_id,
                            partition_desc,
                            new_version,
                            commit_op,
                            [commit_id],
                            now_ms,
                        )
                    else:
                        append_partition_version(
                            cur, table.table_id, partition_desc, head, commit_op, commit_id, now_ms
                        )
                return CommitResult(commit_id, new_version, retries, time.perf_counter() - started)
            except TRANSIENT:
                # The server went away mid-commit: reconnect (retried with backoff), and
                # if the commit did land before the answer was lost, it is done.
                pgc.close()
                pgc = connect(conn)
                if _landed(pgc, table.table_id, partition_desc, commit_id):
                    landed = _head_version_with(pgc, table.table_id, partition_desc, commit_id)
                    return CommitResult(commit_id, landed, retries, time.perf_counter() - started)
                retries += 1
            except psycopg2.errors.UniqueViolation as exc:
                if exc.diag.constraint_name == VERSION_UNIQUE:
                    raise CommitError(
                        f"version {version} is already committed to table "
                        f"{table.namespace}.{table.name}: nothing committed (use "
                        "`contest write --resume` to skip committed versions, or `contest meta "
                        "rollback` to undo them)"
                    ) from None
                # Another writer took version n+1 first: rebase on the new head.
                retries += 1
                if retries > MAX_COMMIT_RETRIES:
                    raise CommitError(
                        f"commit to {table.name} gave up after {MAX_COMMIT_RETRIES} conflicts"
                    ) from None
                time.sleep(random.uniform(0.001, 0.02) * min(retries, 10))
    finally:
        pgc.close()


def claim_version(
    conn: PgConnection,
    table: TableRef,
    commit_id: str,
    version: int,
    batch: str | None = None,
    partition_desc: str = NO_PARTITION,
) -> None:
    """Record the user-defined version of a commit another writer is about to make
    (stock LakeSoul's DBManager, which knows nothing of versions), before it makes it,
    so the unique index refuses the same version twice. A claim whose commit never
    reached a snapshot (the writer stopped first) is replaced; a version a landed
    commit holds is a CommitError."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT commit_id::text FROM contest_commit_version WHERE table_id = %s "
            "AND partition_desc = %s AND version = %s FOR UPDATE",
            (table.table_id, partition_desc, version),
        )
        row = cur.fetchone()
        if row is not None:
            cur.execute(
                "SELECT 1 FROM partition_info WHERE table_id = %s AND partition_desc = %s "
                "AND %s::uuid = ANY(snapshot) LIMIT 1",
                (table.table_id, partition_desc, row[0]),
            )
            if cur.fetchone() is not None:
                raise CommitError(
                    f"version {version} is already committed to table "
                    f"{table.namespace}.{table.name}: nothing committed"
                )
            cur.execute(
                "DELETE FROM contest_commit_version WHERE table_id = %s "
                "AND partition_desc = %s AND commit_id = %s",
                (table.table_id, partition_desc, row[0]),
            )
        cur.execute(
            "INSERT INTO contest_commit_version (table_id, partition_desc, commit_id, "
            "version, batch) VALUES (%s, %s, %s, %s, %s)",
            (table.table_id, partition_desc, commit_id, version, batch),
        )


def _landed(pgc: Any, table_id: str, desc: str, commit_id: str) -> bool:
    with pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT 1 FROM data_commit_info WHERE table_id = %s AND partition_desc = %s "
            "AND commit_id = %s",
            (table_id, desc, commit_id),
        )
        return cur.fetchone() is not None


def _head_version_with(pgc: Any, table_id: str, desc: str, commit_id: str) -> int:
    with pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT min(version) FROM partition_info WHERE table_id = %s AND "
            "partition_desc = %s AND %s::uuid = ANY(snapshot)",
            (table_id, desc, commit_id),
        )
        row = cur.fetchone()
    return int(row[0]) if row and row[0] is not None else -1


def head_snapshot(
    conn: PgConnection, table: TableRef, partition_desc: str = NO_PARTITION
) -> tuple[int, list[SnapshotCommit]]:
    """The commits of the newest partition version, in snapshot order."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        head = head_partition(cur, table.table_id, partition_desc)
        if head is None:
            return -1, []
        pversion, snapshot = head
        rows = commit_rows(cur, table.table_id, partition_desc, snapshot, files=True)
    return pversion, snapshot_commits(table, snapshot, rows)


def snapshot_commits(
    table: TableRef, snapshot: list[str], rows: dict[str, tuple]
) -> list[SnapshotCommit]:
    """A snapshot's commits with their files, in snapshot order."""
    missing = [c for c in snapshot if c not in rows]
    if missing:
        raise MetaError(f"table {table.name}: snapshot names commits with no data: {missing[:3]}")
    commits = []
    for cid in snapshot:
        _, op, version, raw_files = rows[cid]
        files = tuple(parse_file_row(text) for text in raw_files)
        commits.append(SnapshotCommit(cid, op, files, version))
    return commits


def parse_file_row(text: str) -> DataFile:
    """Parse PostgreSQL's text form of ROW(path, size, cols): `(path,123,"a,b")`."""
    inner = text[1:-1]
    path, size, cols = next(csv.reader([inner], quotechar='"', escapechar="\\"))
    return DataFile(
        path=path,
        size=int(size),
        columns=tuple(c for c in cols.split(",") if c),
        bucket=bucket_of_path(path),
    )


def bucket_of_path(path: str) -> int:
    """LakeSoul names bucket files `part-<id>_<bucket:04>.<ext>`."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    tail = stem.rsplit("_", 1)[-1]
    if not tail.isdigit():
        raise TableError(f"data file name carries no hash bucket: {path}")
    return int(tail)


def live_versions(cur: Any, table_id: str, desc: str) -> dict[int, str]:
    """version -> commit id of the live commits: their own versions, and the versions a
    live compaction covers."""
    head = head_partition(cur, table_id, desc)
    if head is None:
        return {}
    rows = commit_rows(cur, table_id, desc, head[1])
    out = {int(r[2]): r[0] for r in rows.values() if r[2] is not None}
    for cid, versions in compaction_covers(cur, table_id, desc, head[1]).items():
        out.update({v: cid for v in versions})
    return out


def committed_versions(
    conn: PgConnection, table: TableRef, partition_desc: str = NO_PARTITION
) -> dict[int, str]:
    """version -> commit id of what is live (see `live_versions`)."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        return live_versions(cur, table.table_id, partition_desc)


def live_files(conn: PgConnection, table: TableRef) -> set[str]:
    """Every data file that a live commit (in any partition's head snapshot) names."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        out: set[str] = set()
        for desc in partition_descs(cur, table.table_id):
            head = head_partition(cur, table.table_id, desc)
            if head is None:
                continue
            rows = commit_rows(cur, table.table_id, desc, head[1], files=True)
            for r in rows.values():
                out.update(parse_file_row(text).path for text in r[3])
        return out
