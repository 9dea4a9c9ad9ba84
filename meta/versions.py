"""A table's versions: which a write planned, which are committed and live, which are
missing; its history; and rollback to a version.

Pure rules (`version_gaps`) are apart from the queries, and every statement is here or
in `meta.commits`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from meta.catalog import TableRef
from meta.commits import NO_PARTITION, live_versions
from meta.connection import PgConnection, session
from meta.errors import MetaError, UsageError
from meta.merge import describe_versions
from meta.queries import commit_rows, compaction_covers, head_partition, insert_partition_version

ROLLBACK_LOCK = "contest.meta.merge"  # the merge's lock: a rollback never interleaves one


@dataclass(frozen=True)
class Gaps:
    """Versions a reader should know about: holes below the newest committed version
    (a batch that never landed between others), and planned versions not yet committed
    above it."""

    holes: tuple[int, ...] = ()
    pending: tuple[int, ...] = ()

    def describe(self) -> str:
        parts = []
        if self.holes:
            parts.append(f"missing version(s) {_short(self.holes)} below the newest committed")
        if self.pending:
            parts.append(f"planned version(s) {_short(self.pending)} not committed yet")
        return "; ".join(parts)


def _short(values: tuple[int, ...], most: int = 8) -> str:
    text = ", ".join(str(v) for v in values[:most])
    return text + (f" ... ({len(values)} in all)" if len(values) > most else "")


def version_gaps(committed: Iterable[int], planned: Iterable[int] = ()) -> Gaps:
    """Holes: every whole number below the newest committed version, from the lowest
    version committed or planned, that is not committed, whatever the plan says (a
    write of `--only 0,1,2,4` plans no 3, and its table still lacks batch 3).
    Pending: planned versions above the newest committed."""
    done = set(committed)
    plan = set(planned)
    if not done:
        return Gaps((), tuple(sorted(plan)))
    top = max(done)
    low = min(done | {v for v in plan if v < top})
    holes = tuple(sorted(set(range(low, top)) - done))
    pending = tuple(sorted(v for v in plan - done if v > top))
    return Gaps(holes, pending)


@dataclass
class HistoryEntry:
    version: int | None
    batch: str | None
    commit_id: str
    commit_op: str
    timestamp_ms: int
    files: int
    bytes: int
    live: bool
    covers: tuple[int, ...] = ()  # the versions a compaction merged
    rolled_back: bool = False  # taken out by `contest meta rollback` (version kept)


def newest_first(entries: Iterable[HistoryEntry]) -> list[HistoryEntry]:
    """Newest version first: a compaction at the newest version it covers, a commit
    without a version at the newest version committed before it (where the replay
    applies it), each above what it follows; one version committed again after a
    rollback, the newer commit first."""
    entries = list(entries)
    by_time = sorted(entries, key=lambda e: e.timestamp_ms)
    place: dict[str, int] = {}
    high = -1
    for e in by_time:
        own = e.version if e.version is not None else max(e.covers, default=None)
        if own is not None:
            high = max(high, own)
            place[e.commit_id] = own
        else:
            place[e.commit_id] = high
    return sorted(
        entries,
        key=lambda e: (place[e.commit_id], e.version is None, e.timestamp_ms),
        reverse=True,
    )


@dataclass
class History:
    table: str
    partition_version: int
    entries: list[HistoryEntry] = field(default_factory=list)
    gaps: Gaps = field(default_factory=Gaps)


def plan_versions(
    conn: PgConnection, table: TableRef, versions: Mapping[int, str], desc: str = NO_PARTITION
) -> None:
    """Record the versions a write sets out to commit (a re-plan keeps earlier rows)."""
    if not versions:
        return
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.executemany(
            "INSERT INTO contest_expected_version (table_id, partition_desc, version, batch)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
            [(table.table_id, desc, v, b) for v, b in versions.items()],
        )


def planned_versions(cur, table_id: str, desc: str) -> list[int]:
    cur.execute(
        "SELECT version FROM contest_expected_version WHERE table_id = %s AND "
        "partition_desc = %s ORDER BY version",
        (table_id, desc),
    )
    return [int(r[0]) for r in cur.fetchall()]


def gaps_of(conn: PgConnection, table: TableRef, desc: str = NO_PARTITION) -> Gaps:
    """The table's holes and pending versions, from its live commits and its plan."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        committed = live_versions(cur, table.table_id, desc)
        plan = planned_versions(cur, table.table_id, desc)
    return version_gaps(committed, plan)


