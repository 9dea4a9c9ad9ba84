"""The Write job of a peer format: the batches in version order, each collapsed by key
with the contract's rules and merged into the table the way that format's users upsert.

Per batch: (1) collapse the batch by uuid, rows in file order (the copy-on-write
baseline's `collapse_batch`: requests summed, NULLs ignored; name the last value neither
NULL nor "null", which becomes NULL; the other columns the last non-NULL value);
(2) merge it in:
- Delta, Iceberg: `MERGE INTO t USING s ON t.uuid = s.uuid WHEN MATCHED THEN UPDATE SET
  requests = t + s (NULL-aware), c = coalesce(s.c, t.c) WHEN NOT MATCHED THEN INSERT *`
  (`merge_sql`). As "null" names were made NULL in (1), the table never holds "null" and
  coalesce is exactly "the last value neither NULL nor 'null'".
- Hudi: Hudi 1.0.2 refuses that MERGE on a MERGE_ON_READ table ("Target table's field(...)
  cannot be the right-value of the update clause for MOR table"): its MOR MERGE only takes
  source values. So the same expressions run in Spark: the collapsed batch is left-joined
  with the keys' current rows (a merge-on-read snapshot query of the table) and the merged
  rows are upserted (datasource upsert, ordering field = batch version) into log files.
  Hudi still finds each key's file group, writes and compacts nothing, and merges the
  logs on read; only the column arithmetic is Spark's, as a Hudi user without a compiled
  custom payload would do it.
The first batch creates the table from its collapsed rows (a MERGE into an empty table
inserts the same rows, with a join for nothing).

Every batch reports the format's own numbers for its commit (Delta's operation metrics,
Iceberg's snapshot summary) and what appeared in the table folder (data, delete, deletion
vector and log files, bytes), so the write amplification of each format is measured.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data.batches import COLUMNS, Batch, discover
from contest.errors import UsageError, unwrap_spark_error
from contest.peers import formats
from contest.write.cow import VALUE_COLS, collapse_batch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger("contest.peers")

# Folders that hold a format's log and metadata, not table data.
METADATA_DIRS = ("_delta_log", "metadata", ".hoodie")
# What marks a folder as a table of each format (a replaced folder must be one).
TABLE_MARKERS = {"delta": "_delta_log", "iceberg": "metadata", "hudi": ".hoodie"}
# Delta history metrics and Iceberg snapshot summary keys kept in the report.
DELTA_METRICS = (
    "numTargetFilesAdded",
    "numTargetFilesRemoved",
    "numTargetDeletionVectorsAdded",
    "numTargetDeletionVectorsRemoved",
    "numTargetDeletionVectorsUpdated",
    "numTargetRowsUpdated",
    "numTargetRowsInserted",
    "numTargetRowsCopied",
    "numTargetBytesAdded",
    "numTargetBytesRemoved",
    "numOutputRows",
    "numFiles",
    "scanTimeMs",
    "rewriteTimeMs",
    "executionTimeMs",
)
ICEBERG_METRICS = (
    "added-data-files",
    "removed-data-files",
    "added-delete-files",
    "removed-delete-files",
    "added-position-deletes",
    "added-records",
    "deleted-records",
    "added-files-size",
    "removed-files-size",
    "total-data-files",
    "total-delete-files",
    "total-position-deletes",
    "total-records",
)


@dataclass
class PeerBatch:
    batch: str
    version: int
    rows: int
    seconds: float = 0.0
    operation: str = ""
    # The format's own numbers for this commit (Delta history, Iceberg snapshot summary).
    metrics: dict[str, int] = field(default_factory=dict)
    # What appeared in the table folder (data area, not the log/metadata folders).
    data_files_added: int = 0
    delete_files_added: int = 0  # Iceberg position-delete files, Delta deletion vectors
    log_files_added: int = 0  # Hudi log files
    bytes_added: int = 0
    table_files: int = 0  # files in the data area after this batch (all versions)
    table_bytes: int = 0  # the whole folder after this batch
    error: str | None = None


@dataclass
class PeerWriteReport:
    format: str
    table: str
    batches: list[PeerBatch] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return all(b.error is None for b in self.batches)

    @property
    def table_bytes(self) -> int:
        return self.batches[-1].table_bytes if self.batches else 0

    def summary(self) -> str:
        done = sum(1 for b in self.batches if b.error is None)
        line = (
            f"wrote {self.format} table {self.table}: {done} of {len(self.batches)} batches "
            f"merged in {self.wall_s:.3f} s, {self.table_bytes:,} bytes stored"
        )
        failed = [b for b in self.batches if b.error]
        if failed:
            line += f"; FAILED at {failed[0].batch} (later batches not applied): {failed[0].error}"
        return line

    def to_dict(self) -> dict:
        return {
            "format": self.format,
            "table": self.table,
            "ok": self.ok,
            "wall_s": round(self.wall_s, 3),
            "table_bytes": self.table_bytes,
            "batches": [
                {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(b).items()}
                for b in self.batches
            ],
        }


def merge_sql(target: str, source: str) -> str:
    """The contract's upsert of a collapsed batch as one MERGE statement."""
    sets = [
        "t.requests = CASE WHEN t.requests IS NULL THEN s.requests "
        "WHEN s.requests IS NULL THEN t.requests ELSE t.requests + s.requests END"
    ]
    sets += [f"t.{c} = coalesce(s.{c}, t.{c})" for c in VALUE_COLS]
    return (
        f"MERGE INTO {target} t USING {source} s ON t.uuid = s.uuid\n"
        f"WHEN MATCHED THEN UPDATE SET {', '.join(sets)}\n"
        "WHEN NOT MATCHED THEN INSERT *"
    )


