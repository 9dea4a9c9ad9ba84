"""The upsert as the peer formats run it: each batch collapsed by key, then merged into
the table by SQL (`merge_sql`, Delta and Iceberg) or by a Spark join (`merged_rows`,
Hudi without a record merger). Every column by its merge operator's Spark expressions
(the operator registry, contest/data/operators.py): the contest's contract by default,
a workload's extra columns with theirs (`peer_operators`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data import operators as registry
from contest.data.batches import Batch
from contest.data.workload import contract_operators
from contest.write.cow import KEY, batch_operators, collapse_batch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def peer_operators(cfg: Config) -> dict[str, str]:
    """Every non-key column's operator: the contest's, then the workload's extra ones."""
    return contract_operators(cfg.workload)


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def collapsed(spark: SparkSession, batch: Batch, ops: Mapping[str, str] | None = None) -> DataFrame:
    """The batch collapsed by uuid, rows in file order (the copy-on-write baseline's
    `collapse_batch`; with the contract: requests summed, NULLs ignored; name the last
    value neither NULL nor "null"; the other columns the last non-NULL value). In the
    batch's own schema (a workload that evolves its schema): only the columns
    the batch has, each in the batch file's type (a sum of an int32 column stays int32,
    so a table created from it is narrow until the batch that widens it)."""
    from pyspark.sql import functions as F  # deferred: slow to import

    ops = dict(registry.CONTRACT if ops is None else ops)
    rows = spark.read.parquet(str(batch.path))
    types = {f.name: f.dataType for f in rows.schema.fields}
    own = source_operators(ops, rows.columns)
    out = collapse_batch(rows, own)
    return out.select(KEY, *[F.col(_q(c)).cast(types[c]).alias(c) for c in own])


def source_operators(ops: Mapping[str, str], columns: Sequence[str]) -> dict[str, str]:
    """The operators of the columns a batch (or its collapsed rows) has, in the
    workload's order: a batch written before a column was added lacks it, and its
    upsert leaves the column as it is."""
    return {c: op for c, op in ops.items() if c in columns}


def merge_sql(target: str, source: str, ops: Mapping[str, str] | None = None) -> str:
    """The upsert of a collapsed batch as one MERGE statement."""
    ops = registry.CONTRACT if ops is None else ops
    sets = [
        f"t.{_q(c)} = " + registry.spark_combine(op, f"t.{_q(c)}", f"s.{_q(c)}")
        for c, op in ops.items()
    ]
    return (
        f"MERGE INTO {target} t USING {source} s ON t.{KEY} = s.{KEY}\n"
        f"WHEN MATCHED THEN UPDATE SET {', '.join(sets)}\n"
        "WHEN NOT MATCHED THEN INSERT *"
    )


def merged_rows(
    current: DataFrame, batch: DataFrame, ops: Mapping[str, str] | None = None
) -> DataFrame:
    """The batch's keys after the upsert, computed in Spark (for Hudi): the collapsed
    batch left-joined with the current rows of its keys, by the MERGE's expressions.
    The current rows are first cut to the batch's keys (a semi join Spark may broadcast),
    so the outer join shuffles batch-sized data, not the table."""
    from pyspark.sql import functions as F  # deferred: slow to import

    ops = batch_operators(batch.columns, ops)
    old = current.join(batch.select(KEY), KEY, "left_semi")
    s, t = batch.alias("s"), old.alias("t")
    cols = {KEY: F.col(f"s.{KEY}")}
    cols |= {
        c: F.expr(registry.spark_combine(op, f"t.{_q(c)}", f"s.{_q(c)}")) for c, op in ops.items()
    }
    return s.join(t, F.col(f"s.{KEY}") == F.col(f"t.{KEY}"), "left").select(
        *[cols[c].alias(c) for c in (KEY, *ops)]
    )


# The order of a streaming source's rows (contest/stream/peer.py): the source file's
# feed number, then the row's index in its file.
STREAM_ORDER = ("_ver", "_pos")


def collapsed_stream(
    df: DataFrame, latest: Sequence[str] = (), ops: Mapping[str, str] | None = None
) -> DataFrame:
    """A micro-batch collapsed by uuid as `collapsed` does, rows ordered by
    `STREAM_ORDER` (a micro-batch of several files has no file order of its own).
    `latest`: columns of `df` kept too, as their largest value over the key's rows (an
    ordering value a format orders the key's collapsed row by)."""
    from pyspark.sql import functions as F  # deferred: slow to import

    ops = dict(registry.CONTRACT if ops is None else ops)
    pos = F.struct(*[F.col(c) for c in STREAM_ORDER])
    ranked = df.withColumn("__pos", pos)
    aggs = [F.expr(registry.spark_collapse(op, _q(c), "__pos")).alias(c) for c, op in ops.items()]
    aggs += [F.max(c).alias(c) for c in latest]
    return ranked.groupBy(KEY).agg(*aggs).select(KEY, *ops, *latest)


def written(df: DataFrame, ops: Mapping[str, str]) -> DataFrame:
    """The rows as the table stores them when they go in uncollapsed: the string "null"
    made NULL in a column whose operator skips it, so a merge that skips NULLs (Paimon's
    last_non_null_value, Hudi's record merger) applies the operator."""
    from pyspark.sql import functions as F  # deferred: slow to import

    for col, name in ops.items():
        if registry.get(name).null_string:
            df = df.withColumn(col, F.when(F.col(col) == "null", F.lit(None)).otherwise(F.col(col)))
    return df
