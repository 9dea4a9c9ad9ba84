"""`contest compact`: rewrite each bucket's files into one merged file with the table's
merge operators, committed as a LakeSoul CompactionCommit that replaces the snapshot.

The merged rows are what a read would produce, so reading the compacted table gives
the same result with one file per bucket to scan. The compaction stands for the
versions it merged (they stay committed, and taken). It commits only if the table
did not change while it ran; otherwise nothing is committed and it says so. Buckets
that are already compact (one file of the head's compaction, nothing newer) are kept
as they are, as Delta's OPTIMIZE skips compacted files; with nothing to rewrite it
commits nothing. A table with missing versions is refused: a batch written later
would apply after the versions the compaction merged above it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from contest.config import Config
from contest.data.changes import INSERT
from contest.data.spark_types import spark_struct
from contest.errors import ReadError
from contest.read.files import (
    WORK_FIELDS,
    BucketMerge,
    MergeTuning,
    files_by_bucket,
    newest_version,
    read_bucket,
)
from contest.read.job import operators_for
from contest.read.operators import merge_rows, validate_operators
from contest.write.cleanup import delete_files, delete_written, wait_for_tasks
from contest.write.files import BUCKET_COL, FILE_ROWS, claim_tokens, file_rows, write_bucket_files
from meta.catalog import TableRef
from meta.commits import (
    DataFile,
    SnapshotCommit,
    commit_files,
    committed_versions,
    head_snapshot,
)
from meta.connection import PgConnection
from meta.replay import Commit, in_version_order
from meta.versions import gaps_of

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class CompactReport:
    table: str
    files_before: int
    files_after: int
    rows: int
    versions: int
    commit_id: str | None  # None: nothing to do, nothing committed
    seconds: float
    buckets_kept: int = 0  # already compact, not rewritten

    @property
    def nothing_to_do(self) -> bool:
        return self.commit_id is None

    def to_dict(self) -> dict:
        d = dict(self.__dict__)
        d["seconds"] = round(self.seconds, 3)
        return d


def compact_buckets(commits: Sequence[SnapshotCommit]) -> dict[int, DataFile]:
    """bucket -> its file, for the buckets that are already compact: their only file
    is one of the compaction commit the snapshot starts with."""
    if not commits or commits[0].commit_op != "CompactionCommit":
        return {}
    count: dict[int, int] = {}
    for c in commits:
        for f in c.files:
            count[f.bucket] = count.get(f.bucket, 0) + 1
    return {f.bucket: f for f in commits[0].files if count[f.bucket] == 1}


def compact(
    spark: SparkSession,
    conn: PgConnection,
    cfg: Config,
    table: TableRef,
    allow_gaps: bool = False,
) -> CompactReport:
    started = time.perf_counter()
    pversion, commits = head_snapshot(conn, table)
    name = f"{table.namespace}.{table.name}"
    if not commits:
        raise ReadError(f"table {name} has no commits: nothing to compact")
    gaps = gaps_of(conn, table)
    if gaps.holes and not allow_gaps:
        raise ReadError(
            f"table {name}: {gaps.describe()}: a batch written later would apply after the "
            "versions the compaction merges; finish the write (contest write --resume) or "
            "compact anyway with --allow-gaps"
        )
    if not in_version_order([Commit(c.commit_id, c.commit_op, c.version) for c in commits]):
        raise ReadError(
            f"table {name}: the snapshot is not in version order: run "
            f"`contest meta merge --table {table.name}` first"
        )
    ops = operators_for(table, cfg)
    keys = list(table.primary_keys)
    validate_operators(table.schema, keys, ops)
    covered = sorted(committed_versions(conn, table))
    before = sum(len(c.files) for c in commits)
    kept = compact_buckets(commits)
    work = [
        (b, json.dumps(f)) for b, f in sorted(files_by_bucket(commits).items()) if b not in kept
    ]
    if not work:
        return CompactReport(
            name, before, before, 0, len(covered), None, time.perf_counter() - started, len(kept)
        )
    plain = pa.schema([f.with_nullable(True) for f in table.schema])
    newest, path, schema, codec = newest_version(commits), table.path, table.schema, cfg.write.codec
    sort = cfg.write.sort
    # Change data merges as the read does (tombstones dropped, absent columns skipped):
    # what is left are live keys, each row an insert in the CDC column.
    change = BucketMerge.of(table, commits, ops, MergeTuning())
    cdc = table.cdc_column

    def merge_files(files: list[tuple[str, int | None]]) -> pa.Table:
        if not change.changes:
            return merge_rows(read_bucket(files, plain, newest), keys, ops)
        merged = next(iter(change(files)))
        if cdc:
            kinds = pa.array([INSERT] * merged.num_rows, pa.string())
            merged = merged.append_column(cdc, kinds)
        return merged

    def task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        for batch in batches:
            for bucket, files in zip(
                batch.column("bucket").to_pylist(), batch.column("files").to_pylist(), strict=True
            ):
                merged = merge_files([tuple(f) for f in json.loads(files)])
                order = pc.sort_indices(merged, sort_keys=[(k, "ascending") for k in keys])
                merged = merged.take(order).cast(schema)
                merged = merged.append_column(
                    BUCKET_COL, pa.array([bucket] * merged.num_rows, pa.int32())
                )
                yield file_rows(
                    write_bucket_files(merged, path, keys, schema, codec, token, sort), 0
                )

    # Its files begin with its token: a failed job's (also of tasks still running) go.
    token = claim_tokens(conn, table, "compact")[0]
    group = f"contest-compact-{token}"
    spark.sparkContext.setJobGroup(group, f"compact {name}", interruptOnCancel=True)
    tasks = spark.sparkContext.parallelize(work, max(len(work), 1)).toDF(spark_struct(WORK_FIELDS))
    try:
        result = tasks.mapInArrow(task, spark_struct(FILE_ROWS)).collect()
    except BaseException:
        spark.sparkContext.cancelJobGroup(group)
        wait_for_tasks(spark, group)
        delete_written(table.path, token)
        raise
    files = [
        DataFile(r["path"], r["size"], tuple(schema.names), r["bucket"], r["rows"])
        for r in result
        if r["path"] is not None
    ]
    try:
        committed = commit_files(
            conn,
            table,
            [*files, *(kept[b] for b in sorted(kept))],
            commit_op="CompactionCommit",
            covers=covered,
            expect_head=pversion,
        )
    except BaseException:
        delete_files([f.path for f in files])
        raise
    return CompactReport(
        name,
        before,
        len(files) + len(kept),
        sum(f.rows for f in files),
        len(covered),
        committed.commit_id,
        time.perf_counter() - started,
        len(kept),
    )
