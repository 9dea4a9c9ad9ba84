"""The Write job of the `lakesoul-stock` engine: what a user of stock LakeSoul does, with
LakeSoul's own code wherever this machine allows it (README, "Strategy lakesoul-stock").

The table is created and every commit made by LakeSoul's DBManager; the rows are written
by LakeSoul's NativeIOWriter inside Spark tasks (primary key, hash buckets, sorted by key;
its codec is SNAPPY, fixed). Batches are committed in version order (stock LakeSoul
applies a bucket's files in commit order): one after another, or with write.threads > 1
the batches after the first written at once, as several LakeSoul writers can, each
committed in its version's turn (`Turnstile`). With `append`,
the batches (`only` names some) are committed onto the head of the table the name holds
already, each commit the partition's next version (a workload's phases).

A workload that evolves its schema evolves the table the way LakeSoul's
connector does: the batch that brings a column (or widens an int32 to int64) is
committed after DBManager's `updateTableSchema` gave the table its new schema, and its
files hold the columns the batch has (their `file_exist_cols`); older files keep theirs
and are read under the newest schema (contest/read/stock.py). Which schema each batch's
commit finds is worked out before any batch is written (`schema_plan`), so concurrent
writers write each batch in its commit's types.

Two rewrites make LakeSoul's own merge operators give the contract's result (a workload's
extra columns the same way, by their operators' entries in contest/data/operators.py; an
operator LakeSoul has no form of is refused before any work, contest/engines/):
- `name`: the literal string "null" is written as NULL, so `UseLastNotNull` gives the last
  name that is neither NULL nor "null" (NULL when there is none): the contract's rule.
- `requests`: `SumAll` turns a key's sum NULL as soon as one of its values is NULL, while
  the contract's sum ignores NULLs. So NULL is written as 0 and a count column (1 for a
  value, 0 for NULL) beside it, both summed with `SumAll`; a read turns the sum into NULL
  where the count is 0 (all values NULL). Exact for any data, and both columns are int64.
"""

from __future__ import annotations

import threading
import time
import uuid as uuidlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from contest.config import Config
from contest.data import operators as registry
from contest.data.batches import SCHEMA, Batch, discover
from contest.data.stock_layout import (
    SIMPLE_TYPES,
    counted,
    null_string_columns,
    schema_plan,
    stored_schema,
)
from contest.data.workload import batch_schema, contract_operators, schema_of_batch, workload_schema
from contest.errors import DataError, RunError
from contest.infra.dbmanager import DBManager, StockTable, column_specs, columns_of
from contest.infra.lakesoul_jvm import jlist
from contest.write.cleanup import delete_table_files
from contest.write.job import refuse_committed, select_batches
from contest.write.report import BatchResult, WriteReport, fail, log, log_batch
from meta import catalog
from meta.catalog import schema_from_json
from meta.commits import claim_version, committed_versions, live_commit_count
from meta.connection import PgConnection
from meta.tokens import ownership

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

PRIMARY_KEY = "uuid"
BATCH_ROWS = 8192


def stock_schema(schema: pa.Schema = SCHEMA, ops: Mapping[str, str] | None = None) -> pa.Schema:
    """The stored schema: the workload's columns (default: the contest's), then a count
    column per summed column."""
    ops = registry.CONTRACT if ops is None else ops
    return pa.schema(list(schema) + [pa.field(c, pa.int64()) for c in counted(ops).values()])


def stock_layout(cfg: Config) -> tuple[pa.Schema, dict[str, str]]:
    """The configured workload's stored schema and its operators."""
    ops = contract_operators(cfg.workload)
    return stock_schema(workload_schema(cfg.workload), ops), ops


