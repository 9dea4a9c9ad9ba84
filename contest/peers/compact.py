"""`contest compact` on a peer format's table: the format's own compaction
(`PeerFormat.compact`, the way its documentation recommends), with the files a read
of the current snapshot opens before and after it (`PeerFormat.layout`), so a
workload's compaction step (contest/workload/runner.py) measures what it restores
and costs for every format. The files it replaced stay in the folder until the
format's own cleanup (Delta VACUUM, Iceberg expire_snapshots, Hudi's cleaner,
Paimon's snapshot expiry): the harness removes none of them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config
from contest.errors import ReadError
from contest.infra import packages
from contest.infra.spark import granted_cores, spark_session
from contest.peers import formats
from contest.peers.base import Layout
from contest.peers.write import folder_bytes, session_config

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class PeerCompactReport:
    format: str
    table: str
    before: Layout
    after: Layout
    seconds: float
    rows: int | None = None  # the table's rows after it (what a read returns)
    # The format's own numbers of the compaction (history metrics, procedure output).
    metrics: dict[str, int] = field(default_factory=dict)
    table_bytes: int = 0  # the whole folder afterwards (replaced files included)
    spark_cores: int | None = None

    def summary(self) -> str:
        return (
            f"compacted {self.format} table {self.table}: {self.before.files} files -> "
            f"{self.after.files} ({self.after.data_files} data, {self.after.delete_files} "
            f"delete, {self.after.log_files} log) in {self.after.buckets} bucket(s), "
            f"{self.seconds:.3f} s"
        )

    def to_dict(self) -> dict:
        return {
            "format": self.format,
            "table": self.table,
            "files_before": self.before.files,
            "files_after": self.after.files,
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            "files_per_bucket": self.after.files_per_bucket,
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
            "metrics": self.metrics,
            "table_bytes": self.table_bytes,
            "spark_cores": self.spark_cores,
        }


def compact_peer(
    spark: SparkSession, cfg: Config, table: Path, count_rows: bool = True
) -> PeerCompactReport:
    """Compact the table in a running session (the format's runtime settings set);
    `count_rows`: also count the table's rows afterwards (its merged read, untimed
    by the compaction's seconds)."""
    fmt = formats.of(cfg)
    for key, value in fmt.runtime_conf(cfg, table).items():
        spark.conf.set(key, value)
    spark.sparkContext.setLocalProperty("spark.job.description", f"{cfg.peer.format} compact")
    before = fmt.layout(spark, cfg, table)
    started = time.perf_counter()
    metrics = fmt.compact(spark, cfg, table)
    seconds = time.perf_counter() - started
    after = fmt.layout(spark, cfg, table)
    rows = fmt.read(spark, cfg, table).count() if count_rows else None
    return PeerCompactReport(
        cfg.peer.format, str(table), before, after, seconds, rows, metrics, folder_bytes(table)
    )


def run_peer_compact(cfg: Config, table_path: str | Path) -> PeerCompactReport:
    """The whole job: check the folder holds the format's table, load its library,
    compact."""
    table = Path(str(table_path)).absolute()
    marker = formats.of(cfg).marker
    if not (table / marker).exists():
        raise ReadError(
            f"--table {table}: no {cfg.peer.format} table there (no {marker}): "
            "write it first (contest write with the same peer.format)"
        )
    coords = formats.coordinates(cfg)
    packages.require(coords)
    with spark_session(session_config(cfg), f"contest-compact-{cfg.peer.format}", coords) as spark:
        report = compact_peer(spark, cfg, table)
        report.spark_cores = granted_cores(spark)
    return report
