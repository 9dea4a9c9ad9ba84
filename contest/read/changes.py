"""Merge-on-read of change data (contest/write/changes.py wrote it): a bucket's rows in
application order, LakeSoul's CDC column telling each row's kind, each file holding
some of the columns.

Per key: every row up to and including its last delete is dropped (a key whose last row
is a delete vanishes), and each payload column folds the rest with its operator. A
column a file lacks gives that file's rows no value: for an operator where a NULL
overwrites (UseLast) such a row is skipped, while a NULL the file holds overwrites; for
every other operator the two agree (a NULL is skipped), so the column is read as NULL.
The CDC column is not part of the result. The bucket is merged whole, in memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contest.data import operators as registry
from contest.data.changes import DELETE, INSERT, UPDATE, spelled
from contest.errors import RunError
from contest.infra.storage import filesystem
from contest.read.operators import per_key, result_schema, validate_operators


def key_codes(table: pa.Table, keys: Sequence[str]) -> np.ndarray:
    """Dense integer codes, one per distinct key of one or more columns of any key type
    (each column dictionary-encoded, the codes combined; no cast of bytes to text)."""
    codes = np.zeros(table.num_rows, dtype=np.int64)
    for k in keys:
        enc = pc.dictionary_encode(table.column(k).combine_chunks())
        codes = codes * len(enc.dictionary) + enc.indices.to_numpy(zero_copy_only=False)
        codes = np.unique(codes, return_inverse=True)[1].astype(np.int64).reshape(-1)
    return codes


def groups(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, starts): rows of each key together in application order (a stable sort),
    and where each key's rows begin."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    return order, np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])


def after_last_delete(codes: np.ndarray, deletes: np.ndarray) -> np.ndarray:
    """Which rows survive: those after their key's last delete (rows of a key without a
    delete all do)."""
    n = len(codes)
    if n == 0 or not deletes.any():
        return np.ones(n, dtype=bool)
    order, starts = groups(codes)
    pos = np.arange(n)
    last = np.maximum.reduceat(np.where(deletes[order], pos, -1), starts)
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    keep = np.empty(n, dtype=bool)
    keep[order] = pos > last[group]
    return keep


def unreadable(path: str, exc: BaseException) -> RunError:
    """One line naming a committed data file that cannot be read, and why."""
    text = str(exc).strip()
    why = text.splitlines()[0][:200] if text else type(exc).__name__
    if isinstance(exc, FileNotFoundError):
        return RunError(f"committed data file {path} is missing: {why}")
    return RunError(
        f"committed data file {path} cannot be read, it is truncated or damaged "
        f"({type(exc).__name__}: {why})"
    )


def read_changes(
    files: Sequence[tuple[str, int | None]], schema: pa.Schema
) -> tuple[pa.Table, dict[str, np.ndarray]]:
    """A bucket's rows in application order under `schema` (a column a file lacks as
    NULL), and for each column some file lacks, which rows' files hold it."""
    parts, held_parts = [], []
    for path, _ in files:
        fs, local = filesystem(path)
        try:
            t = pq.read_table(local, filesystem=fs)
        except (OSError, pa.ArrowException) as exc:
            raise unreadable(path, exc) from None
        cols = [
            t.column(f.name).cast(f.type)
            if f.name in t.column_names
            else pa.nulls(t.num_rows, f.type)
            for f in schema
        ]
        parts.append(pa.Table.from_arrays(cols, schema=schema))
        held_parts.append({f.name: f.name in t.column_names for f in schema})
    if not parts:
        return schema.empty_table(), {}
    table = pa.concat_tables(parts)
    partial = [f.name for f in schema if not all(h[f.name] for h in held_parts)]
    held = {
        c: np.concatenate(
            [np.full(p.num_rows, h[c], dtype=bool) for p, h in zip(parts, held_parts, strict=True)]
        )
        for c in partial
    }
    return table, held


def merge_changes(
    table: pa.Table,
    held: Mapping[str, np.ndarray],
    keys: list[str],
    ops: Mapping[str, str],
    cdc_column: str = "",
) -> pa.Table:
    """One row per live key: rows up to each key's last delete dropped, the rest folded
    by each column's operator, a column a row's file lacks skipped (`held`)."""
    held = dict(held)
    if cdc_column:
        kinds = table.column(cdc_column)
        deletes = np.asarray(pc.fill_null(pc.equal(kinds, DELETE), False), dtype=bool)
        keep = after_last_delete(key_codes(table, keys), deletes)
        if not keep.all():
            table = table.filter(pa.array(keep))
            held = {c: m[keep] for c, m in held.items()}
        table = table.drop_columns([cdc_column])
    validate_operators(table.schema, keys, ops)
    out_schema = result_schema(table.schema, ops)
    n = table.num_rows
    if n == 0:
        return out_schema.empty_table()
    order, starts = groups(key_codes(table, keys))
    positions = np.arange(n, dtype=np.int64)

    def fold(col: str, arr: pa.ChunkedArray) -> pa.Array:
        op = registry.OPERATORS[ops.get(col, registry.DEFAULT)]
        if col in held and op.null_overwrites:
            return last_held(arr, order, starts, held[col][order])
        return op.numpy(arr, order, starts, positions)

    columns = per_key(table, keys, order, starts, fold)
    return pa.Table.from_arrays(columns, names=table.column_names).cast(out_schema)


