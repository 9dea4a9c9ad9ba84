"""The Write job: every batch upserted concurrently, each with its user-defined version.

Batches run on a driver thread pool, so their Spark jobs overlap and commits land
in whatever order the writes finish. Each commit records its batch's version in
the same PostgreSQL transaction; `contest meta merge` later orders the snapshot
by version, so the result never depends on completion order (seed 003).
Only big files are repartitioned by key; the rest are written without a shuffle.
"""

from __future__ import annotations

import logging
import statistics
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contest import catalog
from contest.catalog import TableRef
from contest.config import Config
from contest.data import SCHEMA, Batch, DataError, check_schema, check_unique_versions, discover
from contest.pg import PgConnection
from contest.table_io import (
    delete_files,
    direct_read_possible,
    write_dataframe,
    write_file_direct,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("contest.write")


@dataclass
class BatchResult:
    batch: str
    version: int
    rows: int = 0
    files: int = 0
    bytes: int = 0
    shuffled: bool = False
    write_s: float = 0.0
    commit_s: float = 0.0
    start_s: float = 0.0
    end_s: float = 0.0
    commit_id: str | None = None
    commit_retries: int = 0
    null_keys_dropped: int = 0
    error: str | None = None


@dataclass
class WriteReport:
    table: str
    path: str
    batches: list[BatchResult] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return all(b.error is None for b in self.batches)

    def to_dict(self) -> dict:
        return {"table": self.table, "path": self.path, "ok": self.ok,
                "wall_s": round(self.wall_s, 3), "batches": [asdict(b) for b in self.batches]}


def big_file_threshold(batches: Sequence[Batch], configured: int) -> int:
    """Bytes from which a batch is repartitioned: configured, or twice the median."""
    if configured > 0:
        return configured
    return int(2 * statistics.median(b.bytes for b in batches)) if batches else 0


def timeline(report: WriteReport, width: int = 50) -> str:
    """One bar per batch over the job's wall time: overlapping bars ran together."""
    total = max(report.wall_s, 1e-9)
    lines = []
    for b in sorted(report.batches, key=lambda r: r.start_s):
        a = int(b.start_s / total * width)
        z = max(a + 1, int(b.end_s / total * width))
        mark = "x" if b.error else "#"
        lines.append(f"  {b.batch:>15} v{b.version:<4} |{' ' * a}{mark * (z - a)}"
                     f"{' ' * (width - z)}| {b.start_s:6.2f}-{b.end_s:6.2f}s")
    return "\n".join(lines)


def prepare_table(conn: PgConnection, cfg: Config, path: str | Path, name: str,
                  fresh: bool) -> TableRef:
    """The target table: created (or recreated when `fresh`), else reused."""
    if not fresh:
        try:
            return catalog.get_table(conn, name, cfg.table.namespace)
        except catalog.TableError:
            pass
    return catalog.create_table(conn, name, path, SCHEMA, ["uuid"], cfg.table.hash_buckets,
                                cfg.table.namespace, replace=True)


def write_batches(
    spark: SparkSession, conn: PgConnection, cfg: Config, table: TableRef,
    batches: Sequence[Batch], *, before_commit: Callable[[Batch], None] | None = None,
    on_done: Callable[[BatchResult], None] | None = None,
) -> WriteReport:
    """Upsert the batches concurrently; a failing batch commits nothing, the others go on."""
    check_unique_versions({b.index: b.version for b in batches})
    threshold = big_file_threshold(batches, cfg.write.big_file_bytes)
    report = WriteReport(f"{table.namespace}.{table.name}", table.path)
    started = time.perf_counter()
    lock = threading.Lock()

    def one(batch: Batch) -> BatchResult:
        res = BatchResult(batch.path.name, batch.version,
                          start_s=time.perf_counter() - started)
        spark.sparkContext.setLocalProperty("spark.job.description",
                                            f"upsert {batch.path.name} v{batch.version}")
        written: list[str] = []
        try:
            big = cfg.write.repartition and batch.bytes >= threshold
            t0 = time.perf_counter()
            if not big and cfg.write.reader == "arrow" and direct_read_possible(table):
                import pyarrow.parquet as pq

                check_schema(batch.path, pq.read_schema(batch.path), SCHEMA)
                outcome = write_file_direct(spark, str(batch.path), table,
                                            codec=cfg.write.codec,
                                            drop_null_keys=cfg.write.drop_null_keys)
            else:
                df = spark.read.parquet(str(batch.path))
                check_schema(batch.path, _arrow_schema(df), SCHEMA)
                outcome = write_dataframe(
                    df, table, codec=cfg.write.codec,
                    repartition=cfg.write.repartition if big else None,
                    drop_null_keys=cfg.write.drop_null_keys,
                )
            written = [f.path for f in outcome.files]
            res.write_s = time.perf_counter() - t0
            res.shuffled = outcome.shuffled
            if outcome.null_keys and not cfg.write.drop_null_keys:
                raise DataError(f"{batch.path}: {outcome.null_keys} row(s) with a NULL uuid "
                                "(set write.drop_null_keys=true to drop and count them)")
            res.null_keys_dropped = outcome.null_keys
            res.rows = sum(f.rows for f in outcome.files)
            res.files = len(outcome.files)
            res.bytes = sum(f.size for f in outcome.files)
            if before_commit:
                before_commit(batch)
            committed = catalog.commit_files(conn, table, outcome.files, version=batch.version,
                                             batch=batch.path.name)
            written = []
            res.commit_s = committed.seconds
            res.commit_id = committed.commit_id
            res.commit_retries = committed.retries
        except Exception as exc:  # one batch's failure must not stop the others
            res.error = _short_error(exc)
            delete_files(written)
        res.end_s = time.perf_counter() - started
        with lock:
            report.batches.append(res)
            _log_batch(res)
            if on_done:
                on_done(res)
        return res

    with ThreadPoolExecutor(max_workers=cfg.write.threads, thread_name_prefix="upsert") as pool:
        list(pool.map(one, batches))
    report.wall_s = time.perf_counter() - started
    return report


def _arrow_schema(df) -> object:
    import pyarrow as pa

    mapping = {"string": pa.string(), "bigint": pa.int64(), "int": pa.int32(),
               "double": pa.float64(), "boolean": pa.bool_()}
    return pa.schema([(f.name, mapping.get(f.dataType.simpleString(), pa.null()))
                      for f in df.schema.fields])


def _short_error(exc: BaseException) -> str:
    """The first meaningful line; Spark wraps Python errors in long Java traces."""
    text = str(exc)
    for marker in ("DataError: ", "TableError: ", "ValueError: "):
        if marker in text:
            return text.split(marker, 1)[1].splitlines()[0]
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return lines[0][:500] if lines else exc.__class__.__name__


def _log_batch(r: BatchResult) -> None:
    if r.error:
        log.error("%s v%d: FAILED, nothing committed: %s", r.batch, r.version, r.error)
        return
    log.info("%s v%d: %d rows, %d files, %d bytes, %s, write %.2fs, commit %.3fs%s",
             r.batch, r.version, r.rows, r.files, r.bytes,
             "repartitioned by key" if r.shuffled else "no shuffle", r.write_s, r.commit_s,
             f", {r.null_keys_dropped} NULL-key rows dropped" if r.null_keys_dropped else "")


def run_write(spark: SparkSession, conn: PgConnection, cfg: Config, data_dir: str | Path,
              table_path: str | Path, table_name: str | None = None, fresh: bool = True,
              delays: Mapping[int, float] | None = None, indices: Sequence[int] | None = None,
              ) -> WriteReport:
    """discover, create the table, upsert everything: the whole Write job."""
    batches = discover(data_dir, cfg.write.versions or None, schema=None)
    if indices is not None:
        batches = [b for b in batches if b.index in set(indices)]
    name = table_name or Path(str(table_path)).name
    table = prepare_table(conn, cfg, table_path, name, fresh)
    delays = dict(delays or {})

    def delay(batch: Batch) -> None:
        if batch.index in delays:
            time.sleep(delays[batch.index])

    if cfg.write.mode == "cow":
        from contest.cow import write_cow

        return write_cow(spark, conn, cfg, table, batches)
    return write_batches(spark, conn, cfg, table, batches, before_commit=delay)
