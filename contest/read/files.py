"""Merge-on-read of a table's bucket files, one Spark task per hash bucket.

Each task reads its bucket's files in snapshot order and collapses each key with the
merge operators: merge-on-read without a shuffle. The task writes its result file
itself (write_merged), or hands its rows to Spark (merged_dataframe).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from contest.config import CODECS, ReadConfig
from contest.data import operators as registry
from contest.data.dictionaries import dictionary_columns, writes_without_arrow_schema
from contest.data.spark_types import spark_struct
from contest.data.uuid_keys import WORD_COLUMNS
from contest.errors import SchemaEvolutionError
from contest.infra.storage import filesystem
from contest.read.changes import ChangeSpan, change_span_bucket, merge_change_bucket, unreadable
from contest.read.merges import merge_parts
from contest.read.operators import merge_rows, picked_columns, result_schema, validate_operators
from contest.read.statistics import statistics_setting
from contest.read.stream import (
    SortedRun,
    chunk_rows,
    declares_sorted,
    merge_sorted_runs,
    read_buffer_bytes,
)
from contest.read.stream import row_bytes as file_row_bytes
from meta.catalog import TableRef
from meta.commits import SnapshotCommit

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# A merge job's work items (a bucket and its files as JSON) and a writing merge's answer.
WORK_FIELDS = (("bucket", pa.int32()), ("files", pa.string()))
ROWS_FIELDS = (("rows", pa.int64()),)


def files_by_bucket(commits: Sequence[SnapshotCommit]) -> dict[int, list[tuple[str, int | None]]]:
    """Each bucket's files (with their commit's version) in the order merge-on-read
    applies them: the order of `commits`."""
    out: dict[int, list[tuple[str, int | None]]] = {}
    for commit in commits:
        for f in commit.files:
            out.setdefault(f.bucket, []).append((f.path, commit.version))
    return out


def mean_files_per_bucket(commits: Sequence[SnapshotCommit]) -> float | None:
    """Data files a read opens per bucket (what compaction brings down to 1)."""
    buckets = files_by_bucket(commits)
    return round(sum(len(f) for f in buckets.values()) / len(buckets), 2) if buckets else None


def newest_version(commits: Sequence[SnapshotCommit]) -> int | None:
    return max((c.version for c in commits if c.version is not None), default=None)


def read_bucket(
    files: Sequence[tuple[str, int | None]], schema: pa.Schema, newest: int | None = None
) -> pa.Table:
    """A bucket's rows in application order, read with the newest schema: a column
    a file lacks reads as NULL; a column whose type cannot be cast is an error."""
    parts = read_parts(files, schema, newest)
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts)


def read_parts(
    files: Sequence[tuple[str, int | None]], schema: pa.Schema, newest: int | None = None
) -> list[pa.Table]:
    """Each file's rows, conformed as in read_bucket, in application order."""
    parts = []
    for path, version in files:
        fs, local = filesystem(path)
        try:
            t = pq.read_table(local, filesystem=fs)
        except (OSError, pa.ArrowException) as exc:
            raise unreadable(path, exc) from None
        parts.append(conform(t, schema, path, version, newest))
    return parts


def conform(
    t: pa.Table,
    schema: pa.Schema,
    path: str,
    version: int | None,
    newest: int | None,
    keep_dictionaries: bool = False,
) -> pa.Table:
    """Rows of one file with the table's newest schema (see read_bucket); with
    `keep_dictionaries`, a column read as a dictionary of the field's type stays one."""
    cols = []
    fields = []
    for f in schema:
        if f.name not in t.column_names:
            cols.append(pa.nulls(t.num_rows, f.type))
            fields.append(f)
            continue
        have = t.column(f.name).type
        if keep_dictionaries and pa.types.is_dictionary(have) and have.value_type == f.type:
            cols.append(t.column(f.name))
            fields.append(f.with_type(have))
            continue
        if have != f.type and not _safe_cast(have, f.type):
            raise SchemaEvolutionError(
                f"column {f.name} was {have} in the commit of version {version} "
                f"({path.rsplit('/', 1)[-1]}) and is {f.type} in the table's newest "
                f"schema (read at version {newest}): old files cannot be read with it"
            )
        cols.append(t.column(f.name).cast(f.type))
        fields.append(f)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=schema.metadata))


