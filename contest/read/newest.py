"""A read put into the workload's newest schema: what every engine's read of history
returns, whichever commit it read (a peer format's, contest/peers/read.py; stock
LakeSoul's, contest/read/stock.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from contest.config import Config
from contest.data.operators import result_schema
from contest.data.spark_types import spark_type
from contest.data.workload import contract_operators, workload_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def newest_schema(df: DataFrame, cfg: Config) -> DataFrame:
    """A read in the workload's columns and merged types (contest/data/operators.py
    result_schema: a sum as int64): a column the read lacks (added after the commit
    read) as NULL, every integer as int64 (one written int32 before its widening)."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import functions as F

    schema = result_schema(workload_schema(cfg.workload), contract_operators(cfg.workload))
    have = set(df.columns)
    keys = set(cfg.workload.key)
    cols = []
    for f in schema:
        if f.name in keys:  # a key keeps the files' type (an int32 key stays int32)
            cols.append(F.col(f.name))
            continue
        typ = "long" if pa.types.is_integer(f.type) else _merged_type(f.type)
        if f.name not in have:
            cols.append(F.lit(None).cast(typ).alias(f.name))
        elif pa.types.is_integer(f.type) or typ != "string":
            cols.append(F.col(f.name).cast(typ).alias(f.name))
        else:
            cols.append(F.col(f.name))
    return df.select(*cols)


def _merged_type(typ: pa.DataType) -> str:
    """Spark's type of a merged column that is not an integer: a decimal, date or
    timestamp its own (a summed decimal at precision 38), else string (as before a
    user's types: the contest's strings, and floats read as they are)."""
    if pa.types.is_decimal(typ) or pa.types.is_date(typ) or pa.types.is_timestamp(typ):
        return spark_type(typ)
    return "string"
