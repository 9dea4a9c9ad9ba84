"""The contest example's main baseline, copy-on-write: per batch, a full outer join of
the table with the batch, merged by the contract, overwriting the table.

Every batch rewrites all data, so the write cost grows with the table: this is
what merge-on-read saves. The stored rows are already merged (one per key), so a
read has nothing left to combine.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data import operators as registry
from contest.data.batches import Batch
from contest.data.workload import contract_operators
from contest.read.job import merged
from contest.write.files import write_dataframe
from contest.write.report import BatchResult, WriteReport, fail, log_batch
from meta.catalog import TableRef
from meta.commits import commit_files, committed_versions, head_snapshot
from meta.connection import PgConnection

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

KEY = "uuid"


def batch_operators(columns: Sequence[str], ops: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every non-key column's operator, in the batch's column order: `ops`' (default:
    the contest's contract), else the registry's default."""
    ops = registry.CONTRACT if ops is None else ops
    return {c: ops.get(c, registry.DEFAULT) for c in columns if c != KEY}


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def collapse_batch(df: DataFrame, ops: Mapping[str, str] | None = None) -> DataFrame:
    """One row per key inside a batch, each column by its operator's Spark aggregate
    (the operator registry's `spark_collapse`), rows in file order."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import functions as F

    ops = batch_operators(df.columns, ops)
    ranked = df.withColumn("__pos", F.monotonically_increasing_id())
    aggs = [F.expr(registry.spark_collapse(op, _q(c), "__pos")).alias(c) for c, op in ops.items()]
    return ranked.groupBy(KEY).agg(*aggs)


_SPARK_TYPES = {registry.INT64: "bigint", registry.FLOAT64: "double", registry.STRING: "string"}


def under_newest_schema(df: DataFrame, ops: Mapping[str, str]) -> DataFrame:
    """A batch read under the newest schema (its workload evolves it): a column added after it as
    NULL, a column written narrower (int32 before its widening) cast to its operator's
    type; the batch's own columns otherwise as they are."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import functions as F

    cols = [F.col(KEY)]
    for c, op in ops.items():
        typ = _SPARK_TYPES[registry.get(op).default_type]
        value = F.col(_q(c)) if c in df.columns else F.lit(None)
        cols.append(value.cast(typ).alias(c) if c not in df.columns or typ == "bigint" else value)
    return df.select(*cols)


def upsert_cow(
    current: DataFrame | None, batch: DataFrame, ops: Mapping[str, str] | None = None
) -> DataFrame:
    """The merged table after one batch: full outer join of the table with the collapsed
    batch, each column of a key the batch has by its operator's `spark_combine`; a key
    the batch does not have keeps its row."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import functions as F

    ops = batch_operators(batch.columns, ops)
    new = collapse_batch(batch, ops)
    names = [KEY, *ops]
    if current is None:
        return new.select(*names)
    t, b = current.alias("t"), new.alias("b")
    joined = t.join(b, F.col(f"t.{KEY}") == F.col(f"b.{KEY}"), "full_outer")
    cols = {KEY: F.coalesce(F.col(f"b.{KEY}"), F.col(f"t.{KEY}"))}
    for c, op in ops.items():
        merged = F.expr(registry.spark_combine(op, f"t.{_q(c)}", f"b.{_q(c)}"))
        cols[c] = F.when(F.col(f"b.{KEY}").isNull(), F.col(f"t.{_q(c)}")).otherwise(merged)
    return joined.select(*[cols[c].alias(c) for c in names])


def write_cow(
    spark: SparkSession, conn: PgConnection, cfg: Config, table: TableRef, batches: Sequence[Batch]
) -> WriteReport:
    """Batches one after another in version order, each rewriting the whole table."""
    report = WriteReport(f"{table.namespace}.{table.name}", table.path)
    started = time.perf_counter()
    for batch in sorted(batches, key=lambda b: b.version):
        res = BatchResult(batch.name, batch.version, start_s=time.perf_counter() - started)
        try:
            t0 = time.perf_counter()
            _, commits = head_snapshot(conn, table)
            current = merged(spark, conn, cfg, table)[0] if commits else None
            outcome = write_dataframe(
                upsert_cow(
                    current,
                    under_newest_schema(
                        spark.read.parquet(str(batch.path)), contract_operators(cfg.workload)
                    ),
                    contract_operators(cfg.workload),
                ),
                table,
                codec=cfg.write.codec,
                repartition=table.hash_buckets,
            )
            res.write_s = time.perf_counter() - t0
            res.rows = sum(f.rows for f in outcome.files)
            res.files, res.bytes = len(outcome.files), sum(f.size for f in outcome.files)
            res.shuffled = outcome.shuffled
            committed = commit_files(
                conn,
                table,
                outcome.files,
                version=batch.version,
                batch=batch.name,
                commit_op="UpdateCommit",
                # The overwrite holds every batch before it: their versions stay live
                # (else the read sees them as missing).
                covers=sorted(committed_versions(conn, table)),
            )
            res.commit_s, res.commit_id = committed.seconds, committed.commit_id
        except Exception as exc:  # later batches depend on this one: stop here
            fail(res, exc)
            res.end_s = time.perf_counter() - started
            report.batches.append(res)
            log_batch(res)
            break
        res.end_s = time.perf_counter() - started
        report.batches.append(res)
        log_batch(res)
    report.wall_s = time.perf_counter() - started
    return report