def history(conn: PgConnection, table: TableRef, desc: str = NO_PARTITION) -> History:
    """Every commit of the partition (live or not), newest version first, like Delta's
    DESCRIBE HISTORY, with the gaps."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        head = head_partition(cur, table.table_id, desc)
        live = set(head[1]) if head else set()
        cur.execute(
            "SELECT dc.commit_id::text, dc.commit_op, dc.timestamp, "
            "coalesce(cv.version, rb.version), coalesce(cv.batch, rb.batch), "
            "(SELECT count(*) FROM unnest(dc.file_ops) f WHERE (f).file_op = 'add'), "
            "(SELECT coalesce(sum((f).size), 0) FROM unnest(dc.file_ops) f "
            "WHERE (f).file_op = 'add'), cv.version IS NULL AND rb.version IS NOT NULL "
            "FROM data_commit_info dc LEFT JOIN contest_commit_version cv "
            "ON cv.table_id = dc.table_id AND cv.partition_desc = dc.partition_desc "
            "AND cv.commit_id = dc.commit_id "
            "LEFT JOIN contest_rolled_back_version rb "
            "ON rb.table_id = dc.table_id AND rb.partition_desc = dc.partition_desc "
            "AND rb.commit_id = dc.commit_id "
            "WHERE dc.table_id = %s AND dc.partition_desc = %s",
            (table.table_id, desc),
        )
        rows = cur.fetchall()
        covers = compaction_covers(cur, table.table_id, desc, [r[0] for r in rows])
        plan = planned_versions(cur, table.table_id, desc)
        committed = live_versions(cur, table.table_id, desc)
    entries = [
        HistoryEntry(
            None if r[3] is None else int(r[3]),
            r[4],
            r[0],
            r[1],
            int(r[2]),
            int(r[5]),
            int(r[6]),
            r[0] in live,
            covers.get(r[0], ()),
            bool(r[7]),
        )
        for r in rows
    ]
    return History(
        f"{table.namespace}.{table.name}",
        head[0] if head else -1,
        newest_first(entries),
        version_gaps(committed, plan),
    )


@dataclass(frozen=True)
class Rollback:
    table: str
    to_version: int
    removed: tuple[str, ...]  # commit ids taken out of the snapshot
    partition_version: int | None  # the new partition version (None: nothing to do)


def compaction_above(covers: Mapping[str, tuple[int, ...]], to_version: int) -> tuple[str, tuple]:
    """The first live compaction that merged a version above `to_version` (commit id,
    the versions it covers), or ("", ()): such a commit cannot be taken apart."""
    for cid, versions in covers.items():
        if versions and max(versions) > to_version:
            return cid, tuple(versions)
    return "", ()


def refuse_compacted(cur, table: TableRef, desc: str, live: list[str], to_version: int) -> None:
    """A rollback below a live compaction's newest version is refused, naming it: the
    compaction's one commit holds those versions merged, and undoing only the commits
    above V would leave them all in (the old `nothing to do`)."""
    cid, covers = compaction_above(compaction_covers(cur, table.table_id, desc, live), to_version)
    if cid:
        raise UsageError(
            f"--to-version {to_version}: versions {describe_versions(list(covers))} of "
            f"{table.namespace}.{table.name} were compacted into one commit ({cid}), "
            f"which cannot be split; roll back to {max(covers)} or later, or rewrite the "
            "table (contest write --replace) and roll that back"
        )


def rollback(
    conn: PgConnection,
    table: TableRef,
    to_version: int,
    desc: str = NO_PARTITION,
    dry_run: bool = False,
) -> Rollback:
    """Undo the commits whose version is above `to_version`: a new partition version
    without them (their files stay until `contest vacuum`), and their versions free to
    be committed again. Unversioned commits stay."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))",
            (ROLLBACK_LOCK, table.table_id),
        )
        head = head_partition(cur, table.table_id, desc)
        if head is None:
            raise UsageError(f"table {table.namespace}.{table.name} has no commits")
        rows = commit_rows(cur, table.table_id, desc, head[1])
        missing = [c for c in head[1] if c not in rows]
        if missing:
            raise MetaError(f"snapshot names commits with no data: {missing[:3]}")
        refuse_compacted(cur, table, desc, head[1], to_version)
        versions = [rows[c][2] for c in head[1] if rows[c][2] is not None]
        if versions and to_version < min(versions) - 1:
            raise UsageError(
                f"--to-version {to_version}: the oldest committed version is "
                f"{min(versions)}; roll back to {min(versions)} or later"
            )
        removed = [c for c in head[1] if rows[c][2] is not None and rows[c][2] > to_version]
        if not removed or dry_run:
            return Rollback(f"{table.namespace}.{table.name}", to_version, tuple(removed), None)
        keep = [c for c in head[1] if c not in set(removed)]
        insert_partition_version(
            cur, table.table_id, desc, head[0] + 1, "MergeCommit", keep, int(time.time() * 1000)
        )
        cur.execute(  # history keeps naming their versions
            "INSERT INTO contest_rolled_back_version (table_id, partition_desc, commit_id, "
            "version, batch) SELECT table_id, partition_desc, commit_id, version, batch "
            "FROM contest_commit_version WHERE table_id = %s AND partition_desc = %s "
            "AND commit_id = ANY(%s::uuid[]) ON CONFLICT DO NOTHING",
            (table.table_id, desc, removed),
        )
        cur.execute(
            "DELETE FROM contest_commit_version WHERE table_id = %s AND "
            "partition_desc = %s AND commit_id = ANY(%s::uuid[])",
            (table.table_id, desc, removed),
        )
        cur.execute(
            "DELETE FROM contest_expected_version WHERE table_id = %s AND "
            "partition_desc = %s AND version > %s",
            (table.table_id, desc, to_version),
        )
        cur.execute(
            "DELETE FROM contest_merge_checkpoint WHERE table_id = %s AND partition_desc = %s",
            (table.table_id, desc),
        )
    return Rollback(f"{table.namespace}.{table.name}", to_version, tuple(removed), head[0] + 1)
