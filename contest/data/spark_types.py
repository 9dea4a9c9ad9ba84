"""Spark SQL's DDL name for each Arrow type a workload's columns may have: what a
batch's lacking column is cast to, a table's column declared as, a read put into the
workload's merged types by (contest/peers, contest/read/newest.py)."""

from __future__ import annotations

import pyarrow as pa

from contest.errors import DataError

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