@dataclass(frozen=True)
class MergeTuning:
    """How a merge task reads and merges a bucket (read.merge_memory_bytes, read.merge,
    read.buffer_bytes): see merge_bucket. The defaults merge each bucket whole."""

    memory_bytes: int = 0
    method: str = "numpy"
    buffer_bytes: int = 0

    @classmethod
    def of(cls, read: ReadConfig) -> MergeTuning:
        return cls(read.merge_memory_bytes, read.merge, read.buffer_bytes)


@dataclass(frozen=True)
class BucketMerge:
    """Everything a merge task needs besides a bucket's files: built once on the driver
    and shipped to every task."""

    schema: pa.Schema
    keys: list[str]
    ops: Mapping[str, str]
    newest: int | None
    tuning: MergeTuning = field(default_factory=MergeTuning)
    # The merged pieces may hold dictionary columns (for a writer that stores them as
    # they are); else they are of the result's schema exactly.
    dictionaries: bool = False
    # Change data (contest/read/changes.py): merged with tombstones and per-file columns;
    # `cdc`: LakeSoul's CDC column, read beside `schema` ("" = none).
    changes: bool = False
    cdc: str = ""
    # A changes read of change data (`--from-version` on a table with a CDC column):
    # `commits` reach back to the start, the result names each key's change.
    span: ChangeSpan | None = None

    @classmethod
    def of(
        cls,
        table: TableRef,
        commits: Sequence[SnapshotCommit],
        operators: Mapping[str, str] | None,
        tuning: MergeTuning,
        span: ChangeSpan | None = None,
    ) -> BucketMerge:
        """The merge of `table`'s buckets at `commits`, its operators checked first."""
        ops = dict(operators or {})
        keys = list(table.primary_keys)
        cdc = table.cdc_column
        fields = [f.with_nullable(True) for f in table.schema if f.name != cdc]
        schema = pa.schema(fields)
        validate_operators(schema, keys, ops)
        changes = needs_change_merge(table, commits, ops)
        return cls(
            schema, keys, ops, newest_version(commits), tuning, changes=changes, cdc=cdc, span=span
        )

    @property
    def result(self) -> pa.Schema:
        """The merged pieces' schema (a changes read's op column last)."""
        out = result_schema(self.schema, self.ops)
        return out.append(pa.field(self.span.op_column, pa.string())) if self.span else out

    def __call__(self, files: Sequence[tuple[str, int | None]]) -> Iterator[pa.Table]:
        if self.span is not None:
            return iter([change_span_bucket(files, self.schema, self.keys, self.ops, self.span)])
        if self.changes:
            return iter([merge_change_bucket(files, self.schema, self.keys, self.ops, self.cdc)])
        t = self.tuning
        return merge_bucket(
            files,
            self.schema,
            self.keys,
            self.ops,
            self.newest,
            t.memory_bytes,
            t.method,
            t.buffer_bytes,
            self.dictionaries,
        )


def needs_change_merge(
    table: TableRef, commits: Sequence[SnapshotCommit], ops: Mapping[str, str]
) -> bool:
    """Whether a table's buckets merge as change data (contest/read/changes.py): it has
    a CDC column, a key other than one string column, or a file lacking a column whose
    operator lets a NULL overwrite after a file that held it (an absent column must then
    not read as NULL; a column added by schema evolution is absent only before it is
    held, where the two agree)."""
    keys = table.primary_keys
    key_type = table.schema.field(keys[0]).type if len(keys) == 1 else None
    if table.cdc_column or key_type is None or not pa.types.is_string(key_type):
        return True
    overwriting = {
        c
        for c in table.schema.names
        if c not in keys and registry.get(ops.get(c, registry.DEFAULT)).null_overwrites
    }
    held: set[str] = set()
    for commit in commits if overwriting else ():
        for f in commit.files:
            if not f.columns:
                continue
            if (held - set(f.columns)) & overwriting:
                return True
            held |= set(f.columns)
    return False