def merged_rows(current: DataFrame, batch: DataFrame) -> DataFrame:
    """The batch's keys after the upsert, computed in Spark (for Hudi): the collapsed
    batch left-joined with the current rows of its keys, by the MERGE's expressions.
    The current rows are first cut to the batch's keys (a semi join Spark may broadcast),
    so the outer join shuffles batch-sized data, not the table."""
    from pyspark.sql import functions as F

    old = current.join(batch.select("uuid"), "uuid", "left_semi")
    s, t = batch.alias("s"), old.alias("t")
    req = (
        F.when(F.col("t.requests").isNull(), F.col("s.requests"))
        .when(F.col("s.requests").isNull(), F.col("t.requests"))
        .otherwise(F.col("t.requests") + F.col("s.requests"))
    )
    cols = {"uuid": F.col("s.uuid"), "requests": req}
    cols |= {c: F.coalesce(F.col(f"s.{c}"), F.col(f"t.{c}")) for c in VALUE_COLS}
    return s.join(t, F.col("s.uuid") == F.col("t.uuid"), "left").select(
        *[cols[c].alias(c) for c in COLUMNS]
    )


def classify(name: str) -> str:
    """data, delete (Iceberg position deletes, Delta deletion vectors) or log (Hudi)."""
    if name.startswith(".") and ".log." in name:
        return "log"
    if name.startswith("deletion_vector_") or name.endswith("-deletes.parquet"):
        return "delete"
    return "data" if name.endswith(".parquet") else "other"


def data_listing(root: Path) -> dict[str, tuple[str, int]]:
    """Files of the table's data area: path -> (kind, bytes); log/metadata folders and
    checksum files left out."""
    out: dict[str, tuple[str, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in METADATA_DIRS]
        for name in files:
            kind = classify(name)
            if kind != "other":
                path = os.path.join(folder, name)
                out[path] = (kind, os.path.getsize(path))
    return out


def folder_bytes(root: Path) -> int:
    """Bytes stored under the table's folder: data, logs, metadata (the size rule)."""
    return sum(
        os.path.getsize(os.path.join(folder, name))
        for folder, _, files in os.walk(root)
        for name in files
    )


def record_files(res: PeerBatch, before: dict, after: dict, root: Path) -> None:
    new = [after[p] for p in after if p not in before]
    res.data_files_added = sum(1 for kind, _ in new if kind == "data")
    res.delete_files_added = sum(1 for kind, _ in new if kind == "delete")
    res.log_files_added = sum(1 for kind, _ in new if kind == "log")
    res.bytes_added = sum(size for _, size in new)
    res.table_files = len(after)
    res.table_bytes = folder_bytes(root)


def prepare_folder(cfg: Config, table: Path, replace: bool) -> None:
    """An empty or absent folder; with `replace`, a table of the same format is removed
    first. Anything else is refused, naming the folder."""
    if not table.exists() or (table.is_dir() and not any(table.iterdir())):
        return
    marker = TABLE_MARKERS[cfg.peer.format]
    if not replace:
        raise UsageError(f"--table {table}: exists and is not empty (--replace to replace it)")
    if not (table / marker).exists():
        raise UsageError(
            f"--table {table}: not a {cfg.peer.format} table (no {marker}): not replaced"
        )
    shutil.rmtree(table)


def apply_batch(
    spark: SparkSession, cfg: Config, table: Path, batch: Batch, first: bool
) -> tuple[str, dict[str, int]]:
    """Merge one batch into the table; returns the operation and the format's metrics."""
    source = collapse_batch(spark.read.parquet(str(batch.path))).select(*COLUMNS)
    fmt = cfg.peer.format
    if fmt == "delta":
        return _delta(spark, cfg, table, source, first)
    if fmt == "iceberg":
        return _iceberg(spark, cfg, table, source, first)
    return _hudi(spark, cfg, table, source, batch.version, first)


def _quoted(path: Path) -> str:
    return "`" + str(path).replace("`", "``") + "`"


def _delta(
    spark: SparkSession, cfg: Config, table: Path, source: DataFrame, first: bool
) -> tuple[str, dict[str, int]]:
    from delta.tables import DeltaTable

    if first:
        builder = DeltaTable.create(spark).location(str(table)).addColumns(source.schema)
        for key, value in formats.table_properties(cfg).items():
            builder = builder.property(key, value)
        builder.execute()
        source.write.format("delta").mode("append").save(str(table))
        op = "create+append"
    else:
        source.createOrReplaceTempView("contest_peer_batch")
        spark.sql(merge_sql(f"delta.{_quoted(table)}", "contest_peer_batch"))
        op = "merge"
    last = DeltaTable.forPath(spark, str(table)).history(1).collect()[0]
    metrics = {
        k: int(v)
        for k, v in (last["operationMetrics"] or {}).items()
        if k in DELTA_METRICS and str(v).isdigit()
    }
    return op, metrics


def _iceberg(
    spark: SparkSession, cfg: Config, table: Path, source: DataFrame, first: bool
) -> tuple[str, dict[str, int]]:
    ident = formats.iceberg_identifier(table)
    if first:
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ident.rsplit('.', 1)[0]}")
        writer = source.writeTo(ident).using("iceberg")
        for key, value in formats.table_properties(cfg).items():
            writer = writer.tableProperty(key, value)
        writer.create()
        op = "create"
    else:
        source.createOrReplaceTempView("contest_peer_batch")
        spark.sql(merge_sql(ident, "contest_peer_batch"))
        op = "merge"
    snap = spark.sql(
        f"SELECT summary FROM {ident}.snapshots ORDER BY committed_at DESC LIMIT 1"
    ).collect()[0]["summary"]
    return op, {k: int(snap[k]) for k in ICEBERG_METRICS if k in snap}


