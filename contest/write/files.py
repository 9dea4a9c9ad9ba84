"""Batch rows written as LakeSoul bucket files; PostgreSQL holds the commits.

Each Spark task buckets its rows the way LakeSoul does (`pmod(hash(pk), buckets)`,
Spark's Murmur3 = LakeSoul's), sorts each bucket by primary key (stably: rows of one
key keep their order) and writes one parquet file per bucket,
`part-<id>_<bucket:04>.parquet`, with the codec asked for. A batch that is not
repartitioned is read by its tasks with pyarrow (write_file_direct); one that is goes
through Spark's shuffle (write_dataframe). The driver then commits the files
(meta.commits.commit_files). Nothing is half-committed: a batch that fails has its
files deleted, those of every task of its job (their names begin with the write's
token: cleanup.py); only a killed process leaves files no commit names, for `contest
vacuum`.
"""

from __future__ import annotations

import secrets
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contest.config import CODECS
from contest.data.dictionaries import (
    cast_keeping_dictionaries,
    few_values_as_dictionaries,
    writes_without_arrow_schema,
)
from contest.data.spark_types import spark_struct
from contest.data.uuid_keys import WORD_COLUMNS, uuid_words
from contest.infra.storage import filesystem
from contest.write.batch_reader import read_pieces
from contest.write.order import bucket_key_order
from contest.write.spark_hash import buckets
from contest.write.split import pieces, plan_ranges
from meta.catalog import TableRef
from meta.commits import DataFile
from meta.connection import PgConnection
from meta.tokens import TOKEN_LEN, register_tokens

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

BUCKET_COL = "__contest_bucket"
POS_COL = "__contest_pos"
# A range-reading job's work items: each task's rows of the batch file.
RANGE_FIELDS = (("start", pa.int64()), ("stop", pa.int64()))
# What a write task reports: its files, and a row counting NULL keys when it met any.
FILE_ROWS = pa.schema(
    [
        ("path", pa.string()),
        ("size", pa.int64()),
        ("bucket", pa.int32()),
        ("rows", pa.int64()),
        ("null_keys", pa.int64()),
    ]
)


def file_rows(files: list[dict], nulls: int) -> pa.RecordBatch:
    """What a task hands the driver: its written files (and its count of NULL keys) as
    rows of FILE_ROWS; every task that writes bucket files reports this way."""
    rows = [dict(f, null_keys=0) for f in files]
    if nulls:
        rows.append({"path": None, "size": 0, "bucket": -1, "rows": 0, "null_keys": nulls})
    return pa.RecordBatch.from_pylist(rows, schema=FILE_ROWS)


def write_outcome(
    result: list, columns: tuple[str, ...], shuffled: bool, parts: int = 0
) -> WriteOutcome:
    """The tasks' FILE_ROWS as the batch's files (each holding `columns`) and NULL keys."""
    files = [
        DataFile(r["path"], r["size"], columns, r["bucket"], r["rows"])
        for r in result
        if r["path"] is not None
    ]
    return WriteOutcome(files, sum(r["null_keys"] for r in result), shuffled, parts)


def _file_id(prefix: str = "") -> str:
    """16 letters: `prefix` (a write's token, see write_token) then random ones."""
    alphabet = string.ascii_letters
    return prefix + "".join(secrets.choice(alphabet) for _ in range(16 - len(prefix)))


def write_token() -> str:
    """8 letters that begin the name of every file one write (one batch's Spark job,
    one compaction) creates, so that when it fails its files, also those of tasks that
    finished or were still running, can be found and deleted (delete_written)."""
    return _file_id()[:TOKEN_LEN]


def claim_tokens(conn: PgConnection, table: TableRef, kind: str, count: int = 1) -> list[str]:
    """New write tokens, registered for the table before any file is written under them:
    a later clean-up may then delete their files, and only those (meta/tokens.py)."""
    tokens = [write_token() for _ in range(count)]
    register_tokens(conn, table.table_id, tokens, kind)
    return tokens


