"""A pytest plugin: no child a test started through the harness (contest.infra.proc)
outlives the test. A test that fails by pytest-timeout's signal method unwinds while it
waits on its child; this kills the child's whole group (its JVM with it) at the test's
teardown, so the run goes on without it. (The thread method ends the whole process:
the parent-death signal takes the children then, contest/infra/proc.py.)"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_child_outlives_its_test():
    yield
    from contest.infra.proc import stop_spawned

    stopped = stop_spawned()
    if stopped:
        print(f"reaper: killed the process group(s) {stopped} the test left running")