def merge_bucket(
    files: Sequence[tuple[str, int | None]],
    schema: pa.Schema,
    keys: list[str],
    ops: Mapping[str, str],
    newest: int | None,
    memory_bytes: int,
    method: str = "numpy",
    buffer_bytes: int = 0,
    dictionaries: bool = False,
) -> Iterator[pa.Table]:
    """A bucket's merged rows, in pieces. When every file is sorted by a single key
    (its footer says so) and `memory_bytes` is set, a k-way merge of the files read a
    chunk at a time (contest/read/stream.py); otherwise the whole bucket at once.
    `method`: which engine merges (read.merge, contest/read/merges.py); `buffer_bytes`:
    read.buffer_bytes (0 = the budget's share, stream.read_buffer_bytes);
    `dictionaries`: the k-way merge by numpy reads the columns whose operator picks a
    row as dictionaries where a file stores them as small ones, and its pieces keep
    them (no string is decoded, hashed or encoded again on the way to a writer)."""
    opened: list[tuple[str, int | None, Any]] = []
    if memory_bytes > 0 and len(keys) == 1:
        # Columns a run may read: the table's and the key's two words (counted even when
        # the write did not store them: buffers a little under the budget's share).
        columns = len(schema) + len(WORD_COLUMNS)
        buffer = read_buffer_bytes(memory_bytes, len(files), columns, buffer_bytes)
        picked = (
            picked_columns(schema.names, keys, ops) if dictionaries and method == "numpy" else []
        )
        for path, version in files:
            fs, local = filesystem(path)
            try:
                pf = pq.ParquetFile(fs.open_input_file(local), pre_buffer=False, buffer_size=buffer)
            except (OSError, pa.ArrowException) as exc:
                raise unreadable(path, exc) from None
            names = pf.schema_arrow.names
            if keys[0] not in names or not declares_sorted(pf.metadata, names.index(keys[0])):
                opened = []
                break
            as_dictionaries = dictionary_columns(pf.metadata, picked)
            if as_dictionaries:
                pf = pq.ParquetFile(
                    fs.open_input_file(local),
                    metadata=pf.metadata,
                    pre_buffer=False,
                    buffer_size=buffer,
                    read_dictionary=as_dictionaries,
                )
            opened.append((path, version, pf))
    if not opened:
        if method == "numpy":  # the reference path, as it always was
            yield merge_rows(read_bucket(files, schema, newest), keys, ops)
            return
        parts = read_parts(files, schema, newest) or [schema.empty_table()]
        yield merge_parts(method, parts, keys, ops)
        return
    rows = chunk_rows(memory_bytes, [file_row_bytes(pf.metadata) for _, _, pf in opened])
    # Keys' words stored by the write (write.key_words) in every file: kept beside the
    # rows for merge_rows to group by; else dropped and the keys parsed.
    words = method == "numpy" and all(
        set(WORD_COLUMNS) <= set(pf.schema_arrow.names) for _, _, pf in opened
    )
    runs = [
        SortedRun(
            path.rsplit("/", 1)[-1],
            pf,
            keys[0],
            rows,
            _conformer(schema, path, version, newest, words, dictionaries),
        )
        for path, version, pf in opened
    ]
    yield from merge_sorted_runs(runs, keys[0], ops, method, dictionaries)


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


def _conformer(
    schema: pa.Schema,
    path: str,
    version: int | None,
    newest: int | None,
    words: bool = False,
    dictionaries: bool = False,
) -> Callable[[pa.Table], pa.Table]:
    if not words:
        return lambda t: conform(t, schema, path, version, newest, dictionaries)

    def with_words(t: pa.Table) -> pa.Table:
        out = conform(t, schema, path, version, newest, dictionaries)
        for name in WORD_COLUMNS:
            out = out.append_column(name, t.column(name))
        return out

    return with_words


