"""`contest stream run`: the Structured Streaming query, from a folder into a table.

Spark's file source over the source folder (the contest's schema, new files in order of
their modification time), `foreachBatch` with the exactly-once sink (sink.py), a
checkpoint of Spark's own. Restarted on the same checkpoint, the query goes on where it
stopped: a batch whose commit landed but whose checkpoint entry did not is replayed by
Spark and skipped by the sink. Triggers: processing time (a micro-batch every
`stream.interval_s`, until stopped, `idle_stop_s` without new files, or `timeout_s`) and
available-now (what the folder holds, then stop).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

import pyarrow as pa
import pyarrow.parquet as pq

from contest.config import Config
from contest.data.batches import SCHEMA, Batch, check_schema
from contest.errors import ConfigError, DataError, RunError
from contest.stream.changes import is_change_stream, source_ddl, stream_shape
from contest.stream.sink import UpsertSink
from contest.write.job import WriteMode, prepare_table
from meta.catalog import TableRef
from meta.connection import PgConnection
from meta.stream import batches

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The contest's schema as Spark's DDL: the file source needs it before any file lands.
SPARK_TYPES = {"string": "string", "int64": "bigint"}


@dataclass
class StreamReport:
    table: str
    query_id: str
    run_id: str
    trigger: str
    committed: list[int] = field(default_factory=list)
    replayed: list[int] = field(default_factory=list)
    rows: int = 0
    files: int = 0
    seconds: float = 0.0
    stopped_by: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "query_id": self.query_id,
            "run_id": self.run_id,
            "trigger": self.trigger,
            "batches_committed": len(self.committed),
            "batches_replayed": self.replayed,
            "rows": self.rows,
            "files": self.files,
            "seconds": round(self.seconds, 3),
            "stopped_by": self.stopped_by,
        }


def spark_ddl() -> str:
    return ", ".join(f"{f.name} {SPARK_TYPES[str(f.type)]}" for f in SCHEMA)


def files_per_trigger(cfg: Config) -> int:
    """The files a micro-batch takes at most (0: all that landed): stream.
    max_files_per_trigger, else workload.files_per_batch when it groups files (a folder
    read at once, trigger available-now, is then cut as the batch commands cut it);
    refused in one line when the two say different things."""
    given, per_batch = cfg.stream.max_files_per_trigger, cfg.workload.files_per_batch
    if per_batch > 1 and given and given != per_batch:
        raise ConfigError(
            f"stream.max_files_per_trigger = {given} and workload.files_per_batch = "
            f"{per_batch}: a micro-batch is one commit of both; give one"
        )
    return given or (per_batch if per_batch > 1 else 0)


def default_source(cfg: Config) -> str:
    return cfg.stream.source or str((cfg.work_path / "stream" / "incoming").absolute())


def default_checkpoint(cfg: Config, table_name: str) -> str:
    return cfg.stream.checkpoint or str(
        (cfg.work_path / "stream" / "checkpoints" / table_name).absolute()
    )


def run_stream(
    spark: SparkSession,
    conn: PgConnection,
    cfg: Config,
    table_path: str,
    table_name: str | None = None,
    *,
    say: Callable[[str], None] = print,
    started: Callable[[Any], None] | None = None,
) -> StreamReport:
    """Run the query until its trigger or a stop condition ends it; `started(query)` is
    called once it runs (a test reads the table meanwhile, or stops it)."""
    s = cfg.stream
    name = table_name or Path(table_path).name
    source = default_source(cfg)
    changes = is_change_stream(cfg)
    shape = stream_shape(cfg, present_files(source)) if changes else None
    table = prepare_table(conn, cfg, table_path, name, WriteMode.APPEND, shape)
    checkpoint = default_checkpoint(cfg, name)
    if "://" not in source:
        Path(source).mkdir(parents=True, exist_ok=True)
    sink = UpsertSink(cfg, conn, table, checkpoint, say)
    # Change data: the workload's columns (contest/stream/changes.py).
    reader = spark.readStream.schema(source_ddl(table.schema) if changes else spark_ddl())
    if files_per_trigger(cfg):
        reader = reader.option("maxFilesPerTrigger", files_per_trigger(cfg))
    writer = reader.parquet(source).writeStream.foreachBatch(sink)
    writer = writer.option("checkpointLocation", checkpoint)
    if s.trigger == "available-now":
        writer = writer.trigger(availableNow=True)
    else:
        writer = writer.trigger(processingTime=f"{s.interval_s} seconds")
    t0 = time.monotonic()
    warn_put_back(checkpoint, source, say)
    query = writer.start()
    sink.run_id = str(query.runId)
    report = StreamReport(
        f"{table.namespace}.{table.name}", str(query.id), str(query.runId), s.trigger
    )
    say(
        f"stream: query {query.id} (run {query.runId}) from {source} into "
        f"{report.table}, checkpoint {checkpoint}, trigger {s.trigger}"
    )
    if started is not None:
        started(query)
    try:
        report.stopped_by = wait_query(
            query, cfg, t0, lambda: sink.stats.last_activity, lambda: sink.stats.busy
        )
    except KeyboardInterrupt:
        report.stopped_by = "interrupted"
        raise
    except Exception as exc:  # Spark's StreamingQueryException: our error inside, if ours
        if sink.stats.error is not None:
            raise sink.stats.error from None
        raise (None if changes else bad_source(source)) or RunError(
            f"the streaming query failed: {first_line(exc)}"
        ) from None
    finally:
        if query.isActive:
            query.stop()
        warn_put_back(checkpoint, source, say)
        report.seconds = time.monotonic() - t0
        report.committed = [b.batch_id for b in sink.stats.committed]
        report.replayed = sink.stats.replayed
        report.rows = sum(b.rows for b in sink.stats.committed)
        report.files = sum(b.files for b in sink.stats.committed)
    error = query.exception()
    if error is not None:
        if sink.stats.error is not None:
            raise sink.stats.error
        raise (None if changes else bad_source(source)) or RunError(
            f"the streaming query failed: {first_line(error)}"
        )
    return report


def wait_query(
    query: Any,
    cfg: Config,
    t0: float,
    last_activity: Callable[[], float],
    busy: Callable[[], bool] = lambda: False,
    on_poll: Callable[[Any], None] | None = None,
) -> str:
    """Wait for a streaming query (any sink) by the configured trigger: an available-now
    query until it has consumed the folder, a processing-time one until stream.timeout_s
    or until it has been idle (no batch running or pending, none for stream.idle_stop_s).
    Returns why it stopped."""
    with interrupt_flag() as interrupted:
        return _wait(query, cfg, t0, last_activity, busy, on_poll, interrupted)


def _wait(
    query: Any,
    cfg: Config,
    t0: float,
    last_activity: Callable[[], float],
    busy: Callable[[], bool],
    on_poll: Callable[[Any], None] | None,
    interrupted: list[int],
) -> str:
    s = cfg.stream
    started: float | None = None  # when the query had its sources up (its idle clock's start)
    while query.isActive:
        if query.awaitTermination(0.25):
            break
        if interrupted:
            _stop(query)
            raise KeyboardInterrupt(f"signal {interrupted[0]}")
        if s.trigger == "available-now":
            continue
        if on_poll is not None:
            on_poll(query)
        now = time.monotonic()
        if s.timeout_s and now - t0 >= s.timeout_s:
            return f"timeout ({s.timeout_s:g} s)"
        if started is None and not _initializing(query):
            started = now
        idle = not busy() and is_idle(now, last_activity(), started, s.idle_stop_s)
        if idle and not _data_pending(query):
            return f"idle for {s.idle_stop_s:g} s"
    if s.trigger == "available-now":
        return "available-now: the folder is consumed"
    return "the query ended"


@contextmanager
def interrupt_flag() -> Iterator[list[int]]:
    """Ctrl-C (SIGINT) or SIGTERM while the query runs only sets a flag, which the wait
    turns into a stop of the query and a KeyboardInterrupt: raised inside a py4j call
    (the wait for the query) it broke the gateway (py4j tracebacks, exit 1)."""
    got: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield got
        return

    def flag(signum: int, _frame: object) -> None:
        got.append(signum)

    before = {sig: signal.signal(sig, flag) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield got
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _stop(query: Any) -> None:
    try:
        query.stop()
    except Exception:  # stopping anyway: the interrupt is what the user sees
        pass


def is_idle(now: float, last_activity: float, started: float | None, idle_stop_s: float) -> bool:
    """Idle long enough to stop: `idle_stop_s` (0 = never) since the later of the last
    micro-batch and the query's start. The clock starts only once the query is up (its
    sources initialised), so a slow start (a loaded machine, a cluster's executors) is not
    taken for an idle stream."""
    if not idle_stop_s or started is None:
        return False
    return now - max(last_activity, started) >= idle_stop_s


def _initializing(query: Any) -> bool:
    """Still starting: Spark's status says so until the sources are up."""
    try:
        return str(query.status.get("message", "")).startswith("Initializing")
    except Exception:
        return True


def _data_pending(query: Any) -> bool:
    try:
        status = query.status
        return bool(status.get("isDataAvailable")) or bool(status.get("isTriggerActive"))
    except Exception:
        return False


def present_files(source: str) -> list[str]:
    """The source folder's files Spark's file source would take (local folders; names
    beginning with "." or "_" are skipped, as Spark does)."""
    if "://" in source or not Path(source).is_dir():
        return []
    return sorted(
        str(p) for p in Path(source).iterdir() if p.is_file() and not p.name.startswith((".", "_"))
    )


def bad_source(source: str) -> DataError | None:
    """The first file of the source folder that is not a parquet file of the contest's
    schema, as the one-line error naming it (a failed query looks here before it reports
    Spark's error, which names the file only in its log). Spark skips names beginning
    with "." or "_"."""
    if "://" in source or not Path(source).is_dir():
        return None
    for path in sorted(Path(source).iterdir(), key=lambda p: p.name):
        if path.name.startswith((".", "_")) or not path.is_file():
            continue
        try:
            check_schema(path, pq.read_schema(path), SCHEMA)
        except DataError as exc:
            return exc
        except (OSError, pa.ArrowException) as exc:
            return DataError(f"{path}: not a parquet file ({first_line(exc)})")
    return None


def put_back(checkpoint: str, source: str) -> list[str]:
    """Files of the source folder under a name Spark's file source consumed, whose
    modification time is not the one it recorded (more than a second apart): a file put
    back under a name already seen, which the file source skips without a word."""
    log = Path(checkpoint) / "sources" / "0"
    if "://" in source or not log.is_dir():
        return []
    seen: dict[str, int] = {}
    for entry in log.iterdir():
        if entry.name.startswith("."):
            continue
        for line in entry.read_text(errors="replace").splitlines()[1:]:
            try:
                item = json.loads(line)
                path = os.path.realpath(unquote(urlparse(item["path"]).path))
                seen[path] = int(item["timestamp"])
            except (ValueError, KeyError, TypeError):
                continue
    out = []
    for file in sorted(Path(source).iterdir()) if Path(source).is_dir() else []:
        real = os.path.realpath(file)
        if real in seen and abs(file.stat().st_mtime_ns // 1_000_000 - seen[real]) > 1000:
            out.append(str(file))
    return out


def warn_put_back(checkpoint: str, source: str, say: Callable[[str], None]) -> None:
    for path in put_back(checkpoint, source):
        say(
            f"contest: warning: {path} was put back under a name the stream consumed "
            "before: Spark's file source skips it (its rows are not in the table); give it "
            "a new name to stream it"
        )


def first_line(text: object) -> str:
    """The first non-blank line of an error's text, at most 300 characters."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    return lines[0][:300] if lines else "unknown error"


def consumed_batches(
    conn: PgConnection, table: TableRef, upto_version: int | None = None
) -> list[Batch]:
    """The source files the table's micro-batches committed, as batches in the order
    the table applies them (micro-batch version, then file order), for the oracle:
    exactly what the stream consumed, each file once; with `upto_version`, those of the
    micro-batches at most that version (a read as of it)."""
    out: list[Batch] = []
    for b in batches(conn, table):
        if upto_version is not None and b.version > upto_version:
            continue
        for path in b.source_files:
            rows = pq.read_metadata(path).num_rows if "://" not in path else 0
            out.append(Batch(len(out), path, rows, 0, len(out)))
    return out