def write_bucket_files(
    table: pa.Table,
    table_path: str,
    key_cols: Sequence[str],
    out_schema: pa.Schema,
    codec: str = "none",
    token: str = "",
    sort: str = "arrow",
    key_words: bool = False,
) -> list[dict]:
    """Write one sorted parquet file per bucket present in `table` (which carries
    BUCKET_COL, and POS_COL when its rows were shuffled) and describe them; their
    names begin with `token`; `sort`: write.sort (contest/write/order.py); `key_words`
    (write.key_words): canonical UUID keys' 128 bits stored beside them in
    WORD_COLUMNS, for the read to group by. When a file cannot be written (a full
    disk), the files of this call, the partial one too, are deleted before the error
    goes on."""
    if table.num_rows == 0:
        return []
    # By bucket, then key, then arrival position when rows were shuffled (stably).
    pos = table.column(POS_COL).to_numpy() if POS_COL in table.column_names else None
    bucket_ids = table.column(BUCKET_COL).to_numpy()
    words = None
    if key_words and sort == "uuid128" and len(key_cols) == 1:
        words = uuid_words(table.column(key_cols[0]))  # None: not every key a UUID
    order = bucket_key_order(table, key_cols, bucket_ids, pos, sort, words)
    # Dictionary columns are written as they are when the files need no ARROW:schema
    # (they then say string, as before), else each bucket part is cast back first.
    as_is = writes_without_arrow_schema(out_schema)
    table = few_values_as_dictionaries(table, {c for c in out_schema.names if c not in key_cols})
    table = table.take(pa.array(order))
    buckets = bucket_ids[order]
    stored = (
        None
        if words is None
        else [w[order].view(np.int64) for w in words]  # the bits, as parquet's int64
    )
    fs, base = filesystem(table_path)
    fs.create_dir(base, recursive=True)
    file_id = _file_id(token)
    out: list[dict] = []
    sorting = [pq.SortingColumn(out_schema.names.index(k)) for k in key_cols]
    starts = np.flatnonzero(np.r_[True, buckets[1:] != buckets[:-1]])
    ends = np.r_[starts[1:], len(buckets)]
    attempted: list[str] = []  # local paths, the one being written last
    try:
        for start, end in zip(starts, ends, strict=True):
            bucket = int(buckets[start])
            part = table.slice(start, end - start).select(out_schema.names)
            part = cast_keeping_dictionaries(part, out_schema) if as_is else part.cast(out_schema)
            if stored is not None:
                for name, col in zip(WORD_COLUMNS, stored, strict=True):
                    part = part.append_column(name, pa.array(col[start:end]))
            name = f"part-{file_id}_{bucket:04d}.parquet"
            path = f"{base}/{name}"
            attempted.append(path)
            pq.write_table(
                part,
                path,
                filesystem=fs,
                compression=codec.upper() if codec != "none" else "NONE",
                row_group_size=max(part.num_rows, 1),
                write_statistics=False,
                store_schema=not as_is,
                # The footer says the file is sorted by key: the read merges such files as
                # sorted runs in bounded memory (contest/read/stream.py).
                sorting_columns=sorting,
            )
            size = fs.get_file_info(path).size
            out.append(
                {
                    "path": f"{table_path}/{name}",
                    "size": size,
                    "bucket": bucket,
                    "rows": part.num_rows,
                }
            )
    except BaseException:
        for path in attempted:
            try:
                fs.delete_file(path)
            except OSError:  # FileNotFoundError too: the partial file may not exist
                pass
        raise
    return out


@dataclass(frozen=True)
class WriteOutcome:
    files: list[DataFile]
    null_keys: int  # rows with a NULL key: dropped, or (not dropped) nothing was written
    shuffled: bool  # the plan repartitions the rows (an Exchange) before writing
    parts: int = 0  # a big batch's parts: shuffle partitions, or row-range pieces


