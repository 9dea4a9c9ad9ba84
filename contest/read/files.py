"""Merge-on-read of a table's bucket files, one Spark task per hash bucket.

Each task reads its bucket's files in snapshot order and collapses each key with the
merge operators: merge-on-read without a shuffle. The task writes its result file
itself (write_merged), or hands its rows to Spark (merged_dataframe).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from contest.config import CODECS
from contest.errors import SchemaEvolutionError
from contest.infra.storage import filesystem
from meta.catalog import TableRef
from meta.commits import SnapshotCommit

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


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


def read_bucket(
    files: Sequence[tuple[str, int | None]], schema: pa.Schema, newest: int | None = None
) -> pa.Table:
    """A bucket's rows in application order, read with the newest schema: a column
    a file lacks reads as NULL; a column whose type cannot be cast is an error."""
    import pyarrow.parquet as pq

    parts = []
    for path, version in files:
        fs, local = filesystem(path)
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
                    f"schema (read at version {newest}): old files cannot be read with it"
                )
            cols.append(t.column(f.name).cast(f.type))
        parts.append(pa.Table.from_arrays(cols, schema=schema))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)


def _safe_cast(have: pa.DataType, want: pa.DataType) -> bool:
    """Widening casts that keep every value (int32 -> int64, string -> large_string...)."""
    if pa.types.is_integer(have) and pa.types.is_integer(want):
        return want.bit_width >= have.bit_width and (
            pa.types.is_signed_integer(want) or not pa.types.is_signed_integer(have)
        )
    if pa.types.is_floating(have) and pa.types.is_floating(want):
        return want.bit_width >= have.bit_width
    strings = (pa.string(), pa.large_string())
    return have in strings and want in strings


def merged_dataframe(
    spark: SparkSession,
    table: TableRef,
    commits: Sequence[SnapshotCommit],
    operators: Mapping[str, str] | None = None,
) -> DataFrame:
    """The table merged by primary key, one Spark task per hash bucket."""
    from contest.read.operators import merge_rows, validate_operators

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

    def merge_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        for batch in batches:
            for files in batch.column("files").to_pylist():
                rows = read_bucket([tuple(f) for f in json.loads(files)], plain_schema, newest)
                yield from merge_rows(rows, keys, ops).to_batches(max_chunksize=65536)

    tasks = spark.sparkContext.parallelize(work, len(work)).toDF("bucket int, files string")
    return tasks.mapInArrow(merge_task, out_schema)


def write_merged(
    spark: SparkSession,
    table: TableRef,
    commits: Sequence[SnapshotCommit],
    operators: Mapping[str, str] | None,
    out_dir: str,
    codec: str = "none",
) -> int:
    """Merge each bucket in its Spark task and write it straight to `out_dir` as
    `part-<bucket>.parquet` with pyarrow: no Arrow-to-row conversion and no second
    encoding in the JVM. `out_dir` is a fresh folder; returns the rows written."""
    import pyarrow.parquet as pq

    from contest.read.operators import _result_schema, merge_rows, validate_operators

    if codec not in CODECS:
        raise ValueError(f"codec {codec!r}: choose one of {', '.join(CODECS)}")
    ops = dict(operators or {})
    keys = list(table.primary_keys)
    validate_operators(table.schema, keys, ops)
    plain_schema = pa.schema([f.with_nullable(True) for f in table.schema])
    result_schema = _result_schema(plain_schema, ops)
    fs, base = filesystem(out_dir)
    fs.create_dir(base, recursive=True)
    work = [(b, json.dumps(files)) for b, files in sorted(files_by_bucket(commits).items())]
    compression = codec.upper() if codec != "none" else "NONE"
    newest = newest_version(commits)

    def merge_write_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        task_fs, task_base = filesystem(out_dir)
        for batch in batches:
            for bucket, files in zip(
                batch.column("bucket").to_pylist(), batch.column("files").to_pylist(), strict=True
            ):
                rows = read_bucket([tuple(f) for f in json.loads(files)], plain_schema, newest)
                merged = merge_rows(rows, keys, ops)
                path = f"{task_base}/part-{bucket:05d}.parquet"
                pq.write_table(merged, path, filesystem=task_fs, compression=compression)
                yield pa.RecordBatch.from_pylist(
                    [{"rows": merged.num_rows}], schema=pa.schema([("rows", pa.int64())])
                )

    if work:
        tasks = spark.sparkContext.parallelize(work, len(work)).toDF("bucket int, files string")
        written = sum(r["rows"] for r in tasks.mapInArrow(merge_write_task, "rows long").collect())
    else:
        pq.write_table(result_schema.empty_table(), f"{base}/part-00000.parquet", filesystem=fs)
        written = 0
    return written


_ARROW_TO_SPARK = {
    pa.string(): "string",
    pa.large_string(): "string",
    pa.int64(): "bigint",
    pa.int32(): "int",
    pa.float64(): "double",
    pa.bool_(): "boolean",
}


def _spark_ddl(schema: pa.Schema, ops: Mapping[str, str]) -> str:
    from contest.read.operators import SUM_ALL

    cols = []
    for f in schema:
        typ = pa.int64() if ops.get(f.name) == SUM_ALL and pa.types.is_integer(f.type) else f.type
        if typ not in _ARROW_TO_SPARK:
            raise ValueError(f"column {f.name}: type {typ} not supported by the reader")
        cols.append(f"`{f.name}` {_ARROW_TO_SPARK[typ]}")
    return ", ".join(cols)
