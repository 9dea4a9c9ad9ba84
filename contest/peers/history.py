"""What the peer formats share to read history under the newest schema (a newer
schema reads older commits: added columns NULL, narrower integers widened), beside
contest/peers/schema.py (which schema change a batch brings to a table): the operators
of a batch's own columns (a batch written before a column was added lacks it), and a
table read at any commit put into the workload's newest columns and merged types
(`newest_columns`: a column added later as NULL, an int32 column written before its
widening as int64)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data import operators as registry
from contest.data.workload import contract_operators
from contest.peers.merge import source_operators

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def simple_fields(df: DataFrame, skip: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(name, Spark simple type) of a DataFrame's columns, those in `skip` left out."""
    return [(f.name, f.dataType.simpleString()) for f in df.schema.fields if f.name not in skip]


def batch_operators(cfg: Config, columns: Sequence[str]) -> dict[str, str]:
    """The workload's operators of the columns a batch has, in the workload's order."""
    return source_operators(contract_operators(cfg.workload), columns)


def newest_columns(df: DataFrame, ops: Mapping[str, str]) -> DataFrame:
    """A table read at some commit in the newest schema's columns and merged types: a
    column the read lacks (added later) as NULL, every integer as int64 (a sum's merged
    type; a column written int32 before its widening reads as int64 throughout)."""
    from pyspark.sql import functions as F  # deferred: slow to import
    from pyspark.sql.types import IntegralType  # deferred: slow to import

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
