"""A batch's repeated keys reduced to one row per key, outside the format: the harness's
numpy merge (contest/read/operators.py `merge_rows`, the operator registry's kernels),
rows in file order. Used by a native library that merges one source row per key but
has no engine of its own a batch can be reduced in (its results row says so).

Change data (contest/data/changes.py) is collapsed by the delete rule of the Spark
formats' MERGE (contest/peers/change_merge.py, whose docstring is its spec), here in
Arrow: per key, only the rows after the batch's last delete of it fold; a key whose
last row is a delete collapses to a delete row; a key deleted and inserted again inside
the batch carries the `REPLACE` flag. Keys of one or two columns of any key type are
grouped by dense codes (`key_codes`), never by their strings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from contest.config import Config
from contest.data import operators
from contest.data.changes import Changes
from contest.data.workload import contract_operators
from contest.errors import DataError
from contest.peers.change_merge import REPLACE, collapse_label
from contest.read.operators import merge_rows
from contest.write.cow import KEY

# The dense key code a merge groups by (never a table column).
CODE = "__contest_key"


def collapsed(rows: pa.Table, cfg: Config) -> pa.Table:
    """One row per key: each column by its operator over the key's rows in file order."""
    ops = {c: op for c, op in contract_operators(cfg.workload).items() if c in rows.column_names}
    return merge_rows(rows, [KEY], ops)


def folded(current: pa.Table, rows: pa.Table, cfg: Config) -> pa.Table:
    """The batch's keys after the upsert: each key's current merged row (if any) folded
    with the batch's rows, in that order, by the operators (every operator here is a
    left fold, so the current row stands for every row before the batch)."""
    if current.num_rows == 0:
        return collapsed(rows, cfg)
    both = pa.concat_tables([current.select(rows.column_names).cast(rows.schema), rows])
    return collapsed(both, cfg)


def key_codes(columns: Sequence[pa.Array | pa.ChunkedArray]) -> np.ndarray:
    """One dense int64 code per distinct key (the columns' values together, none NULL):
    each column dictionary-encoded and the codes combined, so a binary key or a key of
    two columns groups as well as a string (merge_rows joins two columns as strings)."""
    codes = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    for col in columns:
        whole = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        enc = pc.dictionary_encode(whole)
        part = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        codes = codes * max(len(enc.dictionary), 1) + part
        codes = np.unique(codes, return_inverse=True)[1].astype(np.int64).reshape(-1)
    return codes


def merged_by_key(rows: pa.Table, keys: Sequence[str], ops: Mapping[str, str]) -> pa.Table:
    """One row per key (`key_codes`): its columns, then each column of `ops` by its
    operator over the key's rows in order (the registry's numpy kernels)."""
    codes = key_codes([rows.column(k) for k in keys])
    payload = rows.select(list(ops)).append_column(CODE, pa.array(codes, pa.int64()))
    merged = merge_rows(payload, [CODE], ops)
    first = _first_rows(codes)
    at = merged.column(CODE).to_numpy()
    key_cols = [rows.column(k).take(pa.array(first[at])) for k in keys]
    return pa.Table.from_arrays([*key_cols, *merged.select(list(ops)).columns], names=[*keys, *ops])


