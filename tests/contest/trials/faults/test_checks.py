"""The fault experiments' pure checks: the write log, one-line failures, what a killed
read left, permutations."""

from __future__ import annotations

from contest.trials.faults.checks import (
    changed_files,
    classify_result,
    committed_in_log,
    disjoint_indices,
    is_permutation,
    is_sorted,
    names_all,
    one_line_failure,
    tree_state,
)

LOG = """\
2026-11-26 05:00:01,001 contest.write base-3.parquet v3: 20000 rows, 4 files, 1800000 bytes, \
no shuffle, write 1.20s, commit 0.010s
2026-11-26 05:00:01,200 contest.write base-0.parquet v0: already committed, skipped
2026-11-26 05:00:01,300 contest.write base-5.parquet v5: FAILED, nothing committed: boom
2026-11-26 05:00:02,001 contest.write base-10.parquet v10: 20000 rows, 4 files, 1800000 \
bytes, repartitioned by key, write 1.20s, commit 0.010s
2026-11-26 05:00:02,500 contest.write base-7.parquet v7: 200"""


def test_the_write_log_names_only_batches_whose_commit_returned():
    assert committed_in_log(LOG) == {3: "base-3.parquet", 10: "base-10.parquet"}
    assert committed_in_log("") == {}


def test_a_failure_is_one_contest_line_without_a_traceback():
    one = "INFO stuff\ncontest: warning: gaps\ncontest: wrote t: FAILED 1 (base-2.parquet)\n"
    assert one_line_failure(one) == "contest: wrote t: FAILED 1 (base-2.parquet)"
    assert one_line_failure("contest: a\ncontest: b\n") is None
    assert one_line_failure("Traceback (most recent call last):\ncontest: a\n") is None
    assert one_line_failure("nothing said\n") is None
    spark_log = "05:16:47 ERROR Executor: x\norg.apache.spark.api.python.PythonException: "
    spark_log += "Traceback (most recent call last):\n  File x\ncontest: wrote t: FAILED 1\n"
    assert one_line_failure(spark_log) == "contest: wrote t: FAILED 1"


def test_a_killed_read_leaves_old_new_none_or_partial():
    assert classify_result(False, False, None, 7) == "none"
    assert classify_result(True, False, 8, 7) == "partial"
    assert classify_result(True, True, 7, 7) == "old"
    assert classify_result(True, True, 8, 7) == "new"


def test_permutations_and_order():
    assert is_permutation(["a", "b", "c"], ["c", "a", "b"])
    assert not is_permutation(["a", "b", "b"], ["a", "b", "c"])  # duplicated and dropped
    assert not is_permutation(["a", "b"], ["a", "b", "c"])
    assert is_sorted([1, None, 2, 2, 5]) and not is_sorted([1, 3, 2])


def test_batches_are_dealt_to_writers_disjointly():
    shares = disjoint_indices(11, 4)
    assert shares == [[0, 4, 8], [1, 5, 9], [2, 6, 10], [3, 7]]
    assert sorted(i for s in shares for i in s) == list(range(11))


def test_a_tree_state_sees_every_file_and_what_changed(tmp_path):
    assert tree_state(tmp_path / "absent") == {}
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / ".hidden").write_text("x")
    (tmp_path / "b.txt").write_text("yy")
    before = tree_state(tmp_path)
    assert sorted(before) == ["a/.hidden", "b.txt"] and before["b.txt"][0] == 2
    (tmp_path / "new.txt").write_text("new")
    assert changed_files(before, tree_state(tmp_path)) == []
    (tmp_path / "b.txt").write_text("changed")
    (tmp_path / "a" / ".hidden").unlink()
    assert changed_files(before, tree_state(tmp_path)) == ["a/.hidden", "b.txt"]


def test_a_refusal_names_both_tables():
    line = "contest: cannot create default.inner at file:///t/a/inner: ... table default.a at"
    assert names_all(line, "default.inner", "default.a")
    assert not names_all(line, "default.inner", "default.b")
    assert not names_all(None, "x")
