"""What spark-submit's command line says wins over the project's defaults."""

import json
import os
import sys
from pathlib import Path

import pytest

from contest.infra.proc import run_captured
from tests.support.config import REPO

pytestmark = pytest.mark.spark


def submitted(tmp_path: Path, job: str, *options: str) -> dict:
    """A job of tests/support/jobs run by spark-submit (local[1], `options` before it):
    the JSON line it printed last."""
    exe = Path(sys.executable).parent / "spark-submit"
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    script = str(REPO / "tests" / "support" / "jobs" / job)
    proc = run_captured(
        [str(exe), "--master", "local[1]", *options, script], cwd=tmp_path, env=env, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_the_command_line_wins_over_the_config(tmp_path):
    saw = submitted(
        tmp_path,
        "submitted_conf.py",
        "--driver-memory",
        "700m",
        "--conf",
        "spark.sql.shuffle.partitions=3",
    )
    # The Config's defaults are local[*], 8 shuffle partitions and 4g.
    assert saw["master"] == "local[1]"
    assert saw["default_parallelism"] == 1
    assert saw["shuffle_partitions"] == "3"
    assert saw["driver_memory"] == "700m"
    assert saw["heap_mb"] <= 700  # the JVM started with -Xmx700m, not the default 4g
    # The session's end joined the warm-up; stop_session left the accumulator server's
    # shutdown to a thread, after the tasks' updates had arrived; that thread ended by
    # itself: nothing of the session is left.
    assert saw["accumulated"] == 10
    assert saw["server_closed"] and saw["context_gone"]
    assert saw["threads_left"] == []


def test_python_preload_runs_pyspark_compiled_and_our_daemon(tmp_path):
    """spark.python_preload: the driver and the workers import the installed pyspark
    (not Spark's zip, compiled at every start), the workers fork from our daemon."""
    from contest.infra.pyspark_daemon import prefer_installed_pyspark

    saw = submitted(tmp_path, "python_preload.py")
    assert "pyspark.zip" not in saw["driver"] and "pyspark.zip" not in saw["worker"]
    assert saw["daemon"] == "contest.infra.pyspark_daemon"
    # Another Spark's zip (not inside the installed package) stays first: its pyspark runs.
    other = [str(tmp_path / "spark" / "python" / "lib" / "pyspark.zip"), *sys.path]
    assert not prefer_installed_pyspark(other) or "pyspark" in sys.modules
    assert other[0].endswith("pyspark.zip")
