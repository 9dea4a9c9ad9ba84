"""Merge operators: how the rows of one primary key collapse into one row.

Rows arrive in application order (version, then row position); each column has an
operator. The names follow LakeSoul's native operators (`UseLast`,
`UseLastNotNull`, `SumAll`) plus `UseLastNotNullNorNullString`, the contest's
rule for `name`, which no LakeSoul operator expresses.
"""

from __future__ import annotations

from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

USE_LAST = "UseLast"
USE_LAST_NOT_NULL = "UseLastNotNull"
SUM_ALL = "SumAll"
USE_LAST_NOT_NULL_NOR_NULL_STRING = "UseLastNotNullNorNullString"

OPERATORS = (USE_LAST, USE_LAST_NOT_NULL, SUM_ALL, USE_LAST_NOT_NULL_NOR_NULL_STRING)

# The contest's operators (../shared/contest.md, "Merge semantics").
CONTEST_OPERATORS: dict[str, str] = {
    "ip": USE_LAST_NOT_NULL,
    "hostname": USE_LAST_NOT_NULL,
    "requests": SUM_ALL,
    "name": USE_LAST_NOT_NULL_NOR_NULL_STRING,
    "city": USE_LAST_NOT_NULL,
    "job": USE_LAST_NOT_NULL,
    "phonenum": USE_LAST_NOT_NULL,
}


class MergeOperatorError(ValueError):
    """An operator that cannot apply to the table; the message names the column."""


def validate_operators(schema: pa.Schema, keys: list[str], ops: Mapping[str, str]) -> None:
    for col, op in ops.items():
        if op not in OPERATORS:
            raise MergeOperatorError(
                f"column {col!r}: unknown merge operator {op!r} (known: {', '.join(OPERATORS)})"
            )
        if col not in schema.names:
            raise MergeOperatorError(f"merge operator {op} set for column {col!r}, "
                                     f"which the table does not have ({', '.join(schema.names)})")
        if col in keys:
            raise MergeOperatorError(f"column {col!r} is a primary key: it takes no operator")
        typ = schema.field(col).type
        if op == SUM_ALL and not pa.types.is_integer(typ) and not pa.types.is_floating(typ):
            raise MergeOperatorError(f"column {col!r}: {op} needs a numeric column, not {typ}")
        if op == USE_LAST_NOT_NULL_NOR_NULL_STRING and not pa.types.is_string(typ) \
                and not pa.types.is_large_string(typ):
            raise MergeOperatorError(f"column {col!r}: {op} needs a string column, not {typ}")


def merge_rows(table: pa.Table, keys: list[str], ops: Mapping[str, str] | None = None) -> pa.Table:
    """One row per key, columns in the table's order; columns without an operator: UseLast."""
    ops = dict(ops or {})
    validate_operators(table.schema, keys, ops)
    aggs = []
    work = table
    for col in table.column_names:
        if col in keys:
            continue
        op = ops.get(col, USE_LAST)
        if op == USE_LAST:
            aggs.append((col, "last", pc.ScalarAggregateOptions(skip_nulls=False)))
        elif op == USE_LAST_NOT_NULL:
            aggs.append((col, "last", pc.ScalarAggregateOptions(skip_nulls=True)))
        elif op == USE_LAST_NOT_NULL_NOR_NULL_STRING:
            arr = work.column(col)
            cleaned = pc.if_else(pc.equal(arr, "null"), pa.scalar(None, arr.type), arr)
            work = work.set_column(work.schema.get_field_index(col), col, cleaned)
            aggs.append((col, "last", pc.ScalarAggregateOptions(skip_nulls=True)))
        elif op == SUM_ALL:
            aggs.append((col, "sum", pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)))
    # use_threads=False keeps input order, which "last" depends on.
    grouped = work.group_by(keys, use_threads=False).aggregate(aggs)
    renamed = grouped.rename_columns(
        [name.rsplit("_", 1)[0] if name not in keys else name for name in grouped.column_names]
    )
    out = renamed.select(table.column_names)
    return out.cast(_result_schema(table.schema, ops))


def _result_schema(schema: pa.Schema, ops: Mapping[str, str]) -> pa.Schema:
    fields = []
    for f in schema:
        if ops.get(f.name) == SUM_ALL and pa.types.is_integer(f.type):
            f = f.with_type(pa.int64())
        fields.append(f)
    return pa.schema(fields)
