"""The Read job of a peer format: the table's current snapshot, merged by the format's
own reader (Delta: files minus deletion vectors; Iceberg: data minus position deletes;
Hudi: base files merged with log files), written as the contest's result parquet
through the project's safe result folder (staged, then published)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config
from contest.errors import ReadError
from contest.peers import formats
from contest.peers.write import session_config
from contest.read import output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def table_dataframe(spark: SparkSession, cfg: Config, table: Path) -> DataFrame:
    """The table as the format's reader merges it, in the workload's columns and the
    merged types (contest/data/operators.py result_schema: a sum as int64)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from contest.data.operators import result_schema
    from contest.data.workload import contract_operators, workload_schema

    df = formats.of(cfg).read(spark, cfg, table)
    schema = result_schema(workload_schema(cfg.workload), contract_operators(cfg.workload))
    return df.select(
        *[
            F.col(f.name).cast("long").alias(f.name)
            if pa.types.is_integer(f.type)
            else F.col(f.name)
            for f in schema
        ]
    )


def run_peer_read(cfg: Config, table_path: str | Path, out_dir: str, overwrite: bool) -> dict:
    """Check the table and the result folder, read, publish; the job's report."""
    from contest.infra import packages
    from contest.infra.spark import granted_cores, spark_session

    table = Path(str(table_path)).absolute()
    fmt = formats.of(cfg)
    marker = fmt.marker
    if not (table / marker).exists():
        raise ReadError(
            f"--table {table}: no {cfg.peer.format} table there (no {marker}): "
            "write it first (contest write with the same peer.format)"
        )
    out = output.prepare(out_dir, [str(table)], overwrite)
    coords = formats.coordinates(cfg)
    packages.require(coords)
    started = time.perf_counter()
    with spark_session(session_config(cfg), f"contest-read-{cfg.peer.format}", coords) as spark:
        for key, value in fmt.runtime_conf(cfg, table).items():
            spark.conf.set(key, value)
        try:
            table_dataframe(spark, cfg, table).write.option("compression", cfg.read.codec).parquet(
                str(out.staging)
            )
            rows = spark.read.parquet(str(out.staging)).count()
            output.publish(out, {"table": str(table), "format": cfg.peer.format, "rows": rows})
        except BaseException:
            output.discard(out)
            raise
        cores = granted_cores(spark)
    return {
        "table": str(table),
        "format": cfg.peer.format,
        "out": str(out.target),
        "rows": rows,
        "seconds": round(time.perf_counter() - started, 3),
        "spark_cores": cores,
    }
