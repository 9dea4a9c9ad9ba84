"""`contest meta merge`: rewrite each partition's snapshot in version order.

One transaction per run, holding an advisory lock per table, so two merges of one
table never interleave (the second waits). The merged snapshot is written as a new
partition_info version, head + 1: a writer that commits meanwhile takes head + 1
first and the merge retries on the new head, or commits after it and is left for
the next merge. Nothing is dropped or duplicated: the merged snapshot is a
permutation of the head's live commits (checked before writing).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import psycopg2.errors

from meta.catalog import TableRef
from meta.commits import commit_rows, head_partition, insert_partition_version, partition_descs
from meta.connection import PgConnection, connect
from meta.errors import MetaError
from meta.replay import Commit, order_commits

MAX_RETRIES = 20
# Live commits from which a partition is replayed through Spark (when a session is
# given): set from results/meta_replay.md, where the driver stays ahead well past a
# million commits on one machine; on a cluster, with a driver short of memory, lower it.
DISTRIBUTED_THRESHOLD = 2_000_000


@dataclass
class PartitionMerge:
    partition_desc: str
    head_version: int
    live_commits: int
    replayed: int  # commits read beyond the checkpoint
    reordered: bool
    new_version: int | None = None
    path: str = "driver"  # where the replay ran: driver or distributed
    order: list[str] = field(default_factory=list, repr=False)
    versions: list[int | None] = field(default_factory=list, repr=False)


@dataclass
class MergeReport:
    table: str
    dry_run: bool
    partitions: list[PartitionMerge] = field(default_factory=list)
    seconds: float = 0.0
    retries: int = 0

    @property
    def changed(self) -> bool:
        return any(p.reordered for p in self.partitions)

    def to_dict(self) -> dict:
        parts = []
        for p in self.partitions:
            d = asdict(p)
            d.pop("order")
            known = [v for v in d.pop("versions") if v is not None]
            d["versions"] = {
                "count": len(known),
                "min": min(known, default=None),
                "max": max(known, default=None),
            }
            parts.append(d)
        return {
            "table": self.table,
            "dry_run": self.dry_run,
            "changed": self.changed,
            "commits_replayed": sum(p.replayed for p in self.partitions),
            "partitions": parts,
            "seconds": round(self.seconds, 4),
            "retries": self.retries,
        }

    def render(self) -> str:
        lines = []
        for p in self.partitions:
            what = (
                "already in version order, nothing to write"
                if not p.reordered
                else (
                    f"would write version {p.head_version + 1}"
                    if self.dry_run
                    else f"wrote version {p.new_version}"
                )
            )
            shown = [v for v in p.versions[:12]]
            more = " ..." if len(p.versions) > 12 else ""
            lines.append(
                f"{self.table} partition {p.partition_desc}: head v{p.head_version}, "
                f"{p.live_commits} live commits ({p.replayed} replayed since the "
                f"checkpoint): {what}; version order {shown}{more}"
            )
        if not self.partitions:
            lines.append(f"{self.table}: no commits yet, nothing to merge")
        lines.append(f"{self.seconds:.3f}s")
        return "\n".join(lines)


def _lock_key(table_id: str) -> tuple[str, str]:
    return ("contest.meta.merge", table_id)


def merge_table(
    conn: PgConnection,
    table: TableRef,
    dry_run: bool = False,
    *,
    spark=None,
    distributed_threshold: int | None = None,
    force_path: str | None = None,
) -> MergeReport:
    """Merge every partition. The replay runs in this process, or through Spark
    (`meta.distributed`) when a session is given and a partition has at least
    `distributed_threshold` live commits (or `force_path` says which)."""
    started = time.perf_counter()
    report = MergeReport(f"{table.namespace}.{table.name}", dry_run)
    chooser = _chooser(conn, spark, distributed_threshold, force_path)
    pgc = connect(conn)
    try:
        while True:
            try:
                with pgc, pgc.cursor() as cur:
                    cur.execute(
                        "SELECT pg_advisory_xact_lock(hashtext(%s), hashtext(%s))",
                        _lock_key(table.table_id),
                    )
                    descs = partition_descs(cur, table.table_id)
                    report.partitions = [
                        _merge_partition(cur, table, d, dry_run, chooser) for d in descs
                    ]
                    if dry_run:
                        pgc.rollback()
                break
            except psycopg2.errors.UniqueViolation:
                # A writer took the next partition version: replay on the new head.
                report.retries += 1
                if report.retries > MAX_RETRIES:
                    raise
    finally:
        pgc.close()
    report.seconds = time.perf_counter() - started
    return report


def _chooser(conn: PgConnection, spark, threshold: int | None, force: str | None):
    """Which replay a partition gets: in-process (None) or a distributed orderer."""
    if force not in (None, "driver", "distributed"):
        raise ValueError(f"replay path {force!r}: driver or distributed")
    if force == "driver" or spark is None and force is None:
        return lambda n: None
    if spark is None:
        raise ValueError("the distributed replay needs a Spark session")
    from meta.distributed import SparkOrderer

    orderer = SparkOrderer(spark, conn)
    if force == "distributed":
        return lambda n: orderer
    limit = threshold if threshold is not None else DISTRIBUTED_THRESHOLD
    return lambda n: orderer if n >= limit else None


def _merge_partition(
    cur, table: TableRef, desc: str, dry_run: bool, chooser=lambda n: None
) -> PartitionMerge:
    head = head_partition(cur, table.table_id, desc)
    if head is None:
        raise MetaError(f"{table.name}: partition {desc} has no version")
    head_version, snapshot = head
    orderer = chooser(len(snapshot))
    if orderer is not None:
        ordered = orderer.order(table.table_id, desc, head_version, len(snapshot))
        return _write_merge(
            cur,
            table,
            desc,
            dry_run,
            head_version,
            snapshot,
            ordered,
            replayed=len(snapshot),
            path="distributed",
        )
    cur.execute(
        "SELECT partition_version, commit_ids::text[], versions, ops "
        "FROM contest_merge_checkpoint WHERE table_id = %s AND partition_desc = %s",
        (table.table_id, desc),
    )
    ckpt = cur.fetchone()
    prefix: list[Commit] = []
    if ckpt and snapshot[: len(ckpt[1])] == ckpt[1]:
        prefix = [Commit(c, op, v) for c, v, op in zip(ckpt[1], ckpt[2], ckpt[3], strict=True)]
    new_ids = snapshot[len(prefix) :]
    new = _load_commits(cur, table.table_id, desc, new_ids)
    ordered = order_commits(prefix + new)
    return _write_merge(
        cur, table, desc, dry_run, head_version, snapshot, ordered, replayed=len(new), path="driver"
    )


def _write_merge(
    cur,
    table: TableRef,
    desc: str,
    dry_run: bool,
    head_version: int,
    snapshot: list[str],
    ordered: list[Commit],
    replayed: int,
    path: str,
) -> PartitionMerge:
    order = [c.commit_id for c in ordered]
    if len(order) != len(snapshot) or set(order) != set(snapshot):
        raise MetaError(f"{table.name}: merge would change the set of live commits")
    result = PartitionMerge(
        desc,
        head_version,
        len(snapshot),
        replayed,
        order != snapshot,
        order=order,
        versions=[c.version for c in ordered],
        path=path,
    )
    if dry_run:
        return result
    written_version = head_version
    if result.reordered:
        written_version = head_version + 1
        insert_partition_version(cur, table.table_id, desc, written_version, "MergeCommit", order)
        result.new_version = written_version
    cur.execute(
        "INSERT INTO contest_merge_checkpoint (table_id, partition_desc, partition_version, "
        "commit_ids, versions, ops) VALUES (%s, %s, %s, %s::uuid[], %s::bigint[], %s::text[]) "
        "ON CONFLICT (table_id, partition_desc) DO UPDATE SET "
        "partition_version = EXCLUDED.partition_version, commit_ids = EXCLUDED.commit_ids, "
        "versions = EXCLUDED.versions, ops = EXCLUDED.ops, merged_at = now()",
        (
            table.table_id,
            desc,
            written_version,
            order,
            [c.version for c in ordered],
            [c.commit_op for c in ordered],
        ),
    )
    return result


def _load_commits(cur, table_id: str, desc: str, ids: list[str]) -> list[Commit]:
    if not ids:
        return []
    rows = commit_rows(cur, table_id, desc, ids)
    missing = [c for c in ids if c not in rows]
    if missing:
        raise MetaError(f"snapshot names commits with no data_commit_info row: {missing[:3]}")
    return [Commit(c, rows[c][1], rows[c][2]) for c in ids]