def last_held(arr, order: np.ndarray, starts: np.ndarray, held: np.ndarray) -> pa.Array:
    """Each key's value from its last row whose file holds the column (NULL when none
    does): UseLast over the rows that carry the column (`held`, in group order)."""
    pos = np.arange(len(order))
    last = np.maximum.reduceat(np.where(held, pos, -1), starts)
    return arr.take(pa.array(order[np.maximum(last, 0)], mask=last < 0))


def merge_change_bucket(
    files: Sequence[tuple[str, int | None]],
    schema: pa.Schema,
    keys: list[str],
    ops: Mapping[str, str],
    cdc_column: str = "",
) -> pa.Table:
    """A bucket of change data merged (`schema`: the result's columns; the CDC column,
    when there is one, is read beside them)."""
    read_schema = schema
    if cdc_column:
        read_schema = schema.append(pa.field(cdc_column, pa.string()))
    table, held = read_changes(files, read_schema)
    return merge_changes(table, held, keys, ops, cdc_column)


@dataclass(frozen=True)
class ChangeSpan:
    """A changes read of change data (`--from-version A`): the files of versions up to
    A tell which keys existed at A; those after it are the changes. `names`: each row
    kind's value in the configured spelling (workload.op_values)."""

    since: int
    op_column: str
    op_values: str = "lakesoul"

    @property
    def names(self) -> dict[str, str]:
        return spelled(self.op_values)

    def split(
        self, files: Sequence[tuple[str, int | None]]
    ) -> tuple[list[tuple[str, int | None]], list[tuple[str, int | None]]]:
        """(files of versions up to A, files after it)."""
        before = [f for f in files if f[1] is not None and f[1] <= self.since]
        return before, [f for f in files if f not in before]


def existed(keys: pa.Table, known: pa.Table, names: Sequence[str]) -> np.ndarray:
    """Which rows of `keys` name a key of `known` (any key types, one or more columns)."""
    if keys.num_rows == 0 or known.num_rows == 0:
        return np.zeros(keys.num_rows, dtype=bool)
    both = pa.concat_tables(
        [known.select(names).cast(keys.select(names).schema), keys.select(names)]
    )
    codes = key_codes(both, names)
    return np.isin(codes[known.num_rows :], codes[: known.num_rows])


def last_deleted(table: pa.Table, keys: list[str], cdc_column: str) -> pa.Table:
    """The keys whose last row is a delete (`table`: rows in application order)."""
    if table.num_rows == 0:
        return table.select(keys)
    kinds = table.column(cdc_column)
    deletes = np.asarray(pc.fill_null(pc.equal(kinds, DELETE), False), dtype=bool)
    order, starts = groups(key_codes(table, keys))
    last = order[np.r_[starts[1:], table.num_rows] - 1]
    return table.select(keys).take(pa.array(last[deletes[last]]))


def net_changes(
    before: tuple[pa.Table, Mapping[str, np.ndarray]],
    after: tuple[pa.Table, Mapping[str, np.ndarray]],
    keys: list[str],
    ops: Mapping[str, str],
    span: ChangeSpan,
) -> pa.Table:
    """The changes read between A and B (`before`: rows up to A, `after`: rows after A
    up to B), one row per key whose rows after A leave it changed: live at B, its rows
    after A merged (after its last delete, as a read of the range merges them) with op
    insert (the key was not live at A) or update (it was, deleted and inserted again
    between included); not live at B but live at A: op delete, payload NULL. A key
    inserted and deleted between A and B is not in it. The op column last."""
    cdc, names = span.op_column, span.names
    at_a = merge_changes(*before, keys, ops, cdc).select(keys)
    live = merge_changes(*after, keys, ops, cdc)
    was = existed(live, at_a, keys)
    live = live.append_column(
        cdc, pa.array(np.where(was, names[UPDATE], names[INSERT]).tolist(), pa.string())
    )
    gone = last_deleted(after[0], keys, cdc)
    gone = gone.filter(pa.array(existed(gone, at_a, keys)))
    columns = [
        gone.column(f.name).cast(f.type) if f.name in keys else pa.nulls(gone.num_rows, f.type)
        for f in live.schema.remove(live.schema.get_field_index(cdc))
    ]
    columns.append(pa.array([names[DELETE]] * gone.num_rows, pa.string()))
    deleted = pa.Table.from_arrays(columns, schema=live.schema)
    return pa.concat_tables([live, deleted])


def change_span_bucket(
    files: Sequence[tuple[str, int | None]],
    schema: pa.Schema,
    keys: list[str],
    ops: Mapping[str, str],
    span: ChangeSpan,
) -> pa.Table:
    """A bucket's changes read (`files`: every file up to B, with its version)."""
    read_schema = schema.append(pa.field(span.op_column, pa.string()))
    before, after = span.split(files)
    return net_changes(
        read_changes(before, read_schema), read_changes(after, read_schema), keys, ops, span
    )
