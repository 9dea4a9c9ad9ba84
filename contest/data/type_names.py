"""The type names a workload's columns have: the contest's int64 (any integer), float64
and string, and a user's decimals, dates and timestamps (with a zone or without one),
each name exact (a decimal keeps its precision and scale) and grouped in families, as
the operator registry (contest/data/operators.py) lists what each operator takes; their
Arrow and DuckDB types."""

from __future__ import annotations

import pyarrow as pa

INT64, FLOAT64, STRING = "int64", "float64", "string"
# The families of a user's other types (issue 60): a decimal of any precision and scale,
# a date, a timestamp with or without a time zone. An operator lists the families it
# takes; a column's exact type (`type_name`) keeps its precision, scale and zone.
DECIMAL, DATE, TIMESTAMP = "decimal", "date", "timestamp"
# Every row-picking and comparing operator takes them; a sum takes decimals.
ORDERED = (INT64, FLOAT64, STRING, DECIMAL, DATE, TIMESTAMP)
# A decimal sum keeps the column's scale at the widest precision (Spark's and DuckDB's
# sums widen to it as well).
DECIMAL_SUM_PRECISION = 38


def type_name(typ: pa.DataType) -> str:
    """int64 (any integer), float64 (any float), string (string, large string),
    decimal(P,S), date, timestamp (no time zone), timestamptz (one: the values are
    instants), or the type's own name."""
    if pa.types.is_integer(typ):
        return INT64
    if pa.types.is_floating(typ):
        return FLOAT64
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return STRING
    if pa.types.is_decimal(typ):
        return f"{DECIMAL}({typ.precision},{typ.scale})"
    if pa.types.is_date(typ):
        return DATE
    if pa.types.is_timestamp(typ):
        return TIMESTAMP + ("tz" if typ.tz else "")
    return str(typ)


def family(name: str) -> str:
    """A type name's family, as operators list what they take (decimal(15,2): decimal;
    timestamptz: timestamp)."""
    if name.startswith(DECIMAL + "("):
        return DECIMAL
    return TIMESTAMP if name == TIMESTAMP + "tz" else name


def decimal_parts(name: str) -> tuple[int, int]:
    precision, scale = name[len(DECIMAL) + 1 : -1].split(",")
    return int(precision), int(scale)


def arrow_type(name: str) -> pa.DataType:
    """The Arrow type of a type name (`type_name`'s inverse; a timestamp in
    microseconds, one with a zone in UTC)."""
    if family(name) == DECIMAL:
        return pa.decimal128(*decimal_parts(name))
    simple = {
        INT64: pa.int64(),
        FLOAT64: pa.float64(),
        STRING: pa.string(),
        DATE: pa.date32(),
        TIMESTAMP: pa.timestamp("us"),
        TIMESTAMP + "tz": pa.timestamp("us", tz="UTC"),
    }
    return simple[name]


# DuckDB's type of each type name (a decimal's: DECIMAL(P,S)); any other: VARCHAR.
_SQL_TYPES = {
    INT64: "BIGINT",
    FLOAT64: "DOUBLE",
    DATE: "DATE",
    TIMESTAMP: "TIMESTAMP",
    TIMESTAMP + "tz": "TIMESTAMPTZ",
}


def sql_type(typ: str) -> str:
    if family(typ) == DECIMAL:
        return "DECIMAL({},{})".format(*decimal_parts(typ))
    return _SQL_TYPES.get(typ, "VARCHAR")


def known_type(name: str) -> bool:
    """A type name the operators' engines carry as it is (else read as its operator's
    default type)."""
    return family(name) in ORDERED