def stock_rows(df: DataFrame, ops: Mapping[str, str] | None = None) -> DataFrame:
    """A batch as the stock table stores it (module docstring)."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import functions as F

    ops = registry.CONTRACT if ops is None else ops
    ops = {c: op for c, op in ops.items() if c in df.columns}  # the batch's own columns
    sums, nulls = counted(ops), null_string_columns(ops)
    types = {f.name: f.dataType for f in df.schema.fields}
    cols = []
    for name in df.columns:
        col = F.col(name)
        if name in nulls:
            col = F.when(col == F.lit("null"), F.lit(None).cast("string")).otherwise(col)
        elif name in sums:
            col = F.coalesce(col, F.lit(0).cast(types[name]))
        cols.append(col.alias(name))
    for summed, count in sums.items():
        cols.append(F.when(F.col(summed).isNull(), 0).otherwise(1).cast("long").alias(count))
    return df.select(cols)


def write_native(
    spark: SparkSession,
    df: DataFrame,
    table: StockTable,
    hash_buckets: int,
    schema: pa.Schema,
) -> list[tuple[str, int]]:
    """`df` written by LakeSoul's NativeIOWriter in Spark tasks, shuffled into the table's
    buckets first as LakeSoul's connector does (one task, one file per bucket); the
    files' columns and types are `schema`'s (the batch's own columns)."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import functions as F

    jvm: Any = spark._jvm
    typed = df.select(*[F.col(f.name).cast(SIMPLE_TYPES[f.type]) for f in schema])
    rows = typed.repartition(hash_buckets, *table.primary_keys)
    lines = jvm.contest.lakesoul.StockIO.write(
        rows._jdf,
        jlist(jvm, column_specs(schema)),
        table.primary_keys[0],
        hash_buckets,
        table.path,
        BATCH_ROWS,
    )
    out = []
    for line in lines:
        path, size = str(line).rsplit("\t", 1)
        out.append((path, int(size)))
    return out


def prepare_stock_table(
    db: DBManager,
    conn: PgConnection,
    cfg: Config,
    path: str,
    name: str,
    replace: bool,
    schema: pa.Schema | None = None,
) -> StockTable:
    """A new table created by DBManager, of `schema` (default: the workload's newest
    stored schema); a taken name or path is an error unless `replace` (then the old
    table is dropped and its data files deleted)."""
    catalog.check_name(name)
    uri = catalog.table_uri(path)
    taken = [
        t
        for t in catalog.list_tables(conn)
        if t.path == uri or (t.name == name and t.namespace == cfg.table.namespace)
    ]
    if taken and not replace:
        what = "; ".join(f"table {t.namespace}.{t.name} at {t.path}" for t in taken)
        raise RunError(f"cannot create {name} at {uri}: taken by {what} (--replace recreates it)")
    catalog.refuse_nesting(conn, f"{cfg.table.namespace}.{name}", uri, {t.table_id for t in taken})
    for t in taken:
        # Files first (which are the table's is read from its metadata), then the table.
        delete_table_files(
            t.path, ownership(conn, t.table_id), catalog.neighbours(conn, t.table_id, t.path)
        )
        catalog.drop_table(conn, t.name, t.namespace)
    schema = stock_layout(cfg)[0] if schema is None else schema
    return db.create_table(
        name, cfg.table.namespace, uri, schema, PRIMARY_KEY, cfg.table.hash_buckets
    )


def stock_table_to_append(db: DBManager, cfg: Config, path: str, name: str) -> StockTable | None:
    """The stock table `name` holds, to append to: None when there is none; one at
    another path, or one not written by this engine (a column the workload's stored
    schema lacks, or a summed column without its count column), is an error."""
    table = db.table(name, cfg.table.namespace)
    if table is None:
        return None
    uri = catalog.table_uri(path)
    where = f"--append: table {table.namespace}.{name}"
    if table.path != uri:
        raise RunError(f"{where} is at {table.path}, not {uri}")
    have = [c.rsplit(":", 1)[0] for c in columns_of(table.schema_json)]
    newest, ops = stock_layout(cfg)
    counts = [n for c, n in counted(ops).items() if c in have]
    if not set(have) <= set(newest.names) or not set(counts) <= set(have):
        raise RunError(f"{where} was not written by the lakesoul-stock engine (its columns)")
    return table


def refuse_unversioned(conn: PgConnection, ref: catalog.TableRef, batches: Sequence[Batch]) -> None:
    """`--append` onto a stock table, refused before anything is written when it would
    count a batch twice or apply one out of order: a version the table holds, one older
    than its newest (stock LakeSoul applies a bucket's files in commit order), or a table
    whose commits carry no versions (written before they were recorded: unknown)."""
    refuse_committed(conn, ref, batches)
    done = committed_versions(conn, ref)
    where = f"--append: table {ref.namespace}.{ref.name}"
    if live_commit_count(conn, ref) > len(done):
        raise DataError(
            f"{where} has commits without a batch version (written before versions were "
            "recorded), so which batches it holds is unknown: nothing written (--replace "
            "writes it again)"
        )
    oldest = min(batches, key=lambda b: b.version, default=None)
    if oldest is not None and done and oldest.version < max(done):
        raise DataError(
            f"{where}: version {oldest.version} ({oldest.name}) is older than version "
            f"{max(done)} the table holds, and stock LakeSoul applies commits in order: "
            "nothing written"
        )


class Turnstile:
    """Commits in version order from concurrent writers: a writer whose files are
    written waits until every earlier version has passed, then commits. LakeSoul 2.6.2's
    DBManager lands concurrent MergeCommits of one partition in the order they land
    (`mergeConflict` appends the later one's commit to the snapshot), and its reader
    merges a key's rows in snapshot order; so only the commits are ordered, the writes
    overlap. After a failure, no later version commits (it would skip the failed one)."""

    def __init__(self, versions: Sequence[int]):
        self._order = sorted(versions)
        self._next = 0
        self._ok = True
        self._cond = threading.Condition()

    def take(self, version: int, commit: Callable[[bool], bool]) -> None:
        """Wait for `version`'s turn, then `commit(every earlier version committed)`,
        which says whether this one committed; the next version goes after it."""
        mine = self._order.index(version)
        with self._cond:
            self._cond.wait_for(lambda: self._next == mine)
            ok = False
            try:
                ok = commit(self._ok)
            finally:
                self._ok = self._ok and ok
                self._next += 1
                self._cond.notify_all()


def run_stock_write(
    spark: SparkSession,
    conn: PgConnection,
    cfg: Config,
    data_dir: str | Path,
    table_path: str,
    table_name: str | None = None,
    replace: bool = False,
    append: bool = False,
    only: Sequence[int] | None = None,
) -> WriteReport:
    """Upserts in version order; the first failure stops the write (a later version
    must not be applied before an earlier one). With write.threads > 1 the batches
    after the first are written concurrently and committed in version order
    (`Turnstile`). `only`: these batch indices; `append`: onto the table the name holds
    (created when there is none)."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import functions as F

    w = cfg.workload
    found = discover(data_dir, cfg.write.versions or None, schema_of_batch(w))
    batches = sorted(select_batches(found, only, data_dir), key=lambda b: b.version)
    ops = contract_operators(w)
    stored = [stored_schema(batch_schema(w, b.index), ops) for b in batches]
    db = DBManager(spark)
    name = table_name or Path(table_path).name
    table = stock_table_to_append(db, cfg, table_path, name) if append else None
    appended = table is not None
    # The table's schema each batch's commit finds, worked out before anything is written
    # (a change LakeSoul's reader cannot follow is refused here, nothing written).
    plan = schema_plan(schema_from_json(table.schema_json) if table else None, stored)
    if table is None:
        table = prepare_stock_table(db, conn, cfg, table_path, name, replace, plan[0][0])
    report = WriteReport(
        f"{table.namespace}.{table.name}",
        table.path,
        # The stock engine has no --resume: its upserts start again from a new table.
        retry_hint="rerun the write with --replace (the stock engine starts the table again)",
    )
    started = time.perf_counter()
    log.info(
        "lakesoul-stock: table %s %s at %s",
        name,
        "appended to" if appended else "created by DBManager",
        table.path,
    )
    ref = catalog.get_table(conn, table.name, table.namespace)
    if appended:
        refuse_unversioned(conn, ref, batches)

    steps = zip(batches, stored, plan, strict=True)
    step = {b.version: (own, after, changed) for b, own, (after, changed) in steps}

    def write(batch: Batch) -> tuple[BatchResult, list[tuple[str, int]]]:
        """The batch's files, written by the native writer (nothing committed yet), in
        the types the table will have when the batch commits."""
        res = BatchResult(batch.name, batch.version, start_s=time.perf_counter() - started)
        files: list[tuple[str, int]] = []
        try:
            spark.sparkContext.setLocalProperty(
                "spark.job.description", f"lakesoul-stock {batch.name} v{batch.version}"
            )
            t0 = time.perf_counter()
            df = spark.read.parquet(str(batch.path))
            null_keys = df.where(F.col(PRIMARY_KEY).isNull()).count()
            if null_keys and not cfg.write.drop_null_keys:
                raise DataError(
                    f"{batch.path}: {null_keys} row(s) with a NULL uuid "
                    "(set write.drop_null_keys=true to drop and count them)"
                )
            df = df.where(F.col(PRIMARY_KEY).isNotNull()) if null_keys else df
            own, after, _ = step[batch.version]
            files = write_native(
                spark,
                stock_rows(df, ops),
                table,
                cfg.table.hash_buckets,
                pa.schema([after.field(n) for n in own.names]),
            )
            res.write_s = time.perf_counter() - t0
            res.shuffled = True
            res.null_keys_dropped = null_keys
            res.rows = batch.rows - null_keys
            res.files = len(files)
            res.bytes = sum(size for _, size in files)
        except Exception as exc:
            fail(res, exc)
        return res, files

    def commit(batch: Batch, res: BatchResult, files: list[tuple[str, int]]) -> None:
        """The written files committed by DBManager as the table's next commit, after the
        schema change the batch brings (DBManager's updateTableSchema)."""
        own, after, changed = step[batch.version]
        try:
            if changed:
                db.update_schema(table.table_id, after)
                log.info(
                    "lakesoul-stock: %s: table schema %s",
                    batch.name,
                    ", ".join(str(c) for c in changed),
                )
            # The version first (DBManager's commit knows none), under the commit's id:
            # a version is then committed at most once, and a stopped write's claim
            # that never landed is taken over by the next.
            commit_id = str(uuidlib.uuid4())
            claim_version(conn, ref, commit_id, batch.version, batch.name)
            committed = db.commit(table.table_id, files, own.names, commit_id=commit_id)
            res.commit_s = committed.seconds
            res.commit_id = committed.commit_id
            res.commit_retries = committed.redriven
        except Exception as exc:
            fail(res, exc)

    def upsert(batch: Batch, turn: Turnstile | None = None) -> BatchResult:
        res, files = write(batch)
        if turn is None:
            if res.error is None:
                commit(batch, res, files)
        else:

            def in_turn(earlier_committed: bool) -> bool:
                if res.error is None and earlier_committed:
                    commit(batch, res, files)
                elif res.error is None:
                    res.error = "not committed: an earlier batch failed"
                return res.error is None

            turn.take(batch.version, in_turn)
        res.end_s = time.perf_counter() - started
        log_batch(res)
        return res

    threads = max(1, cfg.write.threads)
    if threads > 1 and len(batches) > 2:
        # The first batch alone (the big one), then the others written at once, each
        # committed in its turn (module docstring: LakeSoul merges in commit order).
        first = upsert(batches[0])
        report.batches.append(first)
        if first.error is None:
            turn = Turnstile([b.version for b in batches[1:]])
            with ThreadPoolExecutor(threads) as pool:
                rest = list(pool.map(lambda b: upsert(b, turn), batches[1:]))
            failed = next((i for i, r in enumerate(rest) if r.error is not None), None)
            report.batches.extend(rest if failed is None else rest[: failed + 1])
    else:
        for batch in batches:
            res = upsert(batch)
            report.batches.append(res)
            if res.error is not None:
                break
    report.wall_s = time.perf_counter() - started
    return report
