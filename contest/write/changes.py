"""Change data written as LakeSoul keeps it (README, "The data and the contract").

Only when the configuration or the files ask for it (row kinds, another key, a batch
holding some of the payload columns); the contest's upserts never come here:
- Row kinds: the op column is stored in every data file as LakeSoul's CDC column (the
  table property `lakesoul_cdc_change_column`), spelled as LakeSoul spells it (insert,
  update, delete; Debezium's c/r/u/d mapped row by row). Delete rows are kept as
  tombstones; the read drops every row of a key up to its last delete.
- Partial columns: a bucket file holds the columns its batch file holds, no more; the
  commit names them (LakeSoul's `file_exist_cols`), and the read tells a column a file
  lacks from a NULL it holds.
- Keys: one or two columns of string, int32, int64 or 16-byte binary (stored as binary),
  bucketed by Spark's Murmur3 over the key columns in order (contest/write/spark_hash.py)
  and sorted by them; a NULL key part refuses the batch in one line before anything is
  written, or (write.drop_null_keys) its rows are dropped and counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contest.config import Config, WorkloadConfig
from contest.data import change_sql
from contest.data import operators as registry
from contest.data.batches import Batch
from contest.data.changes import Changes, changes_of
from contest.data.spark_types import spark_struct
from contest.data.workload import batch_schema, workload_schema
from contest.errors import DataError
from contest.infra.folders import open_input
from contest.write.batch_reader import read_pieces
from contest.write.files import (
    BUCKET_COL,
    FILE_ROWS,
    RANGE_FIELDS,
    WriteOutcome,
    file_rows,
    row_group_rows,
    write_bucket_files,
    write_outcome,
)
from contest.write.spark_hash import key_buckets
from meta.catalog import TableRef

CONTEST_KEY = "uuid"


@dataclass(frozen=True)
class ChangeShape:
    """The table change data is written into: its columns (keys first, then the
    payload, then the CDC column), its key and its CDC column ("" = none)."""

    schema: pa.Schema
    keys: tuple[str, ...]
    cdc_column: str


def file_schema(batch: Batch) -> pa.Schema:
    """A batch file's schema, from its footer."""
    with open_input(batch.path) as fh:
        return pq.read_schema(fh)


def is_partial(workload: WorkloadConfig, batch: Batch, schema: pa.Schema) -> bool:
    """The file lacks a column its batch should hold (not one added to the workload
    after it: schema evolution reads such a column as NULL, as before)."""
    return any(c not in schema.names for c in batch_schema(workload, batch.index).names)


def needs_changes(cfg: Config, batches: Sequence[Batch], schemas: Sequence[pa.Schema]) -> bool:
    """Whether the write takes the change path: row kinds, another key than the
    contest's, or a batch file that lacks payload columns."""
    rules = changes_of(cfg)
    if not (rules.upserts_only and rules.contest_key):
        return True
    return any(is_partial(cfg.workload, b, s) for b, s in zip(batches, schemas, strict=True))


def payload_operators(workload: WorkloadConfig, keys: Sequence[str]) -> dict[str, str]:
    """Each payload column's operator: the contest's and the workload's extra columns',
    less the key (the contest's `uuid` is a payload column of no other key)."""
    ops = {**registry.CONTRACT, **workload.columns}
    return {c: op for c, op in ops.items() if c not in keys and c != CONTEST_KEY}


def change_shape(cfg: Config, batches: Sequence[Batch]) -> ChangeShape:
    """The table's shape, after every file is checked (key columns of a key type, the
    same in every file; the op column a string; no NULL key part unless dropped; known
    op values; 16-byte binary keys), each refusal one line naming the file, before
    anything is written."""
    rules = changes_of(cfg)
    keys = tuple(rules.key)
    ops = payload_operators(cfg.workload, keys)
    names = {str(b.path): str(b.path) for b in batches}
    plan = change_sql.plan(batches, ops, rules, names)
    for b in batches:
        why = change_sql.refusal(plan, checks(b, rules, plan))
        if why:
            raise DataError(why)
    widest = workload_schema(cfg.workload)
    fields = [pa.field(k, stored_key_type(_key_field_type(batches[0], k))) for k in keys]
    fields += [f for f in widest if f.name in ops]
    if rules.op_column:
        fields.append(pa.field(rules.op_column, pa.string()))
    return ChangeShape(pa.schema(fields), keys, rules.op_column)


