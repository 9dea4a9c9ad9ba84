"""Compaction commits read back: the versions a compaction stands for, the snapshot it
replaced (its commits and their files), and when each retired file left the table
(a vacuum's retention counts from then). The compaction itself is
contest/maintenance/compact.py's; these are what the read and the vacuum ask of it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from meta.catalog import TableRef
from meta.commits import NO_PARTITION, SnapshotCommit, snapshot_commits
from meta.connection import PgConnection, session
from meta.queries import commit_rows, compaction_covers


@dataclass(frozen=True)
class Compaction:
    """A compaction commit: the versions it stands for, when it landed, and the
    snapshot it replaced (the commits it merged; their files stay until vacuum)."""

    commit_id: str
    covers: tuple[int, ...]
    timestamp_ms: int
    replaced: tuple[SnapshotCommit, ...]


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
        tuple(snapshot_commits(table, snapshot, rows)),
    )
