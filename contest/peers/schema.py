"""A batch's schema against its table's (a workload that evolves its schema):
which columns a batch adds and which integers it widens, as (name, Spark simple type)
maps, pure (contest/data/schema_changes.py); and the two maps read from Spark (a batch
file's footer, a table's schema as its format reads it). The writer asks `changes`
before each batch and calls the format's `evolve` when there are any
(contest/peers/write.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from contest.config import Config
from contest.data.batches import Batch
from contest.data.schema_changes import INTEGERS, Change, Fields, changes, schema_changes
from contest.data.workload import contract_operators

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# The pure part lives in contest/data/schema_changes.py (stock LakeSoul's writer asks it
# too); its names are this module's as well.
__all__ = [
    "INTEGERS",
    "Change",
    "Fields",
    "batch_changes",
    "batch_fields",
    "changes",
    "fields_of",
    "schema_changes",
]


def fields_of(df: DataFrame, cfg: Config) -> Fields:
    """The workload columns of a DataFrame (a table's read, a batch's rows)."""
    ops = contract_operators(cfg.workload)
    return {f.name: f.dataType.simpleString() for f in df.schema.fields if f.name in ops}


def batch_fields(spark: SparkSession, cfg: Config, batch: Batch) -> Fields:
    """The workload columns a batch file has, with their Spark types (its footer)."""
    return fields_of(spark.read.parquet(str(batch.path)), cfg)


def batch_changes(
    spark: SparkSession, cfg: Config, table_df: DataFrame, batch: Batch
) -> list[Change]:
    """What `batch` brings to the table `table_df` reads (a format's evolve asks)."""
    return changes(fields_of(table_df, cfg), batch_fields(spark, cfg, batch))
