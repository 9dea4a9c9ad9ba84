"""The Write job: every batch upserted concurrently, each with its user-defined version.

Batches run on a driver thread pool, so their Spark jobs overlap and commits land
in whatever order the writes finish. Each commit records its batch's version in
the same PostgreSQL transaction; `contest meta merge` later orders the snapshot
by version, so the result never depends on completion order (README, "Write: concurrent upserts").
Only big files are written in parts (repartitioned by key through Spark's shuffle, or
cut into row ranges read with pyarrow: write.shuffle); the rest are written without a
shuffle, one task per row group.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import statistics
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from contest.config import Config
from contest.data.batches import (
    Batch,
    check_schema,
    check_unique_versions,
    discover,
)
from contest.data.changes import changes_of
from contest.data.workload import batch_schema, workload_schema
from contest.errors import DataError
from contest.infra.folders import open_input
from contest.infra.spark import cores_of
from contest.write.changes import (
    ChangeShape,
    change_shape,
    file_schema,
    needs_changes,
    write_changes,
)
from contest.write.cleanup import delete_files, delete_table_files, delete_written, wait_for_tasks
from contest.write.cow import write_cow
from contest.write.files import (
    WriteOutcome,
    claim_tokens,
    direct_read_possible,
    row_group_rows,
    write_dataframe,
    write_file_direct,
    write_file_split,
)
from contest.write.report import BatchResult, WriteReport, fail, log, log_batch
from contest.write.split import part_count, plan_ranges
from meta import catalog
from meta.catalog import TableRef
from meta.commits import commit_files, committed_versions
from meta.connection import PgConnection
from meta.tokens import ownership
from meta.versions import plan_versions

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import SparkSession


class WriteMode(enum.Enum):
    """What to do with a table that holds the name or path already."""

    CREATE = "create"  # none may: error naming it
    APPEND = "append"  # the same table (same name and path) is added to; else created
    RESUME = "resume"  # as APPEND, and batches whose version is committed are skipped
    REPLACE = "replace"  # drop whatever holds the name or path, and its files


def big_file_threshold(batches: Sequence[Batch], configured: int) -> int:
    """Bytes from which a batch is repartitioned: configured, or twice the median."""
    if configured > 0:
        return configured
    return int(2 * statistics.median(b.bytes for b in batches)) if batches else 0


def prepare_table(
    conn: PgConnection,
    cfg: Config,
    path: str | Path,
    name: str,
    mode: WriteMode,
    shape: ChangeShape | None = None,
) -> TableRef:
    """The target table, by `mode`; a replaced table's data files are deleted. `shape`:
    a change-data table's columns, key and CDC column (contest/write/changes.py)."""

    def remove_files(old: TableRef) -> None:
        removed, kept = delete_table_files(
            old.path,
            ownership(conn, old.table_id),
            catalog.neighbours(conn, old.table_id, old.path),
        )
        log.info(
            "replaced table %s.%s at %s: removed %d data files%s",
            old.namespace,
            old.name,
            old.path,
            removed,
            f", kept {len(kept)} other files: {kept[:3]}" if kept else "",
        )

    return catalog.create_table(
        conn,
        name,
        path,
        # the contest's columns and a workload's extra ones
        shape.schema if shape else workload_schema(cfg.workload),
        list(shape.keys) if shape else ["uuid"],
        cfg.table.hash_buckets,
        cfg.table.namespace,
        replace=mode is WriteMode.REPLACE,
        reuse=mode in (WriteMode.APPEND, WriteMode.RESUME),
        on_replaced=remove_files,
        cdc_column=shape.cdc_column if shape else "",
    )


