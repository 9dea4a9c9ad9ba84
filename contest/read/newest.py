"""A read put into the workload's newest schema: what every engine's read of history
returns, whichever commit it read (a peer format's, contest/peers/read.py; stock
LakeSoul's, contest/read/stock.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyarrow as pa

from contest.config import Config
from contest.data.operators import result_schema
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
    cols = []
    for f in schema:
        typ = "long" if pa.types.is_integer(f.type) else "string"
        if f.name not in have:
            cols.append(F.lit(None).cast(typ).alias(f.name))
        elif pa.types.is_integer(f.type):
            cols.append(F.col(f.name).cast("long").alias(f.name))
        else:
            cols.append(F.col(f.name))
    return df.select(*cols)