def _key_field_type(batch: Batch, col: str) -> pa.DataType:
    return file_schema(batch).field(col).type


def stored_key_type(typ: pa.DataType) -> pa.DataType:
    """A key column's type in the table: a binary key as LakeSoul's binary."""
    if pa.types.is_fixed_size_binary(typ) or pa.types.is_large_binary(typ):
        return pa.binary()
    if pa.types.is_large_string(typ):
        return pa.string()
    return typ


def checks(batch: Batch, rules: Changes, plan: change_sql.ChangePlan) -> dict[str, object]:
    """The oracle's per-file checks (change_sql.checks_sql) computed with pyarrow from
    the key and op columns, for change_sql.refusal to word."""
    cols = list(rules.key) + ([rules.op_column] if rules.op_column else [])
    with open_input(batch.path) as fh:
        t = pq.read_table(fh, columns=cols)
    row: dict[str, object] = {"file": str(batch.path)}
    for i, k in enumerate(rules.key):
        row[f"null_{i}"] = t.column(k).null_count
        if plan.key_types[k].checks_length:
            lengths = pc.binary_length(t.column(k))
            row[f"short_{i}"] = int(pc.sum(pc.not_equal(lengths, 16)).as_py() or 0)
    if rules.op_column:
        op = t.column(rules.op_column).combine_chunks()
        known = pc.is_in(op, value_set=pa.array(list(rules.spelling)))
        bad = np.flatnonzero(~np.asarray(pc.fill_null(known, False), dtype=bool))
        row["bad_ops"] = len(bad)
        row["bad_op"] = op[int(bad[0])].as_py() if len(bad) else None
    return row


def lakesoul_kinds(op: pa.ChunkedArray | pa.Array, spelling: Mapping[str, str]) -> pa.Array:
    """Op values in LakeSoul's spelling (insert, update, delete), row by row (values the
    checks let through only)."""
    values = list(spelling)
    kinds = pa.array([spelling[v] for v in values], pa.string())
    return kinds.take(pc.index_in(op, value_set=pa.array(values, pa.string())))


def write_changes(
    spark,
    batch: Batch,
    table: TableRef,
    rules: Changes,
    *,
    codec: str = "none",
    token: str = "",
    sort: str = "arrow",
) -> WriteOutcome:
    """Write a checked change batch as bucket files of `table` (one Spark task per row
    group, read with pyarrow): its rows' kinds in LakeSoul's spelling, bucketed by the
    key's Murmur3, each file holding the batch file's columns only (the commit names
    them). Files stay uncommitted."""
    have = file_schema(batch).names
    columns = [c for c in table.schema.names if c in have]
    out_schema = pa.schema([table.schema.field(c) for c in columns])
    keys = list(table.primary_keys)
    path, table_path, n_buckets = str(batch.path), table.path, table.hash_buckets
    groups = row_group_rows(path)
    bounds = np.cumsum([0, *groups]).tolist()
    spelling = dict(rules.spelling)
    cdc = table.cdc_column

    def task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        for b in batches:
            ranges = zip(b.column("start").to_pylist(), b.column("stop").to_pylist(), strict=True)
            for start, stop in ranges:
                for data in read_pieces(path, groups, start, stop, 0, columns):
                    valid = np.ones(data.num_rows, dtype=bool)
                    for k in keys:
                        valid &= np.asarray(pc.is_valid(data.column(k)), dtype=bool)
                    nulls = int(data.num_rows - valid.sum())
                    if nulls:  # checked before the write: dropped (write.drop_null_keys)
                        data = data.filter(pa.array(valid))
                    if cdc:
                        at = data.schema.get_field_index(cdc)
                        data = data.set_column(at, cdc, lakesoul_kinds(data.column(cdc), spelling))
                    hashed = key_buckets([data.column(k) for k in keys], n_buckets)
                    data = data.append_column(BUCKET_COL, pa.array(hashed))
                    written = write_bucket_files(
                        data, table_path, keys, out_schema, codec, token, sort
                    )
                    yield file_rows(written, nulls)

    work = [(a, z) for a, z in zip(bounds, bounds[1:], strict=False) if z > a]
    if not work:
        return WriteOutcome([], 0, shuffled=False)
    tasks = spark.sparkContext.parallelize(work, len(work)).toDF(spark_struct(RANGE_FIELDS))
    result = tasks.mapInArrow(task, spark_struct(FILE_ROWS)).collect()
    return write_outcome(result, tuple(columns), shuffled=False)
