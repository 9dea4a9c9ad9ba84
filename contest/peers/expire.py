"""`contest vacuum` on a peer format's table: the format's own cleanup of old versions
(`PeerFormat.expire`: Delta VACUUM, Iceberg expire_snapshots, Hudi's cleaner, Paimon's
snapshot expiry), keeping only the newest, in a process of its own as `contest
compact` runs (contest/peers/compact.py). What it leaves is the vacuumed start of a
workload's history reads: a read from an expired version is answered from
what remains or refused naming the oldest version it can start from. The files it
removes are the format's, of a table this harness wrote; the batch ledger stays."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from contest.config import Config
from contest.errors import ReadError
from contest.infra import packages
from contest.infra.spark import granted_cores, spark_session
from contest.peers import formats
from contest.peers.files import data_listing, folder_bytes
from contest.peers.write import session_config


@dataclass
class PeerExpireReport:
    format: str
    table: str
    seconds: float
    files_before: int
    files_after: int
    # The format's own numbers of it (files deleted, snapshots expired, ...).
    metrics: dict[str, int] = field(default_factory=dict)
    table_bytes: int = 0
    spark_cores: int | None = None

    def summary(self) -> str:
        return (
            f"expired old versions of {self.format} table {self.table}: data files "
            f"{self.files_before} -> {self.files_after}, {self.seconds:.3f} s"
        )

    def to_dict(self) -> dict:
        return {
            "format": self.format,
            "table": self.table,
            "seconds": round(self.seconds, 3),
            "files_before": self.files_before,
            "files_after": self.files_after,
            "metrics": self.metrics,
            "table_bytes": self.table_bytes,
            "spark_cores": self.spark_cores,
        }


def run_peer_expire(cfg: Config, table_path: str | Path) -> PeerExpireReport:
    """Check the folder holds the format's table, load its library, expire."""
    table = Path(str(table_path)).absolute()
    fmt = formats.of(cfg)
    if not (table / fmt.marker).exists():
        raise ReadError(
            f"--table {table}: no {cfg.peer.format} table there (no {fmt.marker}): "
            "write it first (contest write with the same peer.format)"
        )
    coords = formats.coordinates(cfg)
    packages.require(coords)
    name = f"contest-expire-{cfg.peer.format}"
    with spark_session(session_config(cfg), name, coords) as spark:
        for key, value in fmt.runtime_conf(cfg, table).items():
            spark.conf.set(key, value)
        before = len(data_listing(table, fmt.metadata_dirs))
        started = time.perf_counter()
        metrics = fmt.expire(spark, cfg, table)
        seconds = time.perf_counter() - started
        report = PeerExpireReport(
            cfg.peer.format,
            str(table),
            seconds,
            before,
            len(data_listing(table, fmt.metadata_dirs)),
            metrics,
            folder_bytes(table),
            granted_cores(spark),
        )
    return report