def merged_dataframe(
    spark: SparkSession,
    table: TableRef,
    commits: Sequence[SnapshotCommit],
    operators: Mapping[str, str] | None = None,
    tuning: MergeTuning = MergeTuning(),
    span: ChangeSpan | None = None,
) -> DataFrame:
    """The table merged by primary key, one Spark task per hash bucket (`tuning`: how
    a bucket is read and merged, see merge_bucket; `span`: a changes read of change
    data)."""
    merge = BucketMerge.of(table, commits, operators, tuning, span)
    out_schema = spark_struct((f.name, f.type) for f in result_schema(merge.result, merge.ops))
    buckets = files_by_bucket(commits)
    work = [(b, json.dumps(files)) for b, files in sorted(buckets.items())]
    if not work:
        return spark.createDataFrame([], out_schema)

    def merge_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        for batch in batches:
            for files in batch.column("files").to_pylist():
                for merged in merge([tuple(f) for f in json.loads(files)]):
                    yield from merged.to_batches(max_chunksize=65536)

    tasks = spark.sparkContext.parallelize(work, len(work)).toDF(spark_struct(WORK_FIELDS))
    return tasks.mapInArrow(merge_task, out_schema)


def write_merged(
    spark: SparkSession,
    table: TableRef,
    commits: Sequence[SnapshotCommit],
    operators: Mapping[str, str] | None,
    out_dir: str,
    codec: str = "none",
    tuning: MergeTuning = MergeTuning(),
    statistics: str = "all",
    span: ChangeSpan | None = None,
) -> int:
    """Merge each bucket in its Spark task and write it straight to `out_dir` as
    `part-<bucket>.parquet` with pyarrow: no Arrow-to-row conversion and no second
    encoding in the JVM. `out_dir` is a fresh folder; returns the rows written.
    `tuning`: how a bucket is read and merged, see merge_bucket; `statistics`
    (read.statistics): which columns' min/max the files carry (key, all, none)."""
    if codec not in CODECS:
        raise ValueError(f"codec {codec!r}: choose one of {', '.join(CODECS)}")
    merge = BucketMerge.of(table, commits, operators, tuning, span)
    out_schema = merge.result
    # Columns merged as dictionaries are written as they are (the writer stores their
    # indices instead of hashing every string again) when the result's types read back
    # the same without ARROW:schema: its files then say string, as before.
    as_is = writes_without_arrow_schema(out_schema)
    merge = replace(merge, dictionaries=as_is)
    fs, base = filesystem(out_dir)
    fs.create_dir(base, recursive=True)
    work = [(b, json.dumps(files)) for b, files in sorted(files_by_bucket(commits).items())]
    compression = codec.upper() if codec != "none" else "NONE"
    with_statistics = statistics_setting(statistics, table.primary_keys)

    def merge_write_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        task_fs, task_base = filesystem(out_dir)
        for batch in batches:
            for bucket, files in zip(
                batch.column("bucket").to_pylist(), batch.column("files").to_pylist(), strict=True
            ):
                path = f"{task_base}/part-{bucket:05d}.parquet"
                written = 0
                writer = None
                try:
                    for merged in merge([tuple(f) for f in json.loads(files)]):
                        if writer is None:  # of the first piece's types (dictionaries)
                            writer = pq.ParquetWriter(
                                path,
                                merged.schema,
                                filesystem=task_fs,
                                compression=compression,
                                store_schema=not as_is,
                                write_statistics=with_statistics,
                            )
                        elif merged.schema != writer.schema:
                            merged = merged.cast(writer.schema)
                        writer.write_table(merged)
                        written += merged.num_rows
                    if writer is None:
                        writer = pq.ParquetWriter(
                            path,
                            out_schema,
                            filesystem=task_fs,
                            compression=compression,
                            write_statistics=with_statistics,
                        )
                finally:
                    if writer is not None:
                        writer.close()
                yield pa.RecordBatch.from_pylist(
                    [{"rows": written}], schema=pa.schema([("rows", pa.int64())])
                )

    if work:
        tasks = spark.sparkContext.parallelize(work, len(work)).toDF(spark_struct(WORK_FIELDS))
        answers = tasks.mapInArrow(merge_write_task, spark_struct(ROWS_FIELDS)).collect()
        written = sum(r["rows"] for r in answers)
    else:
        pq.write_table(out_schema.empty_table(), f"{base}/part-00000.parquet", filesystem=fs)
        written = 0
    return written
