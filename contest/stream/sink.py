"""The `foreachBatch` sink: each micro-batch upserted into a LakeSoul table, exactly once.

A micro-batch is committed as one LakeSoul commit carrying the next version of the
table (so it applies after every earlier micro-batch), and (query id, batch id) is
recorded in the commit's own transaction (meta/stream.py). The query id is the one
Spark keeps in the checkpoint's `metadata` file: it stays the same across restarts
(the run id changes), so a batch that Spark replays after a crash, in this run or a
later one, is recognised and skipped before anything is written.

The rows are written by the harness's own writer: the batch's source files read by
Spark tasks with pyarrow and written as bucket files (write_bucket_files), listed in the commit in
the order of the batch's source files (by name: the feed numbers them), so a key's rows
from a later file apply after those of an earlier one, as in the oracle. One Spark job
per micro-batch: a task per row group of its source files.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from contest.config import Config
from contest.data.batches import SCHEMA, check_schema
from contest.data.spark_types import spark_struct
from contest.errors import DataError, HarnessError, RunError
from contest.infra.folders import open_input
from contest.infra.storage import filesystem
from contest.peers.microbatch import check_order, check_replay, name_order, real_path
from contest.stream.changes import is_change_stream, write_change_files
from contest.stream.ordering import order_files, sorted_copies
from contest.write.cleanup import delete_written, wait_for_tasks
from contest.write.files import (
    BUCKET_COL,
    FILE_ROWS,
    claim_tokens,
    file_rows,
    write_bucket_files,
    write_token,
)
from contest.write.spark_hash import buckets
from meta.catalog import TableRef
from meta.commits import DataFile, live_files
from meta.connection import PgConnection
from meta.stream import BatchRecorded, commit_batch, last_sources, recorded
from meta.tokens import release_tokens

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("contest.stream")
# Every micro-batch logs one line beginning with this, then JSON (the bench reads them).
BATCH_LINE = "stream-batch "


@dataclass
class BatchLog:
    batch_id: int
    query_id: str
    run_id: str | None
    # "committed" | "replayed" (committed before, verified, skipped) | "repaired" (a
    # peer sink: recorded but not readable, repaired and written again)
    status: str
    version: int
    files: int = 0
    rows: int = 0
    write_s: float = 0.0
    commit_s: float = 0.0
    committed_unix: float = 0.0  # when the commit returned (visible to reads from then)


@dataclass
class SinkStats:
    batches: list[BatchLog] = field(default_factory=list)
    last_activity: float = field(default_factory=time.monotonic)
    busy: bool = False
    # The harness's own error that failed a batch (and so the query): the query's
    # error is Spark's wrapper of it.
    error: HarnessError | None = None

    @property
    def committed(self) -> list[BatchLog]:
        return [b for b in self.batches if b.status == "committed"]

    @property
    def replayed(self) -> list[int]:
        return [b.batch_id for b in self.batches if b.status == "replayed"]


def checkpoint_query_id(checkpoint: str) -> str:
    """The query id Spark keeps in `<checkpoint>/metadata` (`{"id": ...}`), the same for
    every run of the query."""
    fs, base = filesystem(checkpoint)
    try:
        with fs.open_input_stream(f"{base}/metadata") as fh:
            first = fh.read().decode().splitlines()[0]
        return str(json.loads(first)["id"])
    except (OSError, IndexError, KeyError, ValueError) as exc:
        raise RunError(
            f"{checkpoint}/metadata: no query id in Spark's checkpoint "
            f"({type(exc).__name__}: {exc})"
        ) from None


def source_files(df: DataFrame) -> list[str]:
    """The files of a micro-batch by their real paths (a folder reached through a
    symlink names the same files), in natural name order. `foreachBatch` hands over the
    batch as an RDD (Spark 3.5's ForeachBatchSink), so `inputFiles()` is empty: Spark's own
    `input_file_name()` of the rows says (a scan of no columns: footers only)."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import functions as F

    rows = df.select(F.input_file_name().alias("f")).distinct().collect()
    return sorted({real_path(r["f"]) for r in rows if r["f"]}, key=name_order)


class UpsertSink:
    """The function given to `foreachBatch` (called with the batch and its id)."""

    def __init__(
        self,
        cfg: Config,
        conn: PgConnection,
        table: TableRef,
        checkpoint: str,
        say: Callable[[str], None] | None = None,
    ):
        self.cfg, self.conn, self.table, self.checkpoint = cfg, conn, table, checkpoint
        self.say = say or log.info
        self.stats = SinkStats()
        self._query_id: str | None = None
        self.run_id: str | None = None  # set once the query started
        # Change data (contest/stream/changes.py): written per source file.
        self.changes = is_change_stream(cfg) or bool(table.cdc_column)

    @property
    def query_id(self) -> str:
        if self._query_id is None:
            self._query_id = checkpoint_query_id(self.checkpoint)
        return self._query_id

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        self.stats.busy = True
        try:
            self._batch(df, int(batch_id))
        except HarnessError as exc:
            self.stats.error = exc
            raise
        finally:
            self.stats.busy = False
            self.stats.last_activity = time.monotonic()

    def _batch(self, df: DataFrame, batch_id: int) -> None:
        spark = df.sparkSession
        qid = self.query_id
        run_id = self.run_id or _run_id(spark, qid)
        done = recorded(self.conn, self.table, qid, batch_id)
        sources = source_files(df)
        if done is not None:
            check_replay(qid, batch_id, done.source_files, sources)
            self._verify(done.batch_id, done.version)
            self._replayed(done.batch_id, done.version, run_id)
            return
        last = last_sources(self.conn, self.table, qid)
        column = self.cfg.workload.order_column
        if column:  # by the column's ranges (contest/stream/ordering.py)
            sources = order_files(sources, column, last)
        else:
            check_order(sources, max(last, key=name_order, default=""))
        started = time.perf_counter()
        tokens: list[str] = []
        group = f"contest-stream-{write_token()}"
        spark.sparkContext.setJobGroup(group, f"stream batch {batch_id}", interruptOnCancel=True)
        try:
            files = self._write(spark, self._readable(sources, batch_id), tokens)
            write_s = time.perf_counter() - started
            try:
                result, version = commit_batch(
                    self.conn,
                    self.table,
                    files,
                    query_id=qid,
                    batch_id=batch_id,
                    source_files=sources,
                    run_id=run_id,
                )
            except BatchRecorded as exc:  # another run committed it meanwhile
                self._delete(tokens)
                self._replayed(batch_id, exc.batch.version, run_id)
                return
        except BaseException:
            spark.sparkContext.cancelJobGroup(group)
            wait_for_tasks(spark, group)
            self._delete(tokens)
            raise
        finally:
            shutil.rmtree(self._copies(batch_id), ignore_errors=True)
        entry = BatchLog(
            batch_id,
            qid,
            run_id,
            "committed",
            version,
            files=len(sources),
            rows=sum(f.rows for f in files),
            write_s=round(write_s, 4),
            commit_s=round(result.seconds, 4),
            committed_unix=time.time(),
        )
        self._log(entry)
        if self.cfg.stream.pause_after_commit_s:
            time.sleep(self.cfg.stream.pause_after_commit_s)  # a crash here: a replay

    def _copies(self, batch_id: int) -> Path:
        """Where a micro-batch's files sorted by the order column are (this sink's own)."""
        return self.cfg.work_path / "stream" / "ordered" / f"{self.query_id}-{batch_id}"

    def _readable(self, sources: list[str], batch_id: int) -> list[str]:
        """The files the write reads: the sources, or with an order column their copies
        with the rows in its order."""
        column = self.cfg.workload.order_column
        if not column:
            return sources
        return sorted_copies(sources, column, self._copies(batch_id))

    def _write(self, spark: SparkSession, sources: list[str], tokens: list[str]) -> list[DataFile]:
        """The batch's source files as bucket files in one Spark job (a task per row
        group), listed in source order: each (file, row group) writes under a token of
        its own, which says where its files go in the list."""
        cfg, table = self.cfg, self.table
        if self.changes:
            if len(tokens) < len(sources):
                tokens += claim_tokens(self.conn, table, "stream", len(sources) - len(tokens))
            return write_change_files(spark, cfg, table, sources, lambda i: tokens[i])
        work: list[tuple[str, int]] = []
        for path in sources:
            with open_input(path) as fh:
                pf = pq.ParquetFile(fh)
                check_schema(path, pf.schema_arrow, SCHEMA)
                work += [(path, g) for g in range(pf.metadata.num_row_groups)]
        if len(tokens) < len(work):
            tokens += claim_tokens(self.conn, self.table, "stream", len(work) - len(tokens))
        rows = [(path, g, tokens[i]) for i, (path, g) in enumerate(work)]
        if not rows:
            return []
        task = _bucket_task(table, cfg.write.codec, cfg.write.drop_null_keys, cfg.write.sort)
        df = spark.createDataFrame(rows, "path string, rg int, token string")
        result = df.repartition(len(rows)).mapInArrow(task, spark_struct(FILE_ROWS)).collect()
        nulls = sum(r["null_keys"] for r in result)
        if nulls and not cfg.write.drop_null_keys:
            raise DataError(
                f"{', '.join(sources)}: {nulls} row(s) with a NULL uuid "
                "(set write.drop_null_keys=true to drop and count them)"
            )
        place = {t: i for i, t in enumerate(tokens)}
        files = [r for r in result if r["path"] is not None]
        files.sort(key=lambda r: place[r["path"].rsplit("/", 1)[-1][5:13]])
        cols = tuple(table.schema.names)
        return [DataFile(r["path"], r["size"], cols, r["bucket"], r["rows"]) for r in files]

    def _verify(self, batch_id: int, version: int) -> None:
        """A micro-batch recorded as committed is skipped only when the table a read
        starts from now holds it whole: every data file its head snapshot names is
        there (its commit and its record are one PostgreSQL transaction, so a recorded
        batch's files were committed; a read opens them all). Files gone cannot be
        written back from the batch alone (later batches merged with them): one line."""
        gone = [p for p in sorted(live_files(self.conn, self.table)) if not _exists(p)]
        if gone:
            raise RunError(
                f"batch {batch_id} of query {self.query_id} is recorded as committed "
                f"(version {version}), but {len(gone)} data file(s) the table's snapshot "
                f"names are gone ({gone[0]}): nothing written; restore them or roll the "
                f"table back (contest rollback) before restarting"
            )

    def _delete(self, tokens: Sequence[str]) -> None:
        """The files of a micro-batch that did not commit, and then its tokens."""
        _delete(self.table.path, tokens)
        if tokens:
            release_tokens(self.conn, self.table.table_id, tokens)

    def _replayed(self, batch_id: int, version: int, run_id: str | None) -> None:
        self._log(BatchLog(batch_id, self.query_id, run_id, "replayed", version))

    def _log(self, entry: BatchLog) -> None:
        self.stats.batches.append(entry)
        if entry.status == "replayed":
            self.say(
                f"batch {entry.batch_id} of query {entry.query_id[:8]}: committed before "
                f"(version {entry.version}), skipped (a replay)"
            )
        else:
            self.say(
                f"batch {entry.batch_id} of query {entry.query_id[:8]}: version "
                f"{entry.version}, {entry.files} file(s), {entry.rows:,} rows, write "
                f"{entry.write_s:.2f} s, commit {entry.commit_s:.3f} s"
            )
        self.say(BATCH_LINE + json.dumps(asdict(entry)))


def _exists(path: str) -> bool:
    fs, local = filesystem(path)
    return fs.get_file_info(local).type != pafs.FileType.NotFound


def _delete(table_path: str, tokens: Sequence[str]) -> None:
    for token in tokens:
        delete_written(table_path, token)


def _bucket_task(
    table: TableRef, codec: str, drop_null_keys: bool, sort: str = "arrow"
) -> Callable[..., Any]:
    """The task of `UpsertSink._write`: row groups of source files as bucket files,
    rows read with pyarrow and bucketed with Spark's hash in numpy (as write_file_direct
    does for one file), never through the JVM."""
    key, schema, table_path, n_buckets = (
        table.primary_keys[0],
        table.schema,
        table.path,
        table.hash_buckets,
    )

    def task(batches: Iterable[pa.RecordBatch]) -> Iterable[pa.RecordBatch]:
        for batch in batches:
            columns = (batch.column(c).to_pylist() for c in ("path", "rg", "token"))
            for path, group, token in zip(*columns, strict=True):
                fs, local = filesystem(path)
                try:
                    with fs.open_input_file(local) as fh:
                        data = pq.ParquetFile(fh).read_row_group(group, columns=schema.names)
                except (OSError, pa.ArrowException) as exc:
                    raise DataError(
                        f"{path}: row group {group} cannot be read ({type(exc).__name__}: {exc})"
                    ) from None
                nulls = data.column(key).null_count
                if nulls and not drop_null_keys:
                    yield file_rows([], nulls)
                    continue
                if nulls:
                    data = data.filter(pc.is_valid(data.column(key)))
                data = data.append_column(
                    BUCKET_COL, pa.array(buckets(data.column(key), n_buckets))
                )
                yield file_rows(
                    write_bucket_files(data, table_path, [key], schema, codec, token, sort), nulls
                )

    return task


def _run_id(spark: Any, query_id: str) -> str | None:
    """The run id of the active query (it changes at every start of the query)."""
    try:
        query = spark.streams.get(query_id)
        return None if query is None else str(query.runId)
    except Exception:  # the query is stopping: the run id is only informative
        return None