def _first_rows(codes: np.ndarray) -> np.ndarray:
    """Each code's first row."""
    first = np.full(int(codes.max()) + 1 if len(codes) else 0, len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    return first


def without_null_keys(rows: pa.Table, rules: Changes, where: str) -> pa.Table:
    """The rows whose key has no NULL part (change_merge's rule): dropped with
    `write.drop_null_keys`, else refused in one line naming the file."""
    valid = np.ones(rows.num_rows, dtype=bool)
    for k in rules.key:
        valid &= np.asarray(pc.is_valid(rows.column(k)), dtype=bool)
    if valid.all():
        return rows
    if rules.drop_null_keys:
        return rows.filter(pa.array(valid))
    raise DataError(
        f"{where}: row(s) with a NULL key column of {', '.join(rules.key)} "
        "(set write.drop_null_keys to drop them)"
    )


@dataclass(frozen=True)
class ChangeRows:
    """A change batch collapsed by key with the delete rule: `rows` holds the key's
    columns, the op column (the key's last row's value) and `REPLACE` when the
    workload has row kinds, then the payload columns the batch holds (`columns`), NULL
    for a key whose last row is a delete."""

    rows: pa.Table
    rules: Changes
    columns: tuple[str, ...]

    @property
    def label(self) -> str:
        """What the collapse did (contest/peers/change_merge.py says it alike)."""
        return collapse_label(self.rules)

    def deletes(self) -> np.ndarray:
        """Which collapsed rows delete their key (none without row kinds)."""
        if not self.rules.op_column:
            return np.zeros(self.rows.num_rows, dtype=bool)
        return is_delete(self.rows.column(self.rules.op_column), self.rules)

    def replaces(self) -> np.ndarray:
        """Which collapsed rows replace the table's row (deleted, then inserted again)."""
        if not self.rules.op_column:
            return np.zeros(self.rows.num_rows, dtype=bool)
        return np.asarray(self.rows.column(REPLACE), dtype=bool)


def is_delete(op: pa.Array | pa.ChunkedArray, rules: Changes) -> np.ndarray:
    """Which op values delete (the spelling's delete values)."""
    deletes = pa.array(rules.delete_values, pa.string())
    found = pc.is_in(pc.cast(op, pa.string()), value_set=deletes)
    return np.asarray(pc.fill_null(found, False), dtype=bool)


def collapsed_changes(
    rows: pa.Table, rules: Changes, ops: Mapping[str, str], where: str
) -> ChangeRows:
    """The batch's rows (file order), one per key by the delete rule (the module's
    docstring); `ops`: every payload column's operator (the batch's are used); `where`:
    the file, for a refusal."""
    rows = without_null_keys(rows, rules, where)
    held = {c: op for c, op in ops.items() if c in rows.column_names}
    key = list(rules.key)
    codes = key_codes([rows.column(k) for k in key])
    pos = np.arange(len(codes), dtype=np.int64)
    count = int(codes.max()) + 1 if len(codes) else 0
    last_delete = np.full(count, -1, dtype=np.int64)
    if rules.op_column:
        deleting = is_delete(rows.column(rules.op_column), rules)
        np.maximum.at(last_delete, codes[deleting], pos[deleting])
    live = pos > last_delete[codes]
    payload = rows.select(list(held)).filter(pa.array(live))
    payload = payload.append_column(CODE, pa.array(codes[live], pa.int64()))
    merged = merge_rows(payload, [CODE], held)
    slot = np.full(count, -1, dtype=np.int64)
    slot[merged.column(CODE).to_numpy()] = np.arange(merged.num_rows)
    dead = slot < 0  # the key's last row is a delete: no row folds
    pick = pa.array(slot, mask=dead)
    out = [rows.column(k).take(pa.array(_first_rows(codes))) for k in key]
    names = list(key)
    if rules.op_column:
        last = np.full(count, -1, dtype=np.int64)
        np.maximum.at(last, codes, pos)
        out += [rows.column(rules.op_column).take(pa.array(last))]
        out += [pa.array((last_delete >= 0) & ~dead, pa.bool_())]
        names += [rules.op_column, REPLACE]
    out += [merged.column(c).take(pick) for c in held]
    return ChangeRows(pa.Table.from_arrays(out, names=[*names, *held]), rules, tuple(held))


def folded_changes(
    current: pa.Table, change: ChangeRows, schema: pa.Schema, ops: Mapping[str, str]
) -> pa.Table:
    """The rows a change batch leaves for its live keys (neither deleted nor replaced:
    `current` holds their table rows, none for a new key), in `schema` (the table's):
    each column the batch holds folded onto the table's value by its operator, each it
    lacks the table's value (UseLastNotNull over that value and the batch's NULL); a
    replaced key's row is the batch's, NULL where it lacks a column."""
    key = list(change.rules.key)
    payload = [f.name for f in schema if f.name not in key]
    source = change.rows.filter(pa.array(~change.deletes()))
    for c in payload:
        if c not in source.column_names:
            source = source.append_column(c, pa.nulls(source.num_rows, schema.field(c).type))
    both = pa.concat_tables([t.select(schema.names).cast(schema) for t in (current, source)])
    fold = {c: ops[c] if c in change.columns else operators.USE_LAST_NOT_NULL for c in payload}
    return merged_by_key(both, key, fold).cast(schema)
