"""Spark reads and writes LakeSoul table files; PostgreSQL holds the commits.

Write: each Spark task buckets its rows the way LakeSoul does
(`pmod(hash(pk), buckets)`, Spark's Murmur3 = LakeSoul's), sorts each bucket by
primary key (stably: rows of one key keep their order) and writes one parquet file
per bucket, `part-<id>_<bucket:04>.parquet`, with the codec asked for. A batch that
is not repartitioned is read by its tasks with pyarrow (write_file_direct); one that
is goes through Spark's shuffle (write_dataframe). The driver then commits the files
(catalog.commit_files). A task that fails leaves files no commit names: nothing is
half-committed.

Read: one Spark task per bucket reads that bucket's files in snapshot order and
collapses each key with the merge operators: merge-on-read without a shuffle; the
task writes its result file itself (write_merged) or hands it to Spark
(merged_dataframe).
"""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa

from contest.catalog import DataFile, SnapshotCommit, TableRef

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

BUCKET_COL = "__contest_bucket"
POS_COL = "__contest_pos"
CODECS = ("none", "snappy", "zstd", "gzip", "lz4")
FILE_SCHEMA = "path string, size long, bucket int, rows long, null_keys long"
# What a write task reports: its files, and a row counting NULL keys when it met any.
FILE_ROWS = pa.schema([("path", pa.string()), ("size", pa.int64()), ("bucket", pa.int32()),
                       ("rows", pa.int64()), ("null_keys", pa.int64())])


def _report(files: list[dict], nulls: int) -> pa.RecordBatch:
    rows = [dict(f, null_keys=0) for f in files]
    if nulls:
        rows.append({"path": None, "size": 0, "bucket": -1, "rows": 0, "null_keys": nulls})
    return pa.RecordBatch.from_pylist(rows, schema=FILE_ROWS)


def _outcome(result: list, columns: tuple[str, ...], shuffled: bool) -> WriteOutcome:
    files = [DataFile(r["path"], r["size"], columns, r["bucket"], r["rows"])
             for r in result if r["path"] is not None]
    return WriteOutcome(files, sum(r["null_keys"] for r in result), shuffled)


def _file_id() -> str:
    alphabet = string.ascii_letters
    return "".join(secrets.choice(alphabet) for _ in range(16))


def _filesystem(uri: str):
    import pyarrow.fs as pafs

    return pafs.FileSystem.from_uri(uri)


def write_bucket_files(
    table: pa.Table, table_path: str, key_cols: Sequence[str], out_schema: pa.Schema,
    codec: str = "none",
) -> list[dict]:
    """Write one sorted parquet file per bucket present in `table` (which carries
    BUCKET_COL, and POS_COL when its rows were shuffled) and describe them."""
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if table.num_rows == 0:
        return []
    # One stable sort by key (and arrival position, when rows were shuffled), then a
    # stable partition by bucket: cheaper than one sort on (bucket, key, position).
    sort_keys = [(k, "ascending") for k in key_cols]
    if POS_COL in table.column_names:
        sort_keys.append((POS_COL, "ascending"))
    by_key = pc.sort_indices(table.select([k for k, _ in sort_keys]), sort_keys=sort_keys)
    by_key = by_key.to_numpy()
    bucket_ids = table.column(BUCKET_COL).to_numpy()
    order = by_key[np.argsort(bucket_ids[by_key], kind="stable")]
    table = table.take(pa.array(order))
    buckets = bucket_ids[order]
    fs, base = _filesystem(table_path)
    fs.create_dir(base, recursive=True)
    file_id = _file_id()
    out = []
    starts = np.flatnonzero(np.r_[True, buckets[1:] != buckets[:-1]])
    ends = np.r_[starts[1:], len(buckets)]
    for start, end in zip(starts, ends, strict=True):
        bucket = int(buckets[start])
        part = table.slice(start, end - start).select(out_schema.names).cast(out_schema)
        name = f"part-{file_id}_{bucket:04d}.parquet"
        path = f"{base}/{name}"
        pq.write_table(
            part, path, filesystem=fs, compression=codec.upper() if codec != "none" else "NONE",
            row_group_size=max(part.num_rows, 1), write_statistics=False,
        )
        size = fs.get_file_info(path).size
        out.append({"path": f"{table_path}/{name}", "size": size, "bucket": bucket,
                    "rows": part.num_rows})
    return out


