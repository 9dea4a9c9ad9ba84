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

from contest.errors import MergeOperatorError

USE_LAST = "UseLast"
USE_LAST_NOT_NULL = "UseLastNotNull"
SUM_ALL = "SumAll"
USE_LAST_NOT_NULL_NOR_NULL_STRING = "UseLastNotNullNorNullString"

OPERATORS = (USE_LAST, USE_LAST_NOT_NULL, SUM_ALL, USE_LAST_NOT_NULL_NOR_NULL_STRING)

# The contest's operators (README, "The data and the contract").
CONTEST_OPERATORS: dict[str, str] = {
    "ip": USE_LAST_NOT_NULL,
    "hostname": USE_LAST_NOT_NULL,
    "requests": SUM_ALL,
    "name": USE_LAST_NOT_NULL_NOR_NULL_STRING,
    "city": USE_LAST_NOT_NULL,
    "job": USE_LAST_NOT_NULL,
    "phonenum": USE_LAST_NOT_NULL,
}


def validate_operators(schema: pa.Schema, keys: list[str], ops: Mapping[str, str]) -> None:
    for col, op in ops.items():
        if op not in OPERATORS:
            raise MergeOperatorError(
                f"column {col!r}: unknown merge operator {op!r} (known: {', '.join(OPERATORS)})"
            )
        if col not in schema.names:
            raise MergeOperatorError(
                f"merge operator {op} set for column {col!r}, "
                f"which the table does not have ({', '.join(schema.names)})"
            )
        if col in keys:
            raise MergeOperatorError(f"column {col!r} is a primary key: it takes no operator")
        typ = schema.field(col).type
        if op == SUM_ALL and not pa.types.is_integer(typ) and not pa.types.is_floating(typ):
            raise MergeOperatorError(f"column {col!r}: {op} needs a numeric column, not {typ}")
        if (
            op == USE_LAST_NOT_NULL_NOR_NULL_STRING
            and not pa.types.is_string(typ)
            and not pa.types.is_large_string(typ)
        ):
            raise MergeOperatorError(f"column {col!r}: {op} needs a string column, not {typ}")


def merge_rows(table: pa.Table, keys: list[str], ops: Mapping[str, str] | None = None) -> pa.Table:
    """One row per key, columns in the table's order; columns without an operator: UseLast.

    Rows are grouped by a stable sort of the keys (as integers, or dense codes), so
    inside a group they keep their application order; each operator is then a segmented
    reduction over the groups (numpy `reduceat`), a few bytes a row beyond the data.
    """
    import numpy as np

    ops = dict(ops or {})
    validate_operators(table.schema, keys, ops)
    n = table.num_rows
    if n == 0:
        return table.cast(result_schema(table.schema, ops))
    order, starts = _groups(table, keys)
    positions = np.arange(n, dtype=np.int64)
    columns = []
    for col in table.column_names:
        arr = table.column(col)
        if col in keys:
            columns.append(arr.take(pa.array(order[starts])))
            continue
        op = ops.get(col, USE_LAST)
        if op == SUM_ALL:
            valid = _valid(arr)[order]
            values = pc.fill_null(arr, 0).to_numpy()[order]
            sums = np.add.reduceat(np.where(valid, values, 0), starts)
            seen = np.add.reduceat(valid.astype(np.int64), starts)
            columns.append(pa.array(sums, mask=seen == 0))
            continue
        if op == USE_LAST:
            valid = np.ones(n, dtype=bool)
        elif op == USE_LAST_NOT_NULL:
            valid = _valid(arr)[order]
        else:  # USE_LAST_NOT_NULL_NOR_NULL_STRING
            real = pc.fill_null(pc.not_equal(arr, "null"), False)
            valid = np.asarray(real.to_numpy(zero_copy_only=False), dtype=bool)[order]
        last = np.maximum.reduceat(np.where(valid, positions, -1), starts)
        pick = pa.array(order[np.maximum(last, 0)], mask=last < 0)
        columns.append(arr.take(pick))
    out = pa.Table.from_arrays(columns, names=table.column_names)
    return out.cast(result_schema(table.schema, ops))


def _groups(table: pa.Table, keys: list[str]):
    """(order, starts): row indices with each key's rows together and in their
    application order, and where each key's rows begin. Canonical UUID keys are grouped
    by their 128 bits (contest/data/uuid_keys.py: parsing them costs about a third of
    hashing the strings); any other key by dense codes from a hash of the strings."""
    import numpy as np

    from contest.data.uuid_keys import uuid_order, uuid_words

    words = uuid_words(table.column(keys[0])) if len(keys) == 1 else None
    if words is not None:
        high, low = words
        order = uuid_order(np.zeros(len(high), np.int32), high, low, None)
        high, low = high[order], low[order]
        changed = (high[1:] != high[:-1]) | (low[1:] != low[:-1])
        return order, np.flatnonzero(np.r_[True, changed])
    codes = _key_codes(table, keys)
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    return order, np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])


def _key_codes(table: pa.Table, keys: list[str]):
    """Dense integer codes, one per distinct key (hashing, no sort of the keys)."""
    import numpy as np

    if len(keys) == 1:
        enc = pc.dictionary_encode(table.column(keys[0])).combine_chunks()
        return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    joined = pc.binary_join_element_wise(
        *[pc.cast(table.column(k), pa.string()) for k in keys], "\x1f"
    )
    return _key_codes(pa.table({"k": joined}), ["k"])


def _valid(arr):
    import numpy as np

    return np.asarray(pc.is_valid(arr).to_numpy(zero_copy_only=False), dtype=bool)


def result_schema(schema: pa.Schema, ops: Mapping[str, str]) -> pa.Schema:
    """The merged result's schema: a SumAll column of integers is summed as int64; the
    in-memory merge and the merge that writes result files cast to the same schema."""
    fields = []
    for f in schema:
        if ops.get(f.name) == SUM_ALL and pa.types.is_integer(f.type):
            f = f.with_type(pa.int64())
        fields.append(f)
    return pa.schema(fields)
