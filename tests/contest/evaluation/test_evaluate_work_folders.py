"""Two evaluations in separate work folders (the advice a second one in the same folder
gets) never touch each other's tables: each folder names its own
table. That the second's clean phase leaves the first's table, its commits and its
files as they were is checked on test_evaluate.py's evaluation (one more, not two)."""

from __future__ import annotations

from contest.evaluation.evaluate import table_name_of


def test_table_name_is_the_work_folders_own(tmp_path):
    a, b = table_name_of("optimized", tmp_path / "w1"), table_name_of("optimized", tmp_path / "w2")
    assert a != b and a.startswith("ccf_optimized_") and b.startswith("ccf_optimized_")
    assert table_name_of("baseline-mor", tmp_path / "w1").startswith("ccf_baseline_mor_")
    assert table_name_of("optimized", tmp_path / "w1" / "." / "") == a  # same folder
