"""The per-bucket merge, by more than one engine (`read.merge`): the same contract, one
thread each (a Spark task owns one core).

Every variant takes a bucket's rows as parts in application order (files, or windows of
them, each already conformed to the table's schema) and returns one row per key with
the operators of the registry (contest/data/operators.py), each engine's form of each
taken from there; an engine without a form of an operator refuses it in one line:

- numpy:  concatenate, dense key codes (dictionary encoding), stable argsort and
          segmented reductions (operators.merge_rows; the reference).
- arrow:  pyarrow's hash group-by with ordered `last`/`sum` aggregates (use_threads off,
          which is what keeps `last` in row order).
- duckdb: one SQL GROUP BY on a single-threaded in-process connection, the oracle's
          aggregates (`arg_max` over the row's position, ...).
- polars: a hash group-by on the concatenation (polars keeps each group's rows in
          order; `last(ignore_nulls=True)`). A k-way `merge_sorted` of the sorted parts
          (left-biased with maintain_order) and a sorted group-by was measured and
          dropped: slower (results/native_merge.md).

Results are cast to operators.result_schema; the row order of the result is not part of
the contract (the read sorts nothing; the checker compares key by key).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from contest.config import READ_MERGES
from contest.data import operators as registry
from contest.data.merge_engines import refusal
from contest.errors import MergeOperatorError
from contest.read.operators import merge_rows, result_schema, validate_operators

MERGES = READ_MERGES
POS = "__contest_pos"

MergeFn = Callable[[Sequence[pa.Table], list[str], Mapping[str, str]], pa.Table]


def merge_parts(
    method: str,
    parts: Sequence[pa.Table],
    keys: list[str],
    ops: Mapping[str, str],
) -> pa.Table:
    """One row per key of `parts` (application order) with `method` (one of MERGES)."""
    if method not in _MERGES:
        raise ValueError(f"read.merge {method!r}: choose one of {', '.join(MERGES)}")
    if not parts:
        raise ValueError("merge_parts needs at least one part (it carries the schema)")
    return _MERGES[method](parts, keys, ops)


def refuse(method: str, ops: Mapping[str, str]) -> None:
    """A one-line error when read.merge `method` has no kernel for one of the operators."""
    why = refusal(ops, (method,), f"read.merge={method}")
    if why:
        raise MergeOperatorError(why)


def _concat(parts: Sequence[pa.Table]) -> pa.Table:
    return parts[0] if len(parts) == 1 else pa.concat_tables(parts)


def _numpy(parts: Sequence[pa.Table], keys: list[str], ops: Mapping[str, str]) -> pa.Table:
    return merge_rows(_concat(parts), keys, ops)


def _null_string_to_null(arr: pa.ChunkedArray) -> pa.ChunkedArray:
    """The string "null" as NULL (an operator whose rule skips it is then its
    last-non-NULL aggregate). (replace_with_mask, not if_else: pyarrow 20's if_else
    with a NULL scalar returns invalid offsets for a sliced string array, which a
    window is.)"""
    chunks = [
        pc.replace_with_mask(
            c, pc.fill_null(pc.equal(c, "null"), False), pa.nulls(len(c), arr.type)
        )
        for c in arr.chunks
    ]
    return pa.chunked_array(chunks, arr.type)


def _arrow(parts: Sequence[pa.Table], keys: list[str], ops: Mapping[str, str]) -> pa.Table:
    table = _concat(parts)
    validate_operators(table.schema, keys, ops)
    refuse("arrow", ops)
    out_schema = result_schema(table.schema, ops)
    if table.num_rows == 0:
        return table.cast(out_schema)
    cols: dict[str, Any] = {}
    aggs: list[tuple[str, str, pc.FunctionOptions]] = []
    for name in table.column_names:
        arr = table.column(name)
        if name in keys:
            cols[name] = arr
            continue
        op = registry.OPERATORS[ops.get(name, registry.DEFAULT)]
        assert op.arrow is not None  # refuse() above
        function, skip_nulls, min_count = op.arrow
        if op.null_string:
            arr = _null_string_to_null(arr)
        if pa.types.is_decimal(arr.type) and function in _PICKS:
            arr = _viewed(arr, pa.binary(16))  # pyarrow 20 picks no decimal: its 16 bytes
        elif pa.types.is_decimal(arr.type):
            arr = arr.cast(out_schema.field(name).type)  # a sum at its result's precision
        opts = pc.ScalarAggregateOptions(skip_nulls=skip_nulls, min_count=min_count)
        aggs.append((name, function, opts))
        cols[name] = arr
    grouped = pa.table(cols).group_by(keys, use_threads=False).aggregate(aggs)
    names = {f"{name}_{fn}": name for name, fn, _ in aggs}
    grouped = grouped.rename_columns([names.get(c, c) for c in grouped.column_names])
    grouped = grouped.select(table.column_names)
    picked = [
        _viewed(grouped.column(i), f.type) if pa.types.is_decimal(f.type) else grouped.column(i)
        for i, f in enumerate(table.schema)
    ]
    return pa.Table.from_arrays(picked, names=table.column_names).cast(out_schema)


# pyarrow's ordered aggregates that pick one row's value.
_PICKS = ("first", "last")


def _viewed(arr: pa.ChunkedArray, typ: pa.DataType) -> pa.ChunkedArray:
    """The same bytes as another type of their layout (a decimal's 16 bytes)."""
    return pa.chunked_array([c.view(typ) for c in arr.chunks], typ)


_duck = threading.local()


def _duck_connection() -> Any:
    """One single-threaded connection per thread (a connection is not thread-safe)."""
    con = getattr(_duck, "con", None)
    if con is None:
        import duckdb  # deferred: duckdb is slow to import; `contest --help` starts without it

        con = duckdb.connect(config={"threads": 1, "preserve_insertion_order": False})
        _duck.con = con
    return con


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _duckdb(parts: Sequence[pa.Table], keys: list[str], ops: Mapping[str, str]) -> pa.Table:
    table = _concat(parts)
    validate_operators(table.schema, keys, ops)
    out_schema = result_schema(table.schema, ops)
    if table.num_rows == 0:
        return table.cast(out_schema)
    rows = table.append_column(POS, pa.array(range(table.num_rows), pa.int64()))
    pos = _quote(POS)
    select = []
    for name in table.column_names:
        col = _quote(name)
        if name in keys:
            expr = col
        else:
            typ = registry.type_name(out_schema.field(name).type)
            expr = registry.sql_aggregate(ops.get(name, registry.DEFAULT), col, pos, typ)
        select.append(f"{expr} AS {col}")
    group = ", ".join(_quote(k) for k in keys)
    con = _duck_connection()
    con.register("bucket_rows", rows)
    try:
        sql = f"SELECT {', '.join(select)} FROM bucket_rows GROUP BY {group}"
        out = con.sql(sql).to_arrow_table()
    finally:
        con.unregister("bucket_rows")
    return out.cast(out_schema)


def _polars_module() -> Any:
    """polars, with one thread when this process imports it first (the pool is sized
    at import): a Spark task owns one core."""
    if "polars" not in sys.modules:
        os.environ.setdefault("POLARS_MAX_THREADS", "1")
    import polars as pl  # deferred: polars is slow to import; `contest --help` starts without it

    return pl


def _polars(parts: Sequence[pa.Table], keys: list[str], ops: Mapping[str, str]) -> pa.Table:
    pl = _polars_module()
    schema = parts[0].schema
    validate_operators(schema, keys, ops)
    refuse("polars", ops)
    out_schema = result_schema(schema, ops)
    aggs = []
    for name in schema.names:
        if name in keys:
            continue
        col = pl.col(name)
        op = registry.OPERATORS[ops.get(name, registry.DEFAULT)]
        assert op.polars is not None  # refuse() above
        if op.widens and pa.types.is_integer(schema.field(name).type):
            col = col.cast(pl.Int64)
        aggs.append(op.polars(pl, col).alias(name))
    # A hash group-by of the concatenation, even when the parts are sorted: a k-way
    # merge_sorted of the parts (all columns, or the keys and a row index then a gather)
    # and a sorted group-by measured slower (results/native_merge.md).
    df = pl.from_arrow(_concat(parts))
    if df.height == 0:
        return schema.empty_table().cast(out_schema)
    merged = df.group_by(keys).agg(aggs)
    return merged.select(schema.names).to_arrow().cast(out_schema)


_MERGES: dict[str, MergeFn] = {
    "numpy": _numpy,
    "arrow": _arrow,
    "duckdb": _duckdb,
    "polars": _polars,
}
