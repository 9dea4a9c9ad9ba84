"""A session's cold start overlapped with the driver's own work (`spark.warm_up`).

A job's first DataFrame and first action are slow for reasons no row pays for: Spark's
session state (analyzer, catalog, function registry) is built on first use, the first
plan is generated and compiled, the scheduler's and the task runner's classes load and
warm up, and the first Python task starts the worker daemon and a worker that imports
pyarrow (a bare job at scale 0.001: `spark.range(10)` ~1.5 s, the first action ~2.5 s
against ~0.5 s warm; results/costs.md). The driver meanwhile does seconds of Python of
its own (imports, footers, PostgreSQL, the table), on one core: the warm-up runs that
cold path on a thread of its own as soon as the session is up, so the JVM and a worker
warm on the other core. Its work is the job's own (timed as a whole process); nothing
is carried between jobs."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

GROUP = "contest-warm-up"


def _same(batches: Iterable[Any]) -> Iterator[Any]:
    yield from batches


def warm(spark: SparkSession) -> None:
    """One tiny action through the paths the harness's jobs take: a plan analysed and
    compiled, a task scheduled, a Python worker over Arrow. A failure is ignored (the
    job's own first action meets it again and reports it)."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql.types import LongType, StructField, StructType

    try:
        spark.sparkContext.setJobGroup(GROUP, "warm-up", interruptOnCancel=True)
        # The schema made in Python, as the jobs make theirs (no SQL parser).
        schema = StructType([StructField("id", LongType(), False)])
        spark.range(1).mapInArrow(_same, schema).collect()
    except Exception:  # a warm-up is never worth a failure: py4j's and Spark's errors alike
        return


def start(spark: SparkSession) -> threading.Thread:
    """The warm-up on a daemon thread, started now; join it before the session stops."""
    thread = threading.Thread(target=warm, args=(spark,), name=GROUP, daemon=True)
    thread.start()
    return thread