@dataclass(frozen=True)
class WriteOutcome:
    files: list[DataFile]
    null_keys: int  # rows with a NULL key: dropped, or (not dropped) nothing was written
    shuffled: bool  # the plan repartitions the rows (an Exchange) before writing


def write_dataframe(
    df: DataFrame, table: TableRef, *, codec: str = "none", repartition: int | None = None,
    drop_null_keys: bool = False,
) -> WriteOutcome:
    """Write a DataFrame's rows as bucket files of `table`; they stay uncommitted.

    A task that meets NULL keys writes nothing and reports them (unless they are to
    be dropped), so the caller can refuse the whole batch."""
    from pyspark.sql import functions as F

    if codec not in CODECS:
        raise ValueError(f"codec {codec!r}: choose one of {', '.join(CODECS)}")
    missing = [c for c in table.schema.names if c not in df.columns]
    if missing:
        raise ValueError(f"batch lacks the table's column(s) {missing}")
    keys = list(table.primary_keys)
    bucket = F.expr(f"pmod(hash({', '.join(keys)}), {table.hash_buckets})").cast("int")
    if repartition:
        # A shuffle loses the file order: carry each row's position through it.
        staged = df.select(*table.schema.names, bucket.alias(BUCKET_COL),
                           F.monotonically_increasing_id().alias(POS_COL))
        staged = staged.repartition(repartition, *keys)
    else:
        # One task reads a file's rows in order: the position is the arrival order.
        staged = df.select(*table.schema.names, bucket.alias(BUCKET_COL))
    shuffled = "Exchange" in staged._jdf.queryExecution().executedPlan().toString()
    path, schema = table.path, table.schema

    def write_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow.compute as pc

        batch_list = list(batches)
        if not batch_list:
            return
        data = pa.Table.from_batches(batch_list)
        nulls = sum(data.column(k).null_count for k in keys)
        if nulls and not drop_null_keys:
            yield _report([], nulls)  # the batch will be refused: write nothing
            return
        if nulls:
            valid = pc.and_kleene(*[pc.is_valid(data.column(k)) for k in keys]) \
                if len(keys) > 1 else pc.is_valid(data.column(keys[0]))
            data = data.filter(valid)
        yield _report(write_bucket_files(data, path, keys, schema, codec), nulls)

    result = staged.mapInArrow(write_task, FILE_SCHEMA).collect()
    return _outcome(result, tuple(schema.names), shuffled)


def direct_read_possible(table: TableRef) -> bool:
    """A batch can skip the JVM when its bucket is computable here: one string key."""
    keys = table.primary_keys
    return len(keys) == 1 and pa.types.is_string(table.schema.field(keys[0]).type)


