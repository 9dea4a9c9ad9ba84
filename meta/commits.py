"""Commits of LakeSoul tables: make one, list a snapshot, and the queries both need.

A commit follows LakeSoul's protocol: a data_commit_info row, then partition_info
version n+1 whose snapshot lists the live commits (a version taken by a concurrent
writer is a primary-key conflict, and the commit is retried on the new head), plus
the commit's user-defined version in `contest_commit_version`, all in one
transaction. Every statement against these tables that more than one module needs
is a function here.
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


# -- queries shared by the modules of this package ---------------------------------


def head_partition(cur: Any, table_id: str, desc: str) -> tuple[int, list[str]] | None:
    """The newest partition version and its snapshot (commit ids in order), or None."""
    cur.execute(
        "SELECT version, snapshot::text[] FROM partition_info "
        "WHERE table_id = %s AND partition_desc = %s ORDER BY version DESC LIMIT 1",
        (table_id, desc),
    )
    row = cur.fetchone()
    return None if row is None else (int(row[0]), [str(s) for s in row[1]])


def partition_descs(cur: Any, table_id: str) -> list[str]:
    cur.execute(
        "SELECT DISTINCT partition_desc FROM partition_info WHERE table_id = %s ORDER BY 1",
        (table_id,),
    )
    return [r[0] for r in cur.fetchall()]


def commit_rows(
    cur: Any, table_id: str, desc: str, ids: Sequence[str], files: bool = False
) -> dict[str, tuple]:
    """commit id -> (commit id, commit_op, version or None[, added files as text rows]).

    One index lookup per commit (LATERAL): linear whatever the statistics say."""
    file_col = (
        (
            ", ARRAY(SELECT ROW((f).path, (f).size, (f).file_exist_cols)::text "
            "FROM unnest(d.file_ops) AS f WHERE (f).file_op = 'add')"
        )
        if files
        else ""
    )
    cur.execute(
        f"SELECT s.cid::text, d.commit_op, v.version{file_col} "
        "FROM unnest(%s::uuid[]) AS s(cid) "
        "JOIN LATERAL (SELECT dc.commit_op, dc.file_ops FROM data_commit_info dc "
        "WHERE dc.table_id = %s AND dc.partition_desc = %s AND dc.commit_id = s.cid) d ON true "
        "LEFT JOIN LATERAL (SELECT cv.version FROM contest_commit_version cv "
        "WHERE cv.table_id = %s AND cv.partition_desc = %s AND cv.commit_id = s.cid) v ON true",
        (list(ids), table_id, desc, table_id, desc),
    )
    return {r[0]: r for r in cur.fetchall()}


def insert_partition_version(
    cur: Any,
    table_id: str,
    desc: str,
    version: int,
    commit_op: str,
    snapshot: Sequence[str],
    timestamp_ms: int | None = None,
) -> None:
    """A new partition_info version (a primary-key conflict when another took it)."""
    cur.execute(
        "INSERT INTO partition_info (table_id, partition_desc, version, commit_op, "
        "timestamp, snapshot, expression) VALUES (%s, %s, %s, %s, %s, %s::uuid[], '')",
        (
            table_id,
            desc,
            version,
            commit_op,
            int(time.time() * 1000) if timestamp_ms is None else timestamp_ms,
            list(snapshot),
        ),
    )


def head_version(cur: Any, table_id: str, desc: str) -> int | None:
    """The newest partition version (its snapshot is not read), or None."""
    cur.execute(
        "SELECT max(version) FROM partition_info WHERE table_id = %s AND partition_desc = %s",
        (table_id, desc),
    )
    row = cur.fetchone()
    return None if row is None or row[0] is None else int(row[0])


def append_partition_version(
    cur: Any, table_id: str, desc: str, head: int, commit_op: str, commit_id: str, ts_ms: int
) -> None:
    """Partition version head + 1: head's snapshot plus `commit_id`, appended by
    PostgreSQL, so a commit sends and receives the same few bytes however many commits
    the snapshot lists (a primary-key conflict when another writer took head + 1)."""
    cur.execute(
        "INSERT INTO partition_info (table_id, partition_desc, version, commit_op, "
        "timestamp, snapshot, expression) SELECT table_id, partition_desc, version + 1, %s, "
        "%s, snapshot || %s::uuid, '' FROM partition_info WHERE table_id = %s "
        "AND partition_desc = %s AND version = %s",
        (commit_op, ts_ms, commit_id, table_id, desc, head),
    )
    if cur.rowcount != 1:
        raise CommitError(f"partition version {head} of table {table_id} vanished mid-commit")


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


# -- commits ---------------------------------------------------------------------------


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
    return pversion, _snapshot_commits(table, snapshot, rows)


@dataclass(frozen=True)
class Compaction:
    """A compaction commit: the versions it stands for, when it landed, and the
    snapshot it replaced (the commits it merged; their files stay until vacuum)."""

    commit_id: str
    covers: tuple[int, ...]
    timestamp_ms: int
    replaced: tuple[SnapshotCommit, ...]


def compaction_covers(cur: Any, table_id: str, desc: str, ids: Sequence[str]) -> dict[str, tuple]:
    """commit id -> the versions it covers, for the compactions among `ids`."""
    cur.execute(
        "SELECT commit_id::text, versions FROM contest_compaction WHERE table_id = %s "
        "AND partition_desc = %s AND commit_id = ANY(%s::uuid[])",
        (table_id, desc, list(ids)),
    )
    return {r[0]: tuple(sorted(int(v) for v in r[1])) for r in cur.fetchall()}


def covers_of(
    conn: PgConnection, table: TableRef, ids: Sequence[str], partition_desc: str = NO_PARTITION
) -> dict[str, tuple]:
    """commit id -> the versions it covers, for the compactions among `ids`."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        return compaction_covers(cur, table.table_id, partition_desc, ids)