def write_batches(
    spark: SparkSession,
    conn: PgConnection,
    cfg: Config,
    table: TableRef,
    batches: Sequence[Batch],
    *,
    before_commit: Callable[[Batch], None] | None = None,
    on_done: Callable[[BatchResult], None] | None = None,
    changes: bool = False,
) -> WriteReport:
    """Upsert the batches concurrently; a failing batch commits nothing, the others go on.
    `changes`: the batches are change data, checked already (contest/write/changes.py)."""
    check_unique_versions({b.index: b.version for b in batches})
    threshold = big_file_threshold(batches, cfg.write.big_file_bytes)
    report = WriteReport(f"{table.namespace}.{table.name}", table.path)
    started = time.perf_counter()
    lock = threading.Lock()

    def one(batch: Batch) -> BatchResult:
        res = BatchResult(batch.name, batch.version, start_s=time.perf_counter() - started)
        # The batch's own schema (a workload that evolves its schema writes older
        # batches without the columns added later, a widened column narrow): the read
        # conforms each file to the table's newest schema.
        schema = batch_schema(cfg.workload, batch.index)
        evolving = bool(cfg.workload.added or cfg.workload.widened)
        wtable = dataclasses.replace(table, schema=schema) if evolving else table
        # Every file of this batch's job begins with its token, and the job has its own
        # group: a failure finds the files of all its tasks (README, "Failures").
        token = claim_tokens(conn, table, "upsert")[0]
        group = f"contest-upsert-{token}"
        spark.sparkContext.setJobGroup(
            group, f"upsert {batch.name} v{batch.version}", interruptOnCancel=True
        )
        written: list[str] = []
        try:
            big = bool(cfg.write.repartition) and batch.bytes >= threshold
            t0 = time.perf_counter()
            if changes:
                outcome = write_changes(
                    spark,
                    batch,
                    table,
                    changes_of(cfg),
                    codec=cfg.write.codec,
                    token=token,
                    sort=cfg.write.sort,
                )
            elif big:
                outcome = write_big(spark, cfg, wtable, batch, token, schema)
            elif cfg.write.reader == "arrow" and direct_read_possible(table):
                _check_file_schema(batch, schema)
                outcome = write_file_direct(
                    spark,
                    str(batch.path),
                    wtable,
                    codec=cfg.write.codec,
                    drop_null_keys=cfg.write.drop_null_keys,
                    token=token,
                    sort=cfg.write.sort,
                    piece_rows=cfg.write.batch_piece_rows,
                    key_words=cfg.write.key_words,
                    file_dictionaries=cfg.write.file_dictionaries,
                    decode_threads=cfg.write.decode_threads,
                )
            else:
                df = spark.read.parquet(str(batch.path))
                check_schema(batch.path, _arrow_schema(df), schema)
                outcome = write_dataframe(
                    df,
                    wtable,
                    codec=cfg.write.codec,
                    drop_null_keys=cfg.write.drop_null_keys,
                    token=token,
                    sort=cfg.write.sort,
                )
            written = [f.path for f in outcome.files]
            res.write_s = time.perf_counter() - t0
            res.shuffled = outcome.shuffled
            res.parts = outcome.parts
            if outcome.null_keys and not cfg.write.drop_null_keys:
                raise DataError(
                    f"{batch.path}: {outcome.null_keys} row(s) with a NULL uuid "
                    "(set write.drop_null_keys=true to drop and count them)"
                )
            res.null_keys_dropped = outcome.null_keys
            res.rows = sum(f.rows for f in outcome.files)
            res.files = len(outcome.files)
            res.bytes = sum(f.size for f in outcome.files)
            if before_commit:
                before_commit(batch)
            committed = commit_files(
                conn, table, outcome.files, version=batch.version, batch=batch.name
            )
            written = []
            res.commit_s = committed.seconds
            res.commit_id = committed.commit_id
            res.commit_retries = committed.retries
        except Exception as exc:  # one batch's failure must not stop the others
            fail(res, exc)
            delete_files(written)
            spark.sparkContext.cancelJobGroup(group)
            wait_for_tasks(spark, group)
            delete_written(table.path, token)
        res.end_s = time.perf_counter() - started
        with lock:
            report.batches.append(res)
            log_batch(res)
            if on_done:
                on_done(res)
        return res

    with ThreadPoolExecutor(max_workers=cfg.write.threads, thread_name_prefix="upsert") as pool:
        list(pool.map(one, batches))
    report.wall_s = time.perf_counter() - started
    return report


def _check_file_schema(batch: Batch, schema: pa.Schema) -> None:
    with open_input(batch.path) as fh:
        check_schema(batch.path, pq.read_schema(fh), schema)


def write_big(
    spark: SparkSession,
    cfg: Config,
    table: TableRef,
    batch: Batch,
    token: str,
    schema: pa.Schema,
) -> WriteOutcome:
    """A big batch written in parts (write.repartition, write.task_rows): its rows
    repartitioned by key through Spark's shuffle, or (write.shuffle = "arrow", one
    string key) contiguous row ranges read by the tasks with pyarrow, no row entering
    the JVM."""
    path = str(batch.path)
    cores = cores_of(spark)
    parts = part_count(batch.rows, cfg.write.task_rows, cfg.write.repartition, cores)
    if cfg.write.shuffle == "arrow" and direct_read_possible(table):
        _check_file_schema(batch, schema)
        group_rows = row_group_rows(path)
        rows = sum(group_rows)
        piece_rows = math.ceil(rows / parts) if rows else 0
        return write_file_split(
            spark,
            path,
            table,
            # write.cut_row_groups off: a row group bigger than a part is one task
            # reading it once, written in the same pieces.
            ranges=plan_ranges(
                group_rows, piece_rows, min(cores, parts) if cfg.write.cut_row_groups else 1
            ),
            group_rows=group_rows,
            piece_rows=piece_rows,
            codec=cfg.write.codec,
            drop_null_keys=cfg.write.drop_null_keys,
            token=token,
            sort=cfg.write.sort,
            key_words=cfg.write.key_words,
            file_dictionaries=cfg.write.file_dictionaries,
            decode_threads=cfg.write.decode_threads,
        )
    df = spark.read.parquet(path)
    check_schema(batch.path, _arrow_schema(df), schema)
    return write_dataframe(
        df,
        table,
        codec=cfg.write.codec,
        repartition=parts,
        drop_null_keys=cfg.write.drop_null_keys,
        token=token,
    )


