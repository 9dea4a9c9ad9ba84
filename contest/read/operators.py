"""The read's in-memory merge: the rows of each primary key collapsed into one row by
the numpy kernels of the operator registry (contest/data/operators.py, which names every
operator and its NULL rule).

Rows arrive in application order (version, then row position); each column has an
operator; columns without one merge by the registry's default (UseLast).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from contest.data import operators as registry
from contest.data.dictionaries import cast_keeping_dictionaries, few_values_as_dictionaries, plain
from contest.data.uuid_keys import WORD_COLUMNS, uuid_order, uuid_words
from contest.errors import MergeOperatorError

OPERATORS = registry.OPERATOR_NAMES
# The contest's operators (the registry's contract map).
CONTEST_OPERATORS: dict[str, str] = dict(registry.CONTRACT)

__all__ = [
    "CONTEST_OPERATORS",
    "OPERATORS",
    "MergeOperatorError",
    "merge_rows",
    "result_schema",
    "validate_operators",
]


def validate_operators(schema: pa.Schema, keys: list[str], ops: Mapping[str, str]) -> None:
    registry.validate(schema, keys, ops)


def result_schema(schema: pa.Schema, ops: Mapping[str, str]) -> pa.Schema:
    """The merged result's schema (a summed integer column as int64); the in-memory
    merge and the merge that writes result files cast to the same schema."""
    return registry.result_schema(schema, ops)


def picked_columns(names: Sequence[str], keys: Sequence[str], ops: Mapping[str, str]) -> list[str]:
    """The non-key columns whose operator picks one of a key's rows (the registry's
    `picks_a_row`): the ones that may be moved, read and written as dictionaries."""
    kernels = registry.OPERATORS
    return [c for c in names if c not in keys and kernels[ops.get(c, registry.DEFAULT)].picks_a_row]


def merge_rows(
    table: pa.Table,
    keys: list[str],
    ops: Mapping[str, str] | None = None,
    keep_dictionaries: bool = False,
) -> pa.Table:
    """One row per key, columns in the table's order; columns without an operator: UseLast.

    Rows are grouped by a stable sort of the keys (as integers, or dense codes), so
    inside a group they keep their application order; each operator is then a segmented
    reduction over the groups (numpy `reduceat`), a few bytes a row beyond the data.
    A dictionary column is merged as the strings it stands for; the result is cast to
    result_schema, its dictionary columns left as they are with `keep_dictionaries`
    (for a writer that stores their indices as they are).
    """
    words = None
    if WORD_COLUMNS[0] in table.column_names:  # the keys' words, stored by the write
        words = tuple(table.column(c).to_numpy().view(np.uint64) for c in WORD_COLUMNS)
        table = table.drop_columns(list(WORD_COLUMNS))
    ops = dict(ops or {})
    schema = pa.schema([f.with_type(plain(f.type)) for f in table.schema])
    validate_operators(schema, keys, ops)
    out_schema = result_schema(schema, ops)
    n = table.num_rows
    if n == 0:
        return table.cast(out_schema)
    kernels = registry.OPERATORS
    # Columns whose operator picks a row are moved as dictionary indices when they hold
    # few values (or came as dictionaries); the cast to the result's schema below turns
    # them back into strings unless kept.
    picked = set(picked_columns(table.column_names, keys, ops))
    if any(pa.types.is_dictionary(f.type) and f.name not in picked for f in table.schema):
        table = table.cast(
            pa.schema([f if f.name in picked else f.with_type(plain(f.type)) for f in table.schema])
        )
    order, starts = _groups(table, keys, words)
    table = few_values_as_dictionaries(table, picked)
    positions = np.arange(n, dtype=np.int64)
    columns = per_key(
        table,
        keys,
        order,
        starts,
        lambda col, arr: kernels[ops.get(col, registry.DEFAULT)].numpy(
            arr, order, starts, positions
        ),
    )
    out = pa.Table.from_arrays(columns, names=table.column_names)
    return cast_keeping_dictionaries(out, out_schema) if keep_dictionaries else out.cast(out_schema)


def per_key(
    table: pa.Table,
    keys: Sequence[str],
    order: np.ndarray,
    starts: np.ndarray,
    fold: Callable[[str, pa.ChunkedArray], pa.Array],
) -> list[pa.Array | pa.ChunkedArray]:
    """Each column of `table` with one value per key group (`order`: the rows grouped,
    `starts`: where each group begins): a key column's first row, any other as `fold`
    merges it. The merged read's and the change read's fold (contest/read/changes.py)."""
    first = pa.array(order[starts])
    return [
        table.column(col).take(first) if col in keys else fold(col, table.column(col))
        for col in table.column_names
    ]


def _groups(table: pa.Table, keys: list[str], words=None):
    """(order, starts): row indices with each key's rows together and in their
    application order, and where each key's rows begin. Canonical UUID keys are grouped
    by their 128 bits (contest/data/uuid_keys.py: parsing them costs about a third of
    hashing the strings; `words`: those bits as the write stored them); any other key
    by dense codes from a hash of the strings."""
    if words is None and len(keys) == 1:
        words = uuid_words(table.column(keys[0]))
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
    if len(keys) == 1:
        enc = pc.dictionary_encode(table.column(keys[0])).combine_chunks()
        return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    joined = pc.binary_join_element_wise(
        *[pc.cast(table.column(k), pa.string()) for k in keys], "\x1f"
    )
    return _key_codes(pa.table({"k": joined}), ["k"])
