"""The contract's upsert as the peer formats run it: each batch collapsed by key, then
merged into the table by SQL (`merge_sql`, Delta and Iceberg) or by a Spark join
(`merged_rows`, Hudi without a record merger)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from contest.data.batches import COLUMNS, Batch
from contest.write.cow import VALUE_COLS, collapse_batch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def collapsed(spark: SparkSession, batch: Batch) -> DataFrame:
    """The batch collapsed by uuid, rows in file order (the copy-on-write baseline's
    `collapse_batch`: requests summed, NULLs ignored; name the last value neither NULL
    nor "null", which becomes NULL; the other columns the last non-NULL value)."""
    return collapse_batch(spark.read.parquet(str(batch.path))).select(*COLUMNS)


def merge_sql(target: str, source: str) -> str:
    """The contract's upsert of a collapsed batch as one MERGE statement."""
    sets = [
        "t.requests = CASE WHEN t.requests IS NULL THEN s.requests "
        "WHEN s.requests IS NULL THEN t.requests ELSE t.requests + s.requests END"
    ]
    sets += [f"t.{c} = coalesce(s.{c}, t.{c})" for c in VALUE_COLS]
    return (
        f"MERGE INTO {target} t USING {source} s ON t.uuid = s.uuid\n"
        f"WHEN MATCHED THEN UPDATE SET {', '.join(sets)}\n"
        "WHEN NOT MATCHED THEN INSERT *"
    )


def merged_rows(current: DataFrame, batch: DataFrame) -> DataFrame:
    """The batch's keys after the upsert, computed in Spark (for Hudi): the collapsed
    batch left-joined with the current rows of its keys, by the MERGE's expressions.
    The current rows are first cut to the batch's keys (a semi join Spark may broadcast),
    so the outer join shuffles batch-sized data, not the table."""
    from pyspark.sql import functions as F

    old = current.join(batch.select("uuid"), "uuid", "left_semi")
    s, t = batch.alias("s"), old.alias("t")
    req = (
        F.when(F.col("t.requests").isNull(), F.col("s.requests"))
        .when(F.col("s.requests").isNull(), F.col("t.requests"))
        .otherwise(F.col("t.requests") + F.col("s.requests"))
    )
    cols = {"uuid": F.col("s.uuid"), "requests": req}
    cols |= {c: F.coalesce(F.col(f"s.{c}"), F.col(f"t.{c}")) for c in VALUE_COLS}
    return s.join(t, F.col("s.uuid") == F.col("t.uuid"), "left").select(
        *[cols[c].alias(c) for c in COLUMNS]
    )


# The order of a streaming source's rows (contest/stream/peer.py): the source file's
# feed number, then the row's index in its file.
STREAM_ORDER = ("_ver", "_pos")


def collapsed_stream(df: DataFrame, latest: Sequence[str] = ()) -> DataFrame:
    """A micro-batch collapsed by uuid as `collapsed` does, rows ordered by
    `STREAM_ORDER` (a micro-batch of several files has no file order of its own).
    `latest`: columns of `df` kept too, as their largest value over the key's rows (an
    ordering value a format orders the key's collapsed row by)."""
    from pyspark.sql import functions as F

    pos = F.struct(*[F.col(c) for c in STREAM_ORDER])
    name = F.when(F.col("name") == "null", F.lit(None)).otherwise(F.col("name"))
    ranked = df.withColumn("__pos", pos).withColumn("name", name)
    aggs = [F.sum("requests").alias("requests")]
    aggs += [F.max_by(c, F.when(F.col(c).isNotNull(), F.col("__pos"))).alias(c) for c in VALUE_COLS]
    aggs += [F.max(c).alias(c) for c in latest]
    return ranked.groupBy("uuid").agg(*aggs).select(*COLUMNS, *latest)