def _hudi(
    spark: SparkSession, cfg: Config, table: Path, source: DataFrame, version: int, first: bool
) -> tuple[str, dict[str, int]]:
    from pyspark.sql import functions as F

    if first:
        rows, op, mode = source, "bulk_insert", "overwrite"
    else:
        current = spark.read.format("hudi").load(str(table)).select(*COLUMNS)
        rows, op, mode = merged_rows(current, source), "upsert", "append"
    rows = rows.withColumn(formats.HUDI_ORDERING, F.lit(version).cast("long"))
    (
        rows.write.format("hudi")
        .options(**formats.hudi_options(cfg, table, op))
        .mode(mode)
        .save(str(table))
    )
    return op, {}


def write_peer(
    spark: SparkSession, cfg: Config, table: Path, batches: Sequence[Batch]
) -> PeerWriteReport:
    """Apply the batches in version order; stop at the first failure (later batches
    depend on it)."""
    for key, value in formats.runtime_conf(cfg, table).items():
        spark.conf.set(key, value)
    report = PeerWriteReport(cfg.peer.format, str(table))
    started = time.perf_counter()
    for i, batch in enumerate(sorted(batches, key=lambda b: b.version)):
        res = PeerBatch(batch.name, batch.version, batch.rows)
        spark.sparkContext.setLocalProperty(
            "spark.job.description", f"{cfg.peer.format} {batch.name} v{batch.version}"
        )
        before = data_listing(table) if table.exists() else {}
        t0 = time.perf_counter()
        try:
            res.operation, res.metrics = apply_batch(spark, cfg, table, batch, first=i == 0)
        except Exception as exc:
            cause = unwrap_spark_error(exc) or exc
            lines = [ln.strip() for ln in str(cause).splitlines() if ln.strip()]
            res.error = lines[0][:500] if lines else type(cause).__name__
        res.seconds = time.perf_counter() - t0
        if res.error is None:
            record_files(res, before, data_listing(table), table)
        report.batches.append(res)
        log.info(
            "%s v%d: %s %.2fs, +%d data +%d delete +%d log files, +%d bytes %s%s",
            res.batch,
            res.version,
            res.operation or "-",
            res.seconds,
            res.data_files_added,
            res.delete_files_added,
            res.log_files_added,
            res.bytes_added,
            json.dumps(res.metrics) if res.metrics else "",
            f" FAILED: {res.error}" if res.error else "",
        )
        if res.error:
            break
    report.wall_s = time.perf_counter() - started
    return report


def run_peer_write(
    cfg: Config, data_dir: str | Path, table_path: str | Path, replace: bool = False
) -> PeerWriteReport:
    """The whole Write job of a peer format: check the input and the folder, load the
    format's library (one line naming it when it cannot be resolved), write."""
    from contest.infra import packages
    from contest.infra.spark import spark_session

    batches = discover(data_dir, cfg.write.versions or None, schema=None)
    table = Path(str(table_path)).absolute()
    prepare_folder(cfg, table, replace)
    coords = formats.coordinates(cfg)
    packages.require(coords)
    with spark_session(session_config(cfg), f"contest-write-{cfg.peer.format}", coords) as spark:
        return write_peer(spark, cfg, table, batches)


def session_config(cfg: Config) -> Config:
    """The config with the format's start settings under the user's spark.conf (they
    reach the session builder when no spark-submit set them on its command line)."""
    import dataclasses

    conf = formats.start_conf(cfg) | dict(cfg.spark.conf)
    return dataclasses.replace(cfg, spark=dataclasses.replace(cfg.spark, conf=conf))


def report_from_log(log_path: Path) -> dict | None:
    """The write job's JSON report, from its log (the line it prints on stdout)."""
    try:
        lines = log_path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        if line.startswith('{"format"'):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None
