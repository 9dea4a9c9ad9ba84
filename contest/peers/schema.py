"""A batch's schema against its table's (a workload that evolves its schema, issue 40):
which columns a batch adds and which integers it widens, as (name, Spark simple type)
maps, pure; and the two maps read from Spark (a batch file's footer, a table's schema
as its format reads it). The writer asks `changes` before each batch and calls the
format's `evolve` when there are any (contest/peers/write.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data.batches import Batch
from contest.data.workload import contract_operators

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

Fields = dict[str, str]  # column -> Spark simple type ("int", "bigint", "string")

INTEGERS = ("tinyint", "smallint", "int", "bigint")


@dataclass(frozen=True)
class Change:
    """One column a batch brings: `added` (the table lacks it), `widened` (an integer
    the table holds narrower) or `retyped` (any other type: the format refuses it)."""

    kind: str
    column: str
    old: str  # the table's type ("" when added)
    new: str

    def __str__(self) -> str:
        if self.kind == "added":
            return f"added {self.column} {self.new}"
        return f"{self.kind} {self.column} {self.old}->{self.new}"


def changes(table: Fields, batch: Fields) -> list[Change]:
    """What a batch brings that the table lacks, in the batch's column order; [] when
    the batch fits the table as it is (a column the batch lacks reads NULL for its rows;
    an integer the batch holds narrower is cast up by the merge)."""
    out = []
    for name, typ in batch.items():
        old = table.get(name)
        if old is None:
            out.append(Change("added", name, "", typ))
        elif old != typ:
            if old in INTEGERS and typ in INTEGERS:
                if INTEGERS.index(typ) > INTEGERS.index(old):
                    out.append(Change("widened", name, old, typ))
            else:
                out.append(Change("retyped", name, old, typ))
    return out


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
