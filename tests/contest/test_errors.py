"""One error boundary: Spark failures unwrapped to the harness's own errors, one line."""

from __future__ import annotations

import pytest

from contest.errors import (
    ConfigError,
    DataError,
    HarnessError,
    TaskError,
    UsageError,
    unwrap_spark_error,
)

WORKER_TRACE = """An exception was thrown from the Python worker. Please see the stack trace below.
Traceback (most recent call last):
  File "/x/pyspark/worker.py", line 1247, in main
    process()
  File "/work/contest/write/files.py", line 190, in task
    raise DataError(f"{path}: cannot read row group 0: bad")
contest.errors.DataError: /data/base-3.parquet: cannot read row group 0: bad

\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(...)
\tat org.apache.spark.sql.execution.python.PythonArrowOutput$$anon$1.read(...)
"""

OS_TRACE = """An exception was thrown from the Python worker.
Traceback (most recent call last):
  File "/x/pyspark/worker.py", line 1247, in main
    process()
OSError: [Errno 28] No space left on device
\tat org.apache.spark.api.python.BasePythonRunner$ReaderIterator.handlePythonException(...)
"""


DRIVER_MEMORY_TRACE = (
    "An error occurred while calling None.org.apache.spark.api.java.JavaSparkContext.\n"
    ": java.lang.IllegalArgumentException: [INVALID_DRIVER_MEMORY] System memory 1048576 "
    "must be at least 471859200. Please increase heap size using the --driver-memory option "
    'or "spark.driver.memory" in Spark configuration.\n'
    "\tat org.apache.spark.memory.UnifiedMemoryManager$.getMaxMemory(...)\n"
    "\tat org.apache.spark.SparkContext.<init>(SparkContext.scala:552)\n"
)


class PythonException(Exception):
    """Stands in for pyspark.errors.PythonException's type name only: the text is real."""


class Py4JJavaError(Exception):
    """Stands in for py4j's type name only: the text is what str() of the real one gives."""


def test_harness_error_from_a_worker_keeps_its_class_and_message():
    err = unwrap_spark_error(PythonException(WORKER_TRACE))
    assert isinstance(err, DataError) and isinstance(err, UsageError)
    assert str(err) == "/data/base-3.parquet: cannot read row group 0: bad"
    assert err.exit_code == 2


def test_other_worker_errors_become_one_task_line():
    err = unwrap_spark_error(PythonException(OS_TRACE))
    assert isinstance(err, TaskError)
    assert str(err) == "in a Spark task: OSError: [Errno 28] No space left on device"
    assert err.exit_code == 1


def test_a_jvm_error_names_its_cause_not_py4js_wrapper():
    # Spark's driver-memory refusal is the configuration's: it names the key to raise
    # (contest has no --driver-memory option), not py4j's wrapper.
    err = unwrap_spark_error(Py4JJavaError(DRIVER_MEMORY_TRACE))
    assert isinstance(err, ConfigError)
    assert str(err).startswith("Spark: [INVALID_DRIVER_MEMORY] the driver's heap is 1 MB")
    assert "--set spark.driver_memory=1g" in str(err)


def test_not_a_spark_error_is_left_alone():
    assert unwrap_spark_error(ValueError("plain bug")) is None
    same = DataError("x")
    assert unwrap_spark_error(same) is same


@pytest.mark.spark
def test_real_task_error_is_unwrapped(spark):
    def boom(it):
        for _ in it:
            raise DataError("batch base-7.parquet: 3 rows with a NULL uuid")
        yield from ()

    with pytest.raises(Exception) as info:
        spark.sparkContext.parallelize([1, 2], 1).mapPartitions(boom).collect()
    err = unwrap_spark_error(info.value)
    assert isinstance(err, DataError) and isinstance(err, HarnessError)
    assert str(err) == "batch base-7.parquet: 3 rows with a NULL uuid"
