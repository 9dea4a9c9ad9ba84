"""Spark SQL's DDL name for each Arrow type a workload's columns may have: what a
batch's lacking column is cast to, a table's column declared as, a read put into the
workload's merged types by (contest/peers, contest/read/newest.py); and the same types
as a Spark schema made in Python (`spark_struct`), for the jobs' own DataFrames: a DDL
string is parsed by the JVM's SQL parser, whose first use cost a cold timed job ~1 s
before its first task (results/costs.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pyarrow as pa

from contest.errors import DataError

if TYPE_CHECKING:
    from pyspark.sql.types import DataType, StructType

_SPARK_TYPES = (
    (pa.types.is_int64, "bigint"),
    (pa.types.is_int32, "int"),
    (pa.types.is_float64, "double"),
    (pa.types.is_boolean, "boolean"),
    (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "string"),
    (lambda t: pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t), "binary"),
    (pa.types.is_date32, "date"),
    # A timestamp with a zone is an instant (Spark's TIMESTAMP), one without a local
    # date-time (TIMESTAMP_NTZ).
    (lambda t: pa.types.is_timestamp(t) and t.tz is not None, "timestamp"),
    (pa.types.is_timestamp, "timestamp_ntz"),
)


def spark_type(typ: pa.DataType) -> str:
    """`typ`'s Spark DDL name (a decimal with its precision and scale); a one-line error
    for a type no workload column has."""
    if pa.types.is_decimal(typ):
        return f"decimal({typ.precision},{typ.scale})"
    for test, name in _SPARK_TYPES:
        if test(typ):
            return name
    raise DataError(f"no Spark type for a column of {typ}")


def spark_data_type(typ: pa.DataType) -> DataType:
    """`typ` as a pyspark type, by the same table as `spark_type`."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import types as T

    name = spark_type(typ)
    if pa.types.is_decimal(typ):
        return T.DecimalType(typ.precision, typ.scale)
    simple = {
        "bigint": T.LongType,
        "int": T.IntegerType,
        "double": T.DoubleType,
        "boolean": T.BooleanType,
        "string": T.StringType,
        "binary": T.BinaryType,
        "date": T.DateType,
        "timestamp": T.TimestampType,
        "timestamp_ntz": T.TimestampNTZType,
    }
    return simple[name]()


def spark_struct(fields: pa.Schema | Iterable[tuple[str, pa.DataType]]) -> StructType:
    """A Spark schema of an Arrow schema or (name, Arrow type) fields, made without the
    JVM."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql.types import StructField, StructType

    pairs = [(f.name, f.type) for f in fields] if isinstance(fields, pa.Schema) else fields
    return StructType([StructField(name, spark_data_type(typ)) for name, typ in pairs])
