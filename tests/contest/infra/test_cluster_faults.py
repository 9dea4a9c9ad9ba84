"""Faults on the standalone cluster (2 workers x 1 core), table on the embedded S3
server: a worker (its JVM, executor and Python workers: a node) killed during the
write, and an executor killed during the read. Both jobs finish on what remains, and
the result is exact."""

import dataclasses
import os
import signal

import psutil
import pytest

from contest.config import TableConfig
from contest.data.batches import discover
from contest.data.checker import compare
from contest.data.generator import generate
from contest.data.oracle import expected_result
from contest.infra.cluster import Standalone
from contest.infra.s3server import ensure_bucket
from meta import catalog
from meta.commits import committed_versions
from meta.merge import merge_table
from tests.support.cluster import executor_of, failed_tasks, python_started, submit, wait_for
from tests.support.s3 import configured

pytestmark = pytest.mark.slow

TABLE = "faults_on_cluster"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fault-data")
    generate(folder, 0.001, seed=13, progress=False)
    expected = folder.parent / "fault-expected.parquet"
    expected_result(discover(folder), expected)
    return folder, expected


@pytest.fixture(scope="module")
def killed_write(cfg, pg, s3, standalone, data, tmp_path_factory):
    """The write, with worker-1 and everything under it killed once its first Python
    task started; then the worker is started again for the tests that follow."""
    work = tmp_path_factory.mktemp("fault-write")
    victim = standalone["workers"][1]["pid"]
    # two buckets: the read runs one merge task per executor, so the executor killed
    # there is running a task
    two_buckets = dataclasses.replace(s3, table=TableConfig(hash_buckets=2))
    # Its own bucket: the embedded server starts without one, and under pytest-xdist no
    # earlier test on this worker need have made it (a run failed NO_SUCH_BUCKET so).
    with configured(s3):
        ensure_bucket(f"s3://lake/faults/{TABLE}")
    proc = submit(
        two_buckets,
        "write",
        standalone["master_url"],
        ["--data", str(data[0]), "--table", f"s3://lake/faults/{TABLE}", "--replace"],
        work,
    )
    killed = wait_for(lambda: python_started(victim), proc)
    if killed:
        os.killpg(victim, signal.SIGKILL)  # the worker's group: its executor and Python too
    code = proc.wait(timeout=900)
    Standalone.of(cfg).up(workers=2, cores=1, memory="1g")  # the next tests get 2 workers
    return killed, code, (work / "write.log").read_text(errors="replace")


def test_a_write_finishes_on_the_remaining_worker(pg, killed_write):
    killed, code, log = killed_write
    assert killed, "the write ended before a task ran on worker 1"
    assert code == 0, log[-3000:]
    assert "Lost executor" in log or "ExecutorLostFailure" in log  # Spark saw it
    table = catalog.get_table(pg, TABLE)
    assert set(committed_versions(pg, table)) == set(range(11))  # every batch, once


def test_a_read_survives_a_lost_executor(cfg, pg, s3, standalone, data, killed_write, tmp_path):
    assert killed_write[1] == 0
    merge_table(pg, catalog.get_table(pg, TABLE))
    st = Standalone.of(cfg).state()
    assert st is not None
    worker = st["workers"][1]["pid"]
    out = tmp_path / "result"
    proc = submit(
        s3,
        "read",
        st["master_url"],
        ["--table", TABLE, "--out", str(out)],
        tmp_path / "job",
    )
    executor: list[int] = []

    def python_on_executor() -> bool:
        pid = executor_of(worker)
        if pid and python_started(pid):
            executor.append(pid)
            return True
        return False

    assert wait_for(python_on_executor, proc), "the read ended before worker 1 ran a task"
    for p in [executor[0], *(c.pid for c in psutil.Process(executor[0]).children(True))]:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    code = proc.wait(timeout=900)
    log = (tmp_path / "job" / "read.log").read_text(errors="replace")
    assert code == 0, log[-3000:]
    assert "Lost executor" in log
    assert "ExecutorLostFailure" in failed_tasks(tmp_path / "job")  # its task ran again
    report = compare(out, data[1])
    assert report.ok, report.render()
