"""The numpy kernels of the merge operators: the rows of each key (grouped, in
application order) collapsed into one value per key. They are the read's hot path
(contest/read/operators.py merge_rows); the registry (contest/data/operators.py) says
which operator uses which, so no kernel names an operator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from contest.data.type_names import DECIMAL_SUM_PRECISION

# A numpy kernel: (column, order, starts, positions) -> one value per group, where
# `order` lists the row indices grouped by key in application order and `starts` says
# where each group begins in it; `positions` is arange(n) (shared by the columns).
Kernel = Callable[[Any, Any, Any, Any], pa.Array]


def _valid(arr) -> Any:
    return np.asarray(pc.is_valid(arr).to_numpy(zero_copy_only=False), dtype=bool)


def _pick_last(arr, order, starts, positions, valid) -> pa.Array:
    last = np.maximum.reduceat(np.where(valid, positions, -1), starts)
    pick = pa.array(order[np.maximum(last, 0)], mask=last < 0)
    return arr.take(pick)


# The contract's four (sum_all and the three `last`s) are the read's hot path: their
# bodies are the ones merge_rows had inline (results/native_merge.md measured them).


def sum_all(arr, order, starts, positions) -> pa.Array:
    if pa.types.is_decimal(arr.type):  # exact, in Arrow's decimal arithmetic
        wide = pa.decimal128(DECIMAL_SUM_PRECISION, arr.type.scale)
        return hash_aggregate("sum")(arr.cast(wide), order, starts, positions)
    valid = _valid(arr)[order]
    values = pc.fill_null(arr, 0).to_numpy()[order]
    sums = np.add.reduceat(np.where(valid, values, 0), starts)
    seen = np.add.reduceat(valid.astype(np.int64), starts)
    return pa.array(sums, mask=seen == 0)


def last(arr, order, starts, positions) -> pa.Array:
    return _pick_last(arr, order, starts, positions, np.ones(len(order), dtype=bool))


def last_not_null(arr, order, starts, positions) -> pa.Array:
    return _pick_last(arr, order, starts, positions, _valid(arr)[order])


def last_not_null_nor_null_string(arr, order, starts, positions) -> pa.Array:
    real = pc.fill_null(pc.not_equal(arr, "null"), False)
    valid = np.asarray(real.to_numpy(zero_copy_only=False), dtype=bool)[order]
    return _pick_last(arr, order, starts, positions, valid)


def _grouped(arr, order, starts) -> pa.Table:
    """The column in grouped order beside its group number (for pyarrow's group-by)."""
    sizes = np.diff(np.r_[starts, len(order)])
    groups = np.repeat(np.arange(len(starts), dtype=np.int64), sizes)
    return pa.table({"g": groups, "v": pc.take(arr, pa.array(order))})


def hash_aggregate(function: str) -> Kernel:
    """A kernel by pyarrow's ordered hash aggregate over the grouped column (NULLs
    skipped, NULL for a group without a value)."""

    def kernel(arr, order, starts, positions) -> pa.Array:
        opts = pc.ScalarAggregateOptions(skip_nulls=True, min_count=1)
        out = _grouped(arr, order, starts).group_by("g", use_threads=False)
        res = out.aggregate([("v", function, opts)]).sort_by("g")
        return res.column(f"v_{function}").combine_chunks()

    return kernel


def joined_by_comma(arr, order, starts, positions) -> pa.Array:
    valid = _valid(arr)[order]
    counts = np.add.reduceat(valid.astype(np.int64), starts)
    offsets = pa.array(np.r_[0, np.cumsum(counts)].astype(np.int32))
    values = pc.take(arr, pa.array(order[valid])).combine_chunks()
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    lists = pa.ListArray.from_arrays(offsets, values)
    joined = pc.binary_join(lists, ",")
    return pc.if_else(pa.array(counts == 0), pa.nulls(len(counts), arr.type), joined)


def first_not_null(arr, order, starts, positions) -> pa.Array:
    valid = _valid(arr)[order]
    n = len(order)
    first = np.minimum.reduceat(np.where(valid, positions, n), starts)
    pick = pa.array(order[np.minimum(first, n - 1)], mask=first >= n)
    return arr.take(pick)
