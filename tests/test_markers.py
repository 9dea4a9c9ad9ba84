"""The markers tests get from their fixtures (tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import fixture_markers, heaviest_first, xdist_group_name
from tests.support.config import REPO


def test_markers_follow_the_fixtures_in_the_closure():
    assert fixture_markers(["cfg", "tmp_path"]) == set()
    assert fixture_markers(["cfg", "pg", "spark"]) == {"pg", "spark"}
    assert fixture_markers(["cfg", "s3"]) == {"s3"}
    assert fixture_markers(["standalone"]) == {"standalone", "spark"}  # a cluster is Spark


def test_a_fixture_of_a_fixture_marks_the_test():
    # test_lakesoul_native_reader_sees_the_same_keys asks for pg and nulls_table, and
    # nulls_table for spark: only the closure says it needs Spark. Collection only.
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "spark",
         "tests/contest/read/test_job.py"],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert "test_lakesoul_native_reader_sees_the_same_keys" in proc.stdout


def test_this_test_is_not_marked(request):
    marks = {m.name for m in request.node.iter_markers()}
    assert not marks & {"spark", "pg", "s3", "standalone"}


def test_a_test_runs_with_its_module_or_with_the_servers():
    test = "tests/contest/peers/test_peer_history.py::test_as_of[delta-merge]"
    assert xdist_group_name(test, {"spark", "pg"}) == "tests/contest/peers/test_peer_history.py"
    assert xdist_group_name(test, {"spark", "s3"}) == "servers"
    assert xdist_group_name("tests/test_docs.py::test_x", set()) == "tests/test_docs.py"


def test_groups_with_more_slow_tests_are_sent_first_each_in_its_own_order():
    groups = ["a", "b", "b", "c", "c", "c", "a"]
    slow = [False, True, False, True, True, False, False]
    # c holds two slow tests, b one, a none; ties and each group's tests keep their order.
    assert heaviest_first(groups, slow) == [3, 4, 5, 1, 2, 0, 6]