# The partition version a compaction landed on: its commit_op, and its snapshot starts
# with it (cheap tests first: a long snapshot's array is never searched).
LANDED = "commit_op = 'CompactionCommit' AND snapshot[1] = %s::uuid"


def retired_files(conn: PgConnection, table: TableRef) -> dict[str, int]:
    """path -> when it left the table (ms), for the files of the commits a compaction
    replaced or a rollback took out: a vacuum's retention counts from then, as Delta's
    counts from a file's removal, so time travel lasts the retention window."""
    out: dict[str, int] = {}
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT (f).path, c.ts FROM (SELECT cp.partition_desc, cp.commit_id, "
            "dc.timestamp AS ts, (SELECT min(p.version) FROM partition_info p WHERE "
            "p.table_id = cp.table_id AND p.partition_desc = cp.partition_desc AND "
            "p.commit_op = 'CompactionCommit' AND p.snapshot[1] = cp.commit_id) AS landed "
            "FROM contest_compaction cp JOIN data_commit_info dc ON dc.table_id = "
            "cp.table_id AND dc.partition_desc = cp.partition_desc AND dc.commit_id = "
            "cp.commit_id WHERE cp.table_id = %s) c "
            "JOIN partition_info prev ON prev.table_id = %s AND prev.partition_desc = "
            "c.partition_desc AND prev.version = c.landed - 1 "
            "CROSS JOIN unnest(prev.snapshot) AS s(cid) "
            "JOIN data_commit_info d ON d.table_id = %s AND d.partition_desc = "
            "c.partition_desc AND d.commit_id = s.cid "
            "CROSS JOIN unnest(d.file_ops) AS f WHERE (f).file_op = 'add' "
            "UNION ALL "
            "SELECT (f).path, (extract(epoch FROM rb.rolled_back_at) * 1000)::bigint "
            "FROM contest_rolled_back_version rb JOIN data_commit_info d ON d.table_id = "
            "rb.table_id AND d.partition_desc = rb.partition_desc AND d.commit_id = "
            "rb.commit_id CROSS JOIN unnest(d.file_ops) AS f "
            "WHERE rb.table_id = %s AND (f).file_op = 'add'",
            (table.table_id,) * 4,
        )
        for path, ms in cur.fetchall():
            out[path] = max(out.get(path, 0), int(ms))
    return out


def compaction(
    conn: PgConnection, table: TableRef, commit_id: str, partition_desc: str = NO_PARTITION
) -> Compaction:
    """A compaction commit and the snapshot it replaced: the partition version just
    before the first one that holds it (a compaction commits only on the head it read)."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        covers = compaction_covers(cur, table.table_id, partition_desc, [commit_id])
        cur.execute(
            f"SELECT min(version) FROM partition_info WHERE table_id = %s AND "
            f"partition_desc = %s AND {LANDED}",
            (table.table_id, partition_desc, commit_id),
        )
        landed = cur.fetchone()[0]
        cur.execute(
            "SELECT snapshot::text[] FROM partition_info WHERE table_id = %s AND "
            "partition_desc = %s AND version = %s",
            (table.table_id, partition_desc, -1 if landed is None else int(landed) - 1),
        )
        row = cur.fetchone()
        snapshot = [str(s) for s in row[0]] if row else []
        rows = commit_rows(cur, table.table_id, partition_desc, snapshot, files=True)
        cur.execute(
            "SELECT timestamp FROM data_commit_info WHERE table_id = %s AND "
            "partition_desc = %s AND commit_id = %s",
            (table.table_id, partition_desc, commit_id),
        )
        ts = cur.fetchone()
    return Compaction(
        commit_id,
        covers.get(commit_id, ()),
        int(ts[0]) if ts else 0,
        tuple(_snapshot_commits(table, snapshot, rows)),
    )


def _snapshot_commits(
    table: TableRef, snapshot: list[str], rows: dict[str, tuple]
) -> list[SnapshotCommit]:
    """A snapshot's commits with their files, in snapshot order."""
    missing = [c for c in snapshot if c not in rows]
    if missing:
        raise MetaError(f"table {table.name}: snapshot names commits with no data: {missing[:3]}")
    commits = []
    for cid in snapshot:
        _, op, version, raw_files = rows[cid]
        files = tuple(_parse_file_row(text) for text in raw_files)
        commits.append(SnapshotCommit(cid, op, files, version))
    return commits


def _parse_file_row(text: str) -> DataFile:
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
                out.update(_parse_file_row(text).path for text in r[3])
        return out