def write_dataframe(
    df: DataFrame,
    table: TableRef,
    *,
    codec: str = "none",
    repartition: int | None = None,
    drop_null_keys: bool = False,
    token: str = "",
    sort: str = "arrow",
) -> WriteOutcome:
    """Write a DataFrame's rows as bucket files of `table`, their names beginning with
    `token`; they stay uncommitted.

    A task that meets NULL keys writes nothing and reports them (unless they are to
    be dropped), so the caller can refuse the whole batch."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
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
        staged = df.select(
            *table.schema.names,
            bucket.alias(BUCKET_COL),
            F.monotonically_increasing_id().alias(POS_COL),
        )
        staged = staged.repartition(repartition, *keys)
    else:
        # One task reads a file's rows in order: the position is the arrival order.
        staged = df.select(*table.schema.names, bucket.alias(BUCKET_COL))
    shuffled = "Exchange" in staged._jdf.queryExecution().executedPlan().toString()
    path, schema = table.path, table.schema

    def write_task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        batch_list = list(batches)
        if not batch_list:
            return
        data = pa.Table.from_batches(batch_list)
        nulls = sum(data.column(k).null_count for k in keys)
        if nulls and not drop_null_keys:
            yield file_rows([], nulls)  # the batch will be refused: write nothing
            return
        if nulls:
            valid = (
                pc.and_kleene(*[pc.is_valid(data.column(k)) for k in keys])
                if len(keys) > 1
                else pc.is_valid(data.column(keys[0]))
            )
            data = data.filter(valid)
        yield file_rows(write_bucket_files(data, path, keys, schema, codec, token, sort), nulls)

    result = staged.mapInArrow(write_task, spark_struct(FILE_ROWS)).collect()
    return write_outcome(result, tuple(schema.names), shuffled, repartition or 0)


def direct_read_possible(table: TableRef) -> bool:
    """A batch can skip the JVM when its bucket is computable here: one string key."""
    keys = table.primary_keys
    return len(keys) == 1 and pa.types.is_string(table.schema.field(keys[0]).type)


def write_file_direct(
    spark: SparkSession,
    path: str,
    table: TableRef,
    *,
    codec: str = "none",
    drop_null_keys: bool = False,
    token: str = "",
    sort: str = "arrow",
    piece_rows: int = 0,
    key_words: bool = False,
    file_dictionaries: bool = False,
    decode_threads: bool = False,
) -> WriteOutcome:
    """Write a batch file as bucket files of `table` without a shuffle, one Spark task
    per row group reading it with pyarrow and bucketing with Spark's hash computed in
    numpy: the rows never pass through the JVM. A row group of more than `piece_rows`
    rows (write.batch_piece_rows; 0: never) is written in equal pieces of at most that
    many, in file order, as a big file's parts are; consecutive smaller row groups are
    packed into one task of at most that many rows. Every task writes a file to every
    bucket, and the read merges a bucket's files as sorted runs: pyarrow's 1Mi-row
    groups, a task each, gave a scale-10 bucket 280 runs whose merge outgrew the machine
    (results/notes/duckdb.md, ninth sitting). Files stay uncommitted."""
    group_rows = row_group_rows(path)
    if piece_rows > 0:
        ranges = plan_ranges(group_rows, piece_rows, 1)
    else:
        bounds = [sum(group_rows[:g]) for g in range(len(group_rows) + 1)]
        ranges = list(zip(bounds, bounds[1:], strict=False))
    return write_file_split(
        spark,
        path,
        table,
        ranges=ranges,
        group_rows=group_rows,
        # No row group cut: one piece a task, reported as before (no parts).
        piece_rows=piece_rows if any(g > piece_rows for g in group_rows) else 0,
        codec=codec,
        drop_null_keys=drop_null_keys,
        token=token,
        sort=sort,
        key_words=key_words,
        file_dictionaries=file_dictionaries,
        decode_threads=decode_threads,
    )


def row_group_rows(path: str) -> list[int]:
    """The rows of each row group of a parquet file, from its footer."""
    fs, local = filesystem(path)
    with fs.open_input_file(local) as fh:
        meta = pq.ParquetFile(fh).metadata
    return [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]


def write_file_split(
    spark: SparkSession,
    path: str,
    table: TableRef,
    *,
    ranges: Sequence[tuple[int, int]],
    group_rows: Sequence[int],
    piece_rows: int = 0,
    codec: str = "none",
    drop_null_keys: bool = False,
    token: str = "",
    sort: str = "arrow",
    key_words: bool = False,
    file_dictionaries: bool = False,
    decode_threads: bool = False,
) -> WriteOutcome:
    """Write a batch file as bucket files of `table` without the JVM: one Spark task per
    row range (contest/write/split.py), reading it with pyarrow (a range inside a row
    group streamed, never the whole group) and writing it in pieces of at most
    `piece_rows` rows (0: the whole range), each piece's rows bucketed with Spark's hash
    in numpy and written as sorted bucket files. The files come back in range order,
    then piece order: a key's rows in several files of the commit keep the file's row
    order (files of one commit are applied in their listed order). Files stay
    uncommitted. `file_dictionaries` (write.file_dictionaries): the batch's non-key
    string columns stored as small dictionaries are read as dictionaries;
    `decode_threads` (write.decode_threads): see read_pieces' `threads`."""
    if codec not in CODECS:
        raise ValueError(f"codec {codec!r}: choose one of {', '.join(CODECS)}")
    if not direct_read_possible(table):
        raise ValueError("a batch is read without the JVM only for one string key")

    key = table.primary_keys[0]
    schema, table_path, n_buckets = table.schema, table.path, table.hash_buckets
    groups = list(group_rows)
    as_dictionaries = [c for c in schema.names if c != key] if file_dictionaries else []

    def task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        for batch in batches:
            starts, stops = batch.column("start").to_pylist(), batch.column("stop").to_pylist()
            for start, stop in zip(starts, stops, strict=True):
                refused = False
                for data in read_pieces(
                    path,
                    groups,
                    start,
                    stop,
                    piece_rows,
                    schema.names,
                    as_dictionaries,
                    threads=decode_threads,
                ):
                    nulls = data.column(key).null_count
                    refused = refused or bool(nulls and not drop_null_keys)
                    if refused:  # the batch will be refused: write nothing, count on
                        if nulls:
                            yield file_rows([], nulls)
                        continue
                    if nulls:
                        data = data.filter(pc.is_valid(data.column(key)))
                    data = data.append_column(
                        BUCKET_COL, pa.array(buckets(data.column(key), n_buckets))
                    )
                    yield file_rows(
                        write_bucket_files(
                            data, table_path, [key], schema, codec, token, sort, key_words
                        ),
                        nulls,
                    )

    work = [(int(a), int(b)) for a, b in ranges if b > a]
    if not work:
        return WriteOutcome([], 0, shuffled=False)
    tasks = spark.sparkContext.parallelize(work, len(work)).toDF(spark_struct(RANGE_FIELDS))
    # collect() keeps the tasks' order, and each task's rows in the order it yields them.
    result = tasks.mapInArrow(task, spark_struct(FILE_ROWS)).collect()
    parts = sum(len(pieces(a, b, piece_rows)) for a, b in work) if piece_rows else 0
    return write_outcome(result, tuple(schema.names), shuffled=False, parts=parts)
