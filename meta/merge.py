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
from dataclasses import dataclass, field, fields
from functools import cached_property

import numpy as np
import psycopg2.errors
import pyarrow as pa
import pyarrow.compute as pc

from meta.catalog import TableRef
from meta.commits import NO_PARTITION
from meta.connection import PgConnection, session
from meta.distributed import SparkOrderer
from meta.errors import MetaError, ReplayError
from meta.merge_io import Head, read_head, read_rows, read_snapshot, write_merge
from meta.queries import partition_descs
from meta.replay import (
    RESET_OPS,
    first_duplicate,
    is_permutation,
    merge_positions,
    positions_of,
    tail_start,
)

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
    # The merged order, as Arrow columns: a million commits become Python objects only
    # when a caller asks for `order` or `versions`.
    merged_ids: pa.Array | pa.ChunkedArray = field(
        default_factory=lambda: pa.array([], pa.string()), repr=False
    )
    merged_versions: pa.Array | pa.ChunkedArray = field(
        default_factory=lambda: pa.array([], pa.int64()), repr=False
    )

    @cached_property
    def order(self) -> list[str]:
        """Commit ids in merge order."""
        return self.merged_ids.to_pylist()

    @cached_property
    def versions(self) -> list[int | None]:
        """Their versions (None: a commit without one)."""
        return self.merged_versions.to_pylist()

    def summary(self) -> dict:
        known = pc.min_max(self.merged_versions).as_py()
        return {
            **{f.name: getattr(self, f.name) for f in fields(self) if f.name in SUMMARY_FIELDS},
            "versions": {
                "count": int(pc.count(self.merged_versions).as_py()),
                "min": known["min"],
                "max": known["max"],
            },
        }


SUMMARY_FIELDS = {f.name for f in fields(PartitionMerge)} - {"merged_ids", "merged_versions"}


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
            parts.append(p.summary())
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
            lines.append(
                f"{self.table}{partition_label(p.partition_desc)}: partition version "
                f"{p.head_version}, {p.live_commits} live commits ({p.replayed} replayed "
                f"since the checkpoint): {what}; commits in order: "
                f"{describe_versions(p.merged_versions.to_pylist())}"
            )
        if not self.partitions:
            lines.append(f"{self.table}: no commits yet, nothing to merge")
        lines[-1] += f" ({self.seconds:.3f} s)"  # on the line it times, not a line alone
        return "\n".join(lines)


def partition_label(desc: str) -> str:
    """How a partition is named to a person: nothing for LakeSoul's placeholder of an
    unpartitioned table (`-5`), the range description otherwise."""
    return "" if desc == NO_PARTITION else f" partition {desc}"


def describe_versions(versions: list[int | None], shown: int = 12) -> str:
    """Commit versions in snapshot order for a person: runs of consecutive versions
    collapsed (`0-10`), a commit without a version (a compaction or a plain LakeSoul
    write) as `unversioned`, at most `shown` items."""
    items: list[str] = []
    i = 0
    while i < len(versions) and len(items) < shown:
        v = versions[i]
        if v is None:
            items.append("unversioned")
            i += 1
            continue
        last = v
        i += 1
        while i < len(versions) and versions[i] == last + 1:
            last += 1
            i += 1
        items.append(f"v{v}" if last == v else f"v{v}-{last}")
    more = f" and {len(versions) - i} more" if i < len(versions) else ""
    return (", ".join(items) or "none") + more


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
    with session(conn) as pgc:
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

    orderer = SparkOrderer(spark, conn)
    if force == "distributed":
        return lambda n: orderer
    limit = threshold if threshold is not None else DISTRIBUTED_THRESHOLD
    return lambda n: orderer if n >= limit else None


def _merge_partition(
    cur, table: TableRef, desc: str, dry_run: bool, chooser=lambda n: None
) -> PartitionMerge:
    head = read_head(cur, table.table_id, desc)
    if head is None:
        raise MetaError(f"{table.name}: partition {desc} has no version")
    orderer = chooser(head.live)
    if orderer is not None:
        ordered = orderer.order(table.table_id, desc, head.version, head.live)
        arrival = read_snapshot(cur, table.table_id, desc, head.version)
        return _write_merge(
            cur,
            table,
            desc,
            dry_run,
            head,
            positions_of([c.commit_id for c in ordered], arrival),
            ids=pa.array([c.commit_id for c in ordered], pa.string()),
            versions=pa.array([c.version for c in ordered], pa.int64()),
            ops=pa.array([c.commit_op for c in ordered], pa.string()),
            replayed=head.live,
            path="distributed",
        )
    rows = read_rows(cur, table.table_id, desc, head)
    positions = _order_rows(table, rows)
    take = pa.array(positions)
    return _write_merge(
        cur,
        table,
        desc,
        dry_run,
        head,
        positions,
        ids=rows["commit_id"].take(take),
        versions=rows["version"].take(take),
        ops=rows["commit_op"].take(take),
        replayed=head.live - head.covered,
        path="driver",
    )


def _order_rows(table: TableRef, rows: pa.Table) -> np.ndarray:
    """The replay rules (`meta.replay`) on a partition's commit rows in arrival order:
    their positions in merge order."""
    found = rows["found"].to_numpy()
    if not found.all():
        missing = rows["commit_id"].take(pa.array(np.flatnonzero(found == 0)[:3])).to_pylist()
        raise MetaError(f"snapshot names commits with no data_commit_info row: {missing}")
    ops = rows["commit_op"]
    resets = pc.fill_null(pc.is_in(ops, pa.array(sorted(RESET_OPS))), False).to_numpy(
        zero_copy_only=False
    )
    known = rows["version"].is_valid().to_numpy(zero_copy_only=False)
    versions = pc.fill_null(rows["version"], 0).to_numpy()
    start = tail_start(resets)
    dup = first_duplicate(versions[start:], known[start:])
    if dup is not None:
        a, b = (rows["commit_id"][start + p].as_py() for p in dup)
        raise ReplayError(f"commits {a} and {b} both have version {versions[start + dup[0]]}")
    return merge_positions(resets, versions, known)


def _write_merge(
    cur,
    table: TableRef,
    desc: str,
    dry_run: bool,
    head: Head,
    positions: np.ndarray,
    ids: pa.Array,
    versions: pa.Array,
    ops: pa.Array,
    replayed: int,
    path: str,
) -> PartitionMerge:
    """Check the merged order is a permutation of the head's commits, then write it
    (`meta.merge_io.write_merge`) unless this is a dry run."""
    if not is_permutation(positions, head.live):
        raise MetaError(f"{table.name}: merge would change the set of live commits")
    result = PartitionMerge(
        desc,
        head.version,
        head.live,
        replayed,
        not np.array_equal(positions, np.arange(head.live)),
        merged_ids=ids,
        merged_versions=versions,
        path=path,
    )
    if dry_run:
        return result
    written = write_merge(cur, table.table_id, desc, head, positions, versions, ops)
    if result.reordered:
        result.new_version = written
    return result
