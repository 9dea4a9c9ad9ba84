"""The contest example's main baseline, copy-on-write: per batch, a full outer join of
the table with the batch, merged by the contract, overwriting the table.

Every batch rewrites all data, so the write cost grows with the table: this is
what merge-on-read saves. The stored rows are already merged (one per key), so a
read has nothing left to combine.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data.batches import COLUMNS, Batch
from contest.read.job import merged
from contest.write.files import write_dataframe
from contest.write.report import BatchResult, WriteReport, fail, log_batch
from meta.catalog import TableRef
from meta.commits import commit_files, committed_versions, head_snapshot
from meta.connection import PgConnection

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

VALUE_COLS = [c for c in COLUMNS if c not in ("uuid", "requests")]


def collapse_batch(df: DataFrame) -> DataFrame:
    """One row per key inside a batch, by the contract (rows in file order)."""
    from pyspark.sql import functions as F

    pos = F.monotonically_increasing_id()
    ranked = df.withColumn("__pos", pos).withColumn(
        "name", F.when(F.col("name") == "null", F.lit(None)).otherwise(F.col("name"))
    )
    aggs = [F.sum("requests").alias("requests")]
    aggs += [F.max_by(c, F.when(F.col(c).isNotNull(), F.col("__pos"))).alias(c) for c in VALUE_COLS]
    return ranked.groupBy("uuid").agg(*aggs)


def upsert_cow(current: DataFrame | None, batch: DataFrame) -> DataFrame:
    """The merged table after one batch: full outer join, newer non-NULL values win,
    requests add up (NULL only when both sides are NULL)."""
    from pyspark.sql import functions as F

    new = collapse_batch(batch)
    if current is None:
        return new.select(*COLUMNS)
    t, b = current.alias("t"), new.alias("b")
    joined = t.join(b, F.col("t.uuid") == F.col("b.uuid"), "full_outer")
    req = (
        F.when(F.col("t.requests").isNull(), F.col("b.requests"))
        .when(F.col("b.requests").isNull(), F.col("t.requests"))
        .otherwise(F.col("t.requests") + F.col("b.requests"))
    )
    cols = {"uuid": F.coalesce(F.col("b.uuid"), F.col("t.uuid")), "requests": req}
    cols.update({c: F.coalesce(F.col(f"b.{c}"), F.col(f"t.{c}")) for c in VALUE_COLS})
    return joined.select(*[cols[c].alias(c) for c in COLUMNS])


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
                upsert_cow(current, spark.read.parquet(str(batch.path))),
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
