"""The Read job of a peer format: the table merged by the format's own reader (Delta:
files minus deletion vectors; Iceberg: data minus position deletes; Hudi: base files
merged with log files), at its head, as of a version (`--as-of-version`, the format's
time travel) or the changes of a range of versions (`--from-version A --to-version B`,
the format's own change read), written as the contest's result parquet through the
project's safe result folder (staged, then published).

Versions are the contest's batch versions; the table's batch ledger (contest/peers/
ledger.py) maps each to the format's own commit, and the job reports the version it
read. Every read is in the workload's newest schema: a column added after
the commit read is NULL, an integer written narrower (before its widening) is int64."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config
from contest.errors import ReadError
from contest.infra import packages
from contest.infra.spark import granted_cores, spark_session
from contest.peers import formats, ledger
from contest.peers.write import session_config
from contest.read import output
from contest.read.newest import newest_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class Span:
    """What a read asks of the table: its head (`end` None), a commit (`end`), or the
    changes after commit `start` (None: from the beginning) up to `end`; `version` and
    `from_version` are the contest's versions they stand for."""

    version: int | None = None
    from_version: int | None = None
    end: str | None = None
    start: str | None = None
    changes: bool = False


def plan_span(
    table: Path,
    as_of: int | None = None,
    from_version: int | None = None,
    to_version: int | None = None,
) -> Span:
    """The commits a read names, from the table's ledger (before Spark starts): a
    version no commit holds exactly is refused in one line saying why."""
    held = ledger.load(table)
    if held is None:
        if as_of is None and from_version is None and to_version is None:
            return Span()
        raise ReadError(
            f"--table {table}: no batch ledger ({ledger.LEDGER}), so which commit holds "
            "which version is unknown: only its head can be read"
        )
    newest = ledger.newest(held)
    if as_of is not None:
        return Span(version=as_of, end=ledger.commit_for(held, as_of))
    if from_version is None and to_version is None:
        return Span(version=newest)
    to = newest if to_version is None else to_version
    if to is None:
        raise ReadError(f"--table {table}: the table holds no batch")
    if from_version is not None and from_version >= to:
        raise ReadError(f"--from-version {from_version} is not before version {to}")
    end = ledger.commit_for(held, to)
    before = from_version is None or not any(
        v <= from_version for v, e in held.items() if e.get("state") == ledger.DONE
    )
    start = None if before else ledger.commit_for(held, int(from_version or 0))
    return Span(version=to, from_version=from_version, end=end, start=start, changes=True)


def table_dataframe(
    spark: SparkSession, cfg: Config, table: Path, span: Span | None = None
) -> DataFrame:
    """The table as the format's reader merges it (its head, a commit or a range's
    changes), in the workload's newest schema."""
    fmt = formats.of(cfg)
    if span is None or span.end is None:
        df = fmt.read(spark, cfg, table)
    elif not span.changes or span.start is None:
        # The changes from the beginning are the table as of the range's end.
        df = fmt.read_as_of(spark, cfg, table, span.end)
    else:
        df = fmt.read_changes(spark, cfg, table, span.start, span.end)
    return newest_schema(df, cfg)


def run_peer_read(
    cfg: Config,
    table_path: str | Path,
    out_dir: str,
    overwrite: bool,
    as_of: int | None = None,
    from_version: int | None = None,
    to_version: int | None = None,
) -> dict:
    """Check the table, the versions and the result folder, read, publish; the job's
    report (with the version read, and the range's start for a change read)."""
    table = Path(str(table_path)).absolute()
    fmt = formats.of(cfg)
    marker = fmt.marker
    if not (table / marker).exists():
        raise ReadError(
            f"--table {table}: no {cfg.peer.format} table there (no {marker}): "
            "write it first (contest write with the same peer.format)"
        )
    span = plan_span(table, as_of, from_version, to_version)
    out = output.prepare(out_dir, [str(table)], overwrite)
    coords = formats.coordinates(cfg)
    packages.require(coords)
    started = time.perf_counter()
    with spark_session(session_config(cfg), f"contest-read-{cfg.peer.format}", coords) as spark:
        for key, value in fmt.runtime_conf(cfg, table).items():
            spark.conf.set(key, value)
        try:
            table_dataframe(spark, cfg, table, span).write.option(
                "compression", cfg.read.codec
            ).parquet(str(out.staging))
            rows = spark.read.parquet(str(out.staging)).count()
            output.publish(out, {"table": str(table), "format": cfg.peer.format, "rows": rows})
        except BaseException:
            output.discard(out)
            raise
        cores = granted_cores(spark)
    report = {
        "table": str(table),
        "format": cfg.peer.format,
        "out": str(out.target),
        "rows": rows,
        "seconds": round(time.perf_counter() - started, 3),
        "spark_cores": cores,
        "version": span.version,
    }
    if span.changes:
        report["from_version"] = span.from_version
    return report
