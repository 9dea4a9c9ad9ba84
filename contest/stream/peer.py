"""`contest stream run --format delta|paimon|hudi`: the same Structured Streaming query
over the source folder, into a peer format's table through the sink its module gives
(contest/peers/<format>/format.py: `stream_prepare`, `stream_sinks`; `stream.sink` picks one):
the format's own, or a `foreachBatch` of the harness's made exactly once with what the
format documents (Delta's idempotent writes, the batch id Hudi's streaming sink records
in a commit).
The harness adds only the source's order: each row carries its source file's feed
number (`_ver`) and its index in the file (`_pos`, Spark's `_metadata.row_index`), so a
key's rows apply in the oracle's order whatever files a micro-batch holds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contest.config import Config
from contest.data.batches import COLUMNS
from contest.data.changes import declares_changes
from contest.errors import DataError, HarnessError, RunError, TaskError, unwrap_spark_error
from contest.peers import formats
from contest.peers.base import PeerFormat
from contest.stream.changes import is_change_stream
from contest.stream.run import (
    StreamReport,
    bad_source,
    default_checkpoint,
    default_source,
    files_per_trigger,
    first_line,
    spark_ddl,
    wait_query,
    warn_put_back,
)
from contest.stream.sink import BATCH_LINE, BatchLog, checkpoint_query_id

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# The feed's file names (contest/stream/feed.py): their number orders the files.
FEED_NUMBER = r"^feed-(\d+)\.parquet$"


def source_rows(spark: SparkSession, cfg: Config, source: str) -> DataFrame:
    """The source folder as a stream of the contest's rows plus `_ver` and `_pos`."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import functions as F

    reader = spark.readStream.schema(spark_ddl())
    if files_per_trigger(cfg):
        reader = reader.option("maxFilesPerTrigger", files_per_trigger(cfg))
    df = reader.parquet(source)
    ver = F.regexp_extract(F.col("_metadata.file_name"), FEED_NUMBER, 1).cast("long")
    return df.select(
        *COLUMNS, ver.alias("_ver"), F.col("_metadata.row_index").cast("long").alias("_pos")
    )


class Batches:
    """What the sink tells of each micro-batch, logged as the LakeSoul sink logs it (a
    `stream-batch` JSON line the bench reads); for a format's own sink, Spark's progress
    of each micro-batch that read rows (status "processed": the sink decides alone)."""

    def __init__(self, query_id: Callable[[], str], say: Callable[[str], None]):
        self.query_id, self.say = query_id, say
        self.logs: list[BatchLog] = []
        self.run_id: str | None = None
        self.seen_progress: set[int] = set()
        self.last_activity = time.monotonic()

    def on_batch(
        self, batch_id: int, status: str, version: int, rows: int, seconds: float, note: str = ""
    ):
        entry = BatchLog(batch_id, self.query_id(), self.run_id, status, version, rows=rows)
        entry.write_s, entry.committed_unix = round(seconds, 4), time.time()
        self._log(entry, note)

    def progress(self, query: Any) -> None:
        for p in query.recentProgress or []:  # dicts in PySpark 3.5
            batch, rows = int(p["batchId"]), int(p["numInputRows"])
            if batch in self.seen_progress:
                continue
            self.seen_progress.add(batch)
            if rows:
                self.last_activity = time.monotonic()
                if not any(b.batch_id == batch for b in self.logs):
                    self._log(
                        BatchLog(batch, self.query_id(), self.run_id, "processed", -1, 0, rows)
                    )

    def _log(self, entry: BatchLog, note: str = "") -> None:
        self.logs.append(entry)
        self.last_activity = time.monotonic()
        said = f"batch {entry.batch_id}: {entry.status} ({entry.rows:,} rows)"
        self.say(said + (f": {note}" if note else ""))
        self.say(BATCH_LINE + json.dumps(asdict(entry)))


