"""What the peer formats share to read history under the newest schema (seed 004,
issue 40): which schema change a batch brings to a table (`schema_changes`, a pure
function), the operators of a batch's own columns (a batch written before a column
was added lacks it), and a table read at any commit put into the workload's newest
columns and merged types (`newest_columns`: a column added later as NULL, an int32
column written before its widening as int64)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data.workload import contract_operators

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# Spark's simple type names the formats are written with, narrow to wide.
INTEGERS = ("tinyint", "smallint", "int", "bigint")


@dataclass(frozen=True)
class Change:
    """One column a batch brings: `added` (the table lacks it), `widened` (an integer
    the table holds narrower), `narrowed` (the table's is wider: never applied, the
    batch's values are cast up on write) or `retyped` (no widening: refused)."""

    kind: str
    column: str
    old: str  # the table's type ("" for an added column)
    new: str  # the batch's type

    def __str__(self) -> str:
        if self.kind == "added":
            return f"added {self.column} {self.new}"
        return f"{self.kind} {self.column} {self.old}->{self.new}"


def schema_changes(
    table: Sequence[tuple[str, str]], batch: Sequence[tuple[str, str]]
) -> list[Change]:
    """The changes that bring a table of columns `table` ((name, Spark simple type)) to
    the batch's, in the batch's column order; [] when the batch fits the table as it is.
    A column the table has and the batch lacks is no change (it reads NULL for the
    batch's rows)."""
    have = dict(table)
    out = []
    for name, typ in batch:
        old = have.get(name)
        if old is None:
            out.append(Change("added", name, "", typ))
        elif old != typ:
            if old in INTEGERS and typ in INTEGERS:
                kind = "widened" if INTEGERS.index(typ) > INTEGERS.index(old) else "narrowed"
            else:
                kind = "retyped"
            out.append(Change(kind, name, old, typ))
    return out


def simple_fields(df: DataFrame, skip: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(name, Spark simple type) of a DataFrame's columns, those in `skip` left out."""
    return [(f.name, f.dataType.simpleString()) for f in df.schema.fields if f.name not in skip]


def own_operators(ops: Mapping[str, str], columns: Sequence[str]) -> dict[str, str]:
    """The operators of the columns a batch has (one written before a column was added
    lacks it), in the operators' order."""
    return {c: op for c, op in ops.items() if c in columns}


def batch_operators(cfg: Config, columns: Sequence[str]) -> dict[str, str]:
    """The workload's operators of the columns a batch has, in the workload's order."""
    return own_operators(contract_operators(cfg.workload), columns)


def newest_columns(df: DataFrame, ops: Mapping[str, str]) -> DataFrame:
    """A table read at some commit in the newest schema's columns and merged types: a
    column the read lacks (added later) as NULL, every integer as int64 (a sum's merged
    type; a column written int32 before its widening reads as int64 throughout)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegralType

    from contest.data import operators as registry

    types = {f.name: f.dataType for f in df.schema.fields}
    cols = [F.col("uuid")]
    for name, op in ops.items():
        typ = types.get(name)
        if typ is None:
            kind = registry.get(op).default_type
            spark_type = {"int64": "bigint", "float64": "double"}.get(kind, "string")
            cols.append(F.lit(None).cast(spark_type).alias(name))
        elif isinstance(typ, IntegralType):
            cols.append(F.col(name).cast("bigint").alias(name))
        else:
            cols.append(F.col(name))
    return df.select(*cols)