def _arrow_schema(df) -> object:
    mapping = {
        "string": pa.string(),
        "bigint": pa.int64(),
        "int": pa.int32(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
    }
    return pa.schema(
        [(f.name, mapping.get(f.dataType.simpleString(), pa.null())) for f in df.schema.fields]
    )


def select_batches(
    batches: Sequence[Batch], indices: Sequence[int] | None, data_dir: str | Path
) -> list[Batch]:
    """The batches `--only` names; an index with no batch file is an error (before any
    work), not a write of nothing."""
    if indices is None:
        return list(batches)
    if not indices:
        raise DataError("--only: no batch index given")
    have = {b.index for b in batches}
    unknown = sorted(set(indices) - have)
    if unknown:
        raise DataError(
            f"--only {','.join(map(str, unknown))}: no such batch in {data_dir} "
            f"(it has base-{min(have)} to base-{max(have)})"
            if have
            else f"--only: {data_dir} has no batches"
        )
    return [b for b in batches if b.index in set(indices)]


def expected_versions(found: Sequence[Batch], chosen: Sequence[Batch]) -> dict[int, str]:
    """The versions a table written with `chosen` should hold: theirs, and those of
    the data's other batches below the newest chosen one (`--only 9,10` leaves 0..8
    missing, not absent by design: a read refuses the table until they land)."""
    if not chosen:
        return {}
    top = max(b.version for b in chosen)
    return {b.version: b.name for b in found if b.version <= top}


def refuse_committed(conn: PgConnection, table: TableRef, batches: Sequence[Batch]) -> None:
    """`--append` of a version the table has committed is refused before anything is
    written (the commit would refuse it anyway, after the whole batch was written)."""
    done = committed_versions(conn, table)
    clash = [b for b in batches if b.version in done]
    if clash:
        b = clash[0]
        raise DataError(
            f"version {b.version} ({b.name}) is already committed in "
            f"{table.namespace}.{table.name}: nothing written (--resume skips committed "
            "versions; `contest meta rollback` undoes versions on purpose)"
        )


def run_write(
    spark: SparkSession,
    conn: PgConnection,
    cfg: Config,
    data_dir: str | Path,
    table_path: str | Path,
    table_name: str | None = None,
    mode: WriteMode = WriteMode.CREATE,
    delays: Mapping[int, float] | None = None,
    indices: Sequence[int] | None = None,
) -> WriteReport:
    """discover, create the table, upsert everything: the whole Write job."""
    found = discover(data_dir, cfg.write.versions or None, schema=None)
    batches = select_batches(found, indices, data_dir)
    name = table_name or Path(str(table_path)).name
    # Change data (row kinds, another key, batches of some columns) is checked whole
    # before anything is written; the contest's upserts read only the footers here.
    changes = needs_changes(cfg, batches, [file_schema(b) for b in batches])
    if changes and cfg.write.mode == "cow":
        raise DataError(
            "write.mode = cow (baseline-cow): cannot take change data (row kinds, another "
            "key or batches of some columns): its full outer join per batch keeps no "
            "tombstones nor partial columns"
        )
    shape = change_shape(cfg, batches) if changes else None
    table = prepare_table(conn, cfg, table_path, name, mode, shape)
    if mode is WriteMode.APPEND:
        refuse_committed(conn, table, batches)
    plan_versions(conn, table, expected_versions(found, batches))
    skipped: list[BatchResult] = []
    if mode is WriteMode.RESUME:
        done = committed_versions(conn, table)
        skipped = [
            BatchResult(b.name, b.version, skipped=True, commit_id=None)
            for b in batches
            if b.version in done
        ]
        batches = [b for b in batches if b.version not in done]
        for res in skipped:
            log_batch(res)
    delays = dict(delays or {})

    def delay(batch: Batch) -> None:
        if batch.index in delays:
            time.sleep(delays[batch.index])

    if cfg.write.mode == "cow":
        report = write_cow(spark, conn, cfg, table, batches)
    else:
        report = write_batches(
            spark, conn, cfg, table, batches, before_commit=delay, changes=changes
        )
    report.batches = skipped + report.batches
    return report