def run_peer_stream(
    spark: SparkSession,
    cfg: Config,
    table_path: str,
    *,
    say: Callable[[str], None] = print,
    started: Callable[[Any], None] | None = None,
) -> StreamReport:
    """Run the query into the peer table until its trigger or a stop condition ends it."""
    fmt = formats.for_stream(cfg.peer.format)
    why = stream_change_refusal(fmt, cfg) if is_change_stream(cfg) else None
    if why:
        raise DataError(why)
    table = Path(table_path).absolute()
    for key, value in fmt.runtime_conf(cfg, table).items():
        spark.conf.set(key, value)
    source = default_source(cfg)
    checkpoint = default_checkpoint(cfg, table.name)
    if "://" not in source:
        Path(source).mkdir(parents=True, exist_ok=True)
    fmt.stream_prepare(spark, cfg, table)
    log = Batches(lambda: checkpoint_query_id(checkpoint), say)
    sink = fmt.stream_sink(cfg.stream.sink)
    writer = sink.write(
        spark, cfg, table, source_rows(spark, cfg, source), checkpoint, log.on_batch
    )
    writer = writer.option("checkpointLocation", checkpoint)
    if cfg.stream.trigger == "available-now":
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{cfg.stream.interval_s} seconds")
    t0 = time.monotonic()
    warn_put_back(checkpoint, source, say)
    query = writer.start()
    log.run_id = str(query.runId)
    report = StreamReport(
        f"{fmt.name}:{table}", str(query.id), str(query.runId), cfg.stream.trigger
    )
    say(
        f"stream: query {query.id} (run {query.runId}) from {source} into {fmt.name} "
        f"table {table} through {sink.name} ({sink.label}), checkpoint {checkpoint}, "
        f"trigger {cfg.stream.trigger}"
    )
    if started is not None:
        started(query)
    try:
        report.stopped_by = wait_query(
            query, cfg, t0, lambda: log.last_activity, on_poll=log.progress
        )
    except Exception as exc:  # Spark's StreamingQueryException: the sink's error, if ours
        raise failure(exc, fmt.name, source) from None
    finally:
        if query.isActive:
            query.stop()
        log.progress(query)
        warn_put_back(checkpoint, source, say)
        report.seconds = time.monotonic() - t0
        report.committed = [b.batch_id for b in log.logs if b.status != "replayed"]
        report.replayed = [b.batch_id for b in log.logs if b.status == "replayed"]
        report.rows = sum(b.rows for b in log.logs if b.status != "replayed")
    if (error := query.exception()) is not None:
        raise failure(error, fmt.name, source)
    return report


def stream_change_refusal(fmt: PeerFormat, cfg: Config) -> str | None:
    """Before any work, why a change stream cannot go into `fmt`: its stream sinks take
    the contest's upserts only (its batch write may take change data:
    contest/peers/change_merge.py), or a micro-batch may hold more than one file (a
    change sink MERGEs one file, its absent columns the MERGE's, in the micro-batch's
    one idempotent commit)."""
    if not fmt.stream_changes:
        return (
            f"stream into {fmt.name}: its stream sinks take the contest's upserts only, not "
            "change data (workload.op_column, workload.key): stream it into the harness's "
            "LakeSoul table (--format lakesoul), or write its files in batches (contest write)"
        )
    if not declares_changes(cfg):
        return (
            f"stream into {fmt.name}: its stream sinks take the contest's columns; a "
            "workload's or your own columns stream into the harness's LakeSoul table "
            "(--format lakesoul), or go in batches (contest evaluate)"
        )
    if files_per_trigger(cfg) != 1:
        return (
            f"stream into {fmt.name}: change data goes one source file a micro-batch (its "
            "MERGE is the micro-batch's one idempotent commit): set "
            "--max-files-per-trigger 1 (stream.max_files_per_trigger)"
        )
    return None


def failure(error: object, fmt: str, source: str) -> HarnessError:
    """The error a failed peer query reports: the harness's own error raised in its
    `foreachBatch` (its one line from Spark's wrapper), else a bad source file, else
    Spark's first line."""
    exc = error if isinstance(error, BaseException) else RuntimeError(str(error))
    unwrapped = unwrap_spark_error(exc)
    if unwrapped is not None and not isinstance(unwrapped, TaskError):
        return unwrapped
    return bad_source(source) or RunError(f"the {fmt} streaming query failed: {first_line(error)}")