def write_file_direct(
    spark: SparkSession, path: str, table: TableRef, *, codec: str = "none",
    drop_null_keys: bool = False,
) -> WriteOutcome:
    """Write a batch file as bucket files of `table` without a shuffle, each Spark task
    reading its row groups with pyarrow and bucketing with Spark's hash computed in
    numpy: the rows never pass through the JVM. Files stay uncommitted."""
    import pyarrow.parquet as pq

    if codec not in CODECS:
        raise ValueError(f"codec {codec!r}: choose one of {', '.join(CODECS)}")
    key = table.primary_keys[0]
    schema, table_path, n_buckets = table.schema, table.path, table.hash_buckets
    fs, local = _filesystem(path)
    with fs.open_input_file(local) as fh:
        groups = pq.ParquetFile(fh).metadata.num_row_groups
    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        import pyarrow.compute as pc

        from contest.spark_hash import buckets

        task_fs, task_local = _filesystem(path)
        for batch in batches:
            for group in batch.column("group").to_pylist():
                with task_fs.open_input_file(task_local) as fh:
                    data = pq.ParquetFile(fh).read_row_group(group, columns=schema.names)
                nulls = data.column(key).null_count
                if nulls and not drop_null_keys:
                    yield _report([], nulls)  # the batch will be refused: write nothing
                    continue
                if nulls:
                    data = data.filter(pc.is_valid(data.column(key)))
                data = data.append_column(BUCKET_COL,
                                          pa.array(buckets(data.column(key), n_buckets)))
                yield _report(write_bucket_files(data, table_path, [key], schema, codec), nulls)

    work = spark.sparkContext.parallelize([(g,) for g in range(groups)], max(groups, 1))
    result = work.toDF("group int").mapInArrow(task, FILE_SCHEMA).collect()
    return _outcome(result, tuple(schema.names), shuffled=False)


def delete_files(paths: Sequence[str]) -> None:
    """Remove written files that will never be committed."""
    for path in paths:
        fs, local = _filesystem(path)
        try:
            fs.delete_file(local)
        except FileNotFoundError:
            pass


def files_by_bucket(commits: Sequence[SnapshotCommit]) -> dict[int, list[tuple[str, int | None]]]:
    """Each bucket's files (with their commit's version) in the order merge-on-read
    applies them: the order of `commits`."""
    out: dict[int, list[tuple[str, int | None]]] = {}
    for commit in commits:
        for f in commit.files:
            out.setdefault(f.bucket, []).append((f.path, commit.version))
    return out


def newest_version(commits: Sequence[SnapshotCommit]) -> int | None:
    return max((c.version for c in commits if c.version is not None), default=None)


class SchemaEvolutionError(ValueError):
    """An old file that the newest schema cannot read."""


def read_bucket(files: Sequence[tuple[str, int | None]], schema: pa.Schema,
                newest: int | None = None) -> pa.Table:
    """A bucket's rows in application order, read with the newest schema: a column
    a file lacks reads as NULL; a column whose type cannot be cast is an error."""
    import pyarrow.parquet as pq

    parts = []
    for path, version in files:
        fs, local = _filesystem(path)
        t = pq.read_table(local, filesystem=fs)
        cols = []
        for f in schema:
            if f.name not in t.column_names:
                cols.append(pa.nulls(t.num_rows, f.type))
                continue
            have = t.column(f.name).type
            if have != f.type and not _safe_cast(have, f.type):
                raise SchemaEvolutionError(
                    f"column {f.name} was {have} in the commit of version {version} "
                    f"({path.rsplit('/', 1)[-1]}) and is {f.type} in the table's newest "
                    f"schema (read at version {newest}): old files cannot be read with it")
            cols.append(t.column(f.name).cast(f.type))
        parts.append(pa.Table.from_arrays(cols, schema=schema))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)


def _safe_cast(have: pa.DataType, want: pa.DataType) -> bool:
    """Widening casts that keep every value (int32 -> int64, string -> large_string...)."""
    if pa.types.is_integer(have) and pa.types.is_integer(want):
        return want.bit_width >= have.bit_width and (
            pa.types.is_signed_integer(want) or not pa.types.is_signed_integer(have))
    if pa.types.is_floating(have) and pa.types.is_floating(want):
        return want.bit_width >= have.bit_width
    strings = (pa.string(), pa.large_string())
    return have in strings and want in strings


