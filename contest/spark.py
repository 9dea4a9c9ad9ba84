"""The Spark session, built from the config and nothing else."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from contest.config import Config

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def session_conf(cfg: Config, packages: tuple[str, ...] = ()) -> dict[str, str]:
    conf = {
        "spark.sql.shuffle.partitions": str(cfg.spark.shuffle_partitions),
        "spark.driver.memory": cfg.spark.driver_memory,
        "spark.ui.enabled": str(cfg.spark.ui).lower(),
        "spark.ui.showConsoleProgress": "false",
        # Python workers must import the same packages (lakesoul, pyarrow) as the driver.
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
    }
    jars = list(packages) + ([cfg.spark.connector] if cfg.spark.use_connector else [])
    if jars:
        conf["spark.jars.packages"] = ",".join(jars)
    if cfg.spark.use_connector:
        conf.update({
            "spark.sql.extensions": "com.dmetasoul.lakesoul.sql.LakeSoulSparkSessionExtension",
            "spark.sql.catalog.lakesoul": "org.apache.spark.sql.lakesoul.catalog.LakeSoulCatalog",
            "spark.sql.defaultCatalog": "lakesoul",
        })
    conf.update(cfg.spark.conf)
    return conf


def build_session(cfg: Config, app_name: str, packages: tuple[str, ...] = ()) -> SparkSession:
    """`packages`: Maven coordinates the session needs besides the configured ones
    (the PostgreSQL JDBC driver for the distributed replay)."""
    if cfg.spark.use_connector:
        from contest.connector import ensure_resolvable

        ensure_resolvable(cfg.spark.connector)
    import os

    from pyspark.sql import SparkSession

    # PySpark started from Python takes its worker interpreter from this variable,
    # not from spark.pyspark.python: workers need this interpreter's packages.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark import SparkConf

    # Under spark-submit the command line decides master and driver memory.
    submitted = SparkConf().contains("spark.master")
    builder = SparkSession.builder.appName(app_name)
    if not submitted:
        builder = builder.master(cfg.spark.master)
    for key, value in session_conf(cfg, packages).items():
        if submitted and key == "spark.driver.memory":
            continue
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(cfg.spark.log_level)
    return spark


def cores_of(spark: SparkSession) -> int:
    return int(spark.sparkContext.defaultParallelism)


@contextmanager
def spark_session(cfg: Config, app_name: str,
                  packages: tuple[str, ...] = ()) -> Iterator[SparkSession]:
    """A session for one command; stopped afterwards only if this command started it."""
    from pyspark.sql import SparkSession

    existing = SparkSession.getActiveSession()
    spark = existing or build_session(cfg, app_name, packages)
    try:
        yield spark
    finally:
        if existing is None:
            spark.stop()
