"""Child processes: a timed one (exit code, wall time, peak memory of the whole tree),
and ones in their own process group, killed whole."""

from __future__ import annotations

import os
import sys

import pytest

from contest.errors import RunError
from contest.infra.proc import (
    kill_group,
    run_timed,
    spawn,
    spawn_piped,
    stop_spawned,
    tree_rss,
    wait_bounded,
)

CHILD = """
import subprocess, sys, time
kid = subprocess.Popen([sys.executable, "-c",
    "b = bytearray(300 * 1024 * 1024); import time; time.sleep(1.5)"])
b = bytearray(100 * 1024 * 1024)
time.sleep(1.5)
kid.wait()
print("first line")
print("last line")
sys.exit(3)
"""


def test_run_timed_measures_the_tree(tmp_path):
    res = run_timed([sys.executable, "-c", CHILD], tmp_path / "log.txt", poll_s=0.1)
    assert res.returncode == 3 and not res.ok
    assert res.last_line == "last line"
    assert res.seconds >= 1.5
    mb = 1024 * 1024
    assert res.peak_rss_bytes >= 380 * mb  # parent and grandchild together
    assert 290 * mb <= res.peak_process_rss_bytes < res.peak_rss_bytes


def test_run_timed_stops_a_job_at_its_cap_with_its_children(tmp_path):
    """Past its cap a job's whole tree is killed (a grandchild too) and the result says
    timed out; a job within its cap is not touched."""
    pid_file = tmp_path / "kid.pid"
    sleeper = (
        "import subprocess, sys, time\n"
        "kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(kid.pid))\n"
        "time.sleep(60)\n"
    )
    res = run_timed([sys.executable, "-c", sleeper], tmp_path / "log.txt", poll_s=0.1, cap_s=2)
    assert res.timed_out and not res.ok
    assert 2 <= res.seconds < 20
    kid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(kid, 0)
    quick = run_timed([sys.executable, "-c", "print('done')"], tmp_path / "q.txt", cap_s=30)
    assert quick.ok and not quick.timed_out and quick.last_line == "done"


def test_tree_rss_of_a_gone_process_is_zero():
    assert tree_rss(2**22 + 12345) == (0, 0)


def test_own_peak_rss_follows_this_process_and_starts_over():
    from contest.infra.proc import own_peak_rss, reset_own_peak_rss

    block = bytearray(200 << 20)  # touched: resident
    high = own_peak_rss()
    del block
    reset_own_peak_rss()
    assert high >= 200 << 20
    assert 0 < own_peak_rss() < high - (100 << 20)


GROUP = """
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print("started", flush=True)
time.sleep(60)
"""


def test_a_spawned_group_is_killed_whole(tmp_path):
    proc = spawn([sys.executable, "-c", GROUP], tmp_path / "g.log", os.environ, tmp_path)
    while "started" not in (tmp_path / "g.log").read_text():
        assert proc.poll() is None
    kill_group(proc, timeout=10)  # returns only once no process of the group is left
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)
    piped = spawn_piped([sys.executable, "-c", "print(input()[::-1])"], os.environ, tmp_path)
    out, _ = piped.communicate("abc\n", timeout=30)
    assert out.strip() == "cba" and piped.returncode == 0
    slow = spawn([sys.executable, "-c", GROUP], tmp_path / "s.log", os.environ, tmp_path)
    with pytest.raises(RunError, match="ran over 0.5 s: killed"):
        wait_bounded(slow, 0.5)
    assert slow.poll() is not None
    left = spawn([sys.executable, "-c", GROUP], tmp_path / "l.log", os.environ, tmp_path)
    stop_spawned()  # an interrupted run: every child still running goes
    assert left.poll() is not None


TIMED_PARENT = """
import sys
from pathlib import Path
from contest.infra.proc import run_timed, sigterm_as_interrupt
job = [sys.executable, "-c", {group!r}]
try:
    with sigterm_as_interrupt():
        run_timed(job, Path({log!r}))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
"""


def test_a_terminated_run_leaves_no_job_behind(tmp_path):
    """SIGTERM to a run waiting on a timed job (a stopped `contest compare`): the job's
    whole tree goes with it, the grandchild included."""
    import subprocess
    import time

    import psutil

    log = tmp_path / "job.log"
    code = TIMED_PARENT.format(group=GROUP, log=str(log))
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while "started" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline and parent.poll() is None
        time.sleep(0.05)
    job = [p for p in psutil.Process(parent.pid).children(recursive=True)]
    assert len(job) == 2  # the job and its own child
    parent.terminate()
    out, _ = parent.communicate(timeout=30)
    assert parent.returncode == 130 and "interrupted" in out
    gone, alive = psutil.wait_procs(job, timeout=10)
    assert not alive


# A child shaped like `contest stream run`: Python holding a Spark session (its JVM).
JVM_CHILD = """
import time
from pyspark.sql import SparkSession
s = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
print("up", flush=True)
time.sleep(900)
"""

# A test file run by a pytest of its own: the child is started through the harness's
# runner (at import, so the JVM is up before the test's short timeout runs), the test
# waits on it and is ended by pytest-timeout; a second test looks for the child.
TIMED_OUT = """
import os, sys, time
from pathlib import Path
import psutil, pytest
from contest.infra.proc import spawn, wait_bounded

here = Path(__file__).parent
proc = spawn([sys.executable, "-c", {child!r}], here / "child.log", dict(os.environ), here)
while "up" not in (here / "child.log").read_text():
    assert proc.poll() is None, (here / "child.err").read_text()[-2000:]
    time.sleep(0.1)
tree = [proc.pid] + [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
(here / "pids").write_text(" ".join(map(str, tree)))

@pytest.mark.timeout(1, method={method!r})
def test_waits_on_its_child():
    wait_bounded(proc, 900)

def test_after_it():
    alive = [p for p in map(int, (here / "pids").read_text().split()) if psutil.pid_exists(p)]
    (here / "alive_after").write_text(" ".join(map(str, alive)))
"""


@pytest.mark.spark
@pytest.mark.parametrize("method", ["signal", "thread"])
def test_a_child_and_its_jvm_die_with_a_timed_out_test(tmp_path, method):
    """pytest-timeout ends a test waiting on a benchmark's child: by an exception in the
    test (signal) or by ending the whole process (thread). The child and its JVM go
    with it either way (a stream bench's child and JVM ran on for 1 h 38 min)."""
    import subprocess
    import time

    import psutil

    from tests.support.config import REPO

    (tmp_path / "test_inner.py").write_text(TIMED_OUT.format(child=JVM_CHILD, method=method))
    inner = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p"]
    inner += ["tests.support.reaper", "--rootdir", str(tmp_path), str(tmp_path)]
    done = subprocess.run(inner, cwd=REPO, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert "Timeout" in out, out[-3000:]
    tree = [int(p) for p in (tmp_path / "pids").read_text().split()]
    names = [psutil.Process(p).name() for p in tree if psutil.pid_exists(p)]
    assert len(tree) >= 2, names  # the child and its JVM (spark-submit's java)
    if method == "signal":  # the run went on: the next test found nothing left
        assert (tmp_path / "alive_after").read_text() == "", out[-3000:]
    deadline = time.monotonic() + 30
    while any(psutil.pid_exists(p) and psutil.Process(p).status() != "zombie" for p in tree):
        assert time.monotonic() < deadline, f"left running: {tree}"
        time.sleep(0.2)