def merged_dataframe(
    spark: SparkSession, table: TableRef, commits: Sequence[SnapshotCommit],
    operators: Mapping[str, str] | None = None,
) -> DataFrame:
    """The table merged by primary key, one Spark task per hash bucket."""
    from contest.merge_ops import merge_rows, validate_operators

    ops = dict(operators or {})
    keys = list(table.primary_keys)
    validate_operators(table.schema, keys, ops)
    plain_schema = pa.schema([f.with_nullable(True) for f in table.schema])
    out_schema = _spark_ddl(plain_schema, ops)
    buckets = files_by_bucket(commits)
    work = [(b, json.dumps(files)) for b, files in sorted(buckets.items())]
    if not work:
        return spark.createDataFrame([], out_schema)
    newest = newest_version(commits)

    def merge_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for files in batch.column("files").to_pylist():
                rows = read_bucket([tuple(f) for f in json.loads(files)], plain_schema, newest)
                yield from merge_rows(rows, keys, ops).to_batches(max_chunksize=65536)

    tasks = spark.sparkContext.parallelize(work, len(work)).toDF("bucket int, files string")
    return tasks.mapInArrow(merge_task, out_schema)


def write_merged(
    spark: SparkSession, table: TableRef, commits: Sequence[SnapshotCommit],
    operators: Mapping[str, str] | None, out_dir: str, codec: str = "none",
) -> int:
    """Merge each bucket in its Spark task and write it straight to `out_dir` as
    `part-<bucket>.parquet` with pyarrow: no Arrow-to-row conversion and no second
    encoding in the JVM. Replaces what `out_dir` held; returns the rows written."""
    import pyarrow.parquet as pq

    from contest.merge_ops import _result_schema, merge_rows, validate_operators

    if codec not in CODECS:
        raise ValueError(f"codec {codec!r}: choose one of {', '.join(CODECS)}")
    ops = dict(operators or {})
    keys = list(table.primary_keys)
    validate_operators(table.schema, keys, ops)
    plain_schema = pa.schema([f.with_nullable(True) for f in table.schema])
    result_schema = _result_schema(plain_schema, ops)
    fs, base = _filesystem(out_dir)
    try:
        fs.delete_dir_contents(base)
    except FileNotFoundError:
        pass
    fs.create_dir(base, recursive=True)
    work = [(b, json.dumps(files)) for b, files in sorted(files_by_bucket(commits).items())]
    compression = codec.upper() if codec != "none" else "NONE"
    newest = newest_version(commits)

    def merge_write_task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        task_fs, task_base = _filesystem(out_dir)
        for batch in batches:
            for bucket, files in zip(batch.column("bucket").to_pylist(),
                                     batch.column("files").to_pylist(), strict=True):
                rows = read_bucket([tuple(f) for f in json.loads(files)], plain_schema,
                                   newest)
                merged = merge_rows(rows, keys, ops)
                path = f"{task_base}/part-{bucket:05d}.parquet"
                pq.write_table(merged, path, filesystem=task_fs, compression=compression)
                yield pa.RecordBatch.from_pylist([{"rows": merged.num_rows}],
                                                 schema=pa.schema([("rows", pa.int64())]))

    if work:
        tasks = spark.sparkContext.parallelize(work, len(work)).toDF("bucket int, files string")
        written = sum(r["rows"] for r in tasks.mapInArrow(merge_write_task, "rows long")
                      .collect())
    else:
        pq.write_table(result_schema.empty_table(), f"{base}/part-00000.parquet", filesystem=fs)
        written = 0
    with fs.open_output_stream(f"{base}/_SUCCESS"):
        pass
    return written


_ARROW_TO_SPARK = {
    pa.string(): "string", pa.large_string(): "string", pa.int64(): "bigint",
    pa.int32(): "int", pa.float64(): "double", pa.bool_(): "boolean",
}


def _spark_ddl(schema: pa.Schema, ops: Mapping[str, str]) -> str:
    from contest.merge_ops import SUM_ALL

    cols = []
    for f in schema:
        typ = pa.int64() if ops.get(f.name) == SUM_ALL and pa.types.is_integer(f.type) else f.type
        if typ not in _ARROW_TO_SPARK:
            raise ValueError(f"column {f.name}: type {typ} not supported by the reader")
        cols.append(f"`{f.name}` {_ARROW_TO_SPARK[typ]}")
    return ", ".join(cols)
