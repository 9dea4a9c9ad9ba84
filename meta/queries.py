"""The statements against LakeSoul's metadata tables (partition_info, data_commit_info)
and the project's own (contest_commit_version, contest_compaction) that more than one
module of this package runs, each on a cursor the caller's transaction holds: one
text of each statement, so the modules cannot drift apart."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from meta.errors import CommitError


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


def compaction_covers(cur: Any, table_id: str, desc: str, ids: Sequence[str]) -> dict[str, tuple]:
    """commit id -> the versions it covers, for the compactions among `ids`."""
    cur.execute(
        "SELECT commit_id::text, versions FROM contest_compaction WHERE table_id = %s "
        "AND partition_desc = %s AND commit_id = ANY(%s::uuid[])",
        (table_id, desc, list(ids)),
    )
    return {r[0]: tuple(sorted(int(v) for v in r[1])) for r in cur.fetchall()}
