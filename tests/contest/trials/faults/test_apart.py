"""`evaluations_apart` for real: two `contest evaluate` started at the same moment in
separate work folders, both correct, each on its own table, neither touched."""

from __future__ import annotations

import pytest

from contest.trials.faults.apart import evaluations_apart, last_record, touched


def test_touched_counts_commits_and_files_that_changed():
    before = {"path": "p", "commits": {"0": "a", "1": "b"}, "files": {"x": (1, 1), "y": (2, 2)}}
    same = {
        "path": "p",
        "commits": {"0": "a", "1": "b", "2": "c"},
        "files": {"x": (1, 1), "y": (2, 2)},
    }
    assert touched(before, same) == (0, 0)
    other = {"path": "p", "commits": {"0": "z"}, "files": {"x": (1, 5)}}
    assert touched(before, other) == (2, 2)
    assert touched(before, None) == (2, 2) and touched(None, other) == (0, 0)
    assert last_record('log\n{"correct": true}\n') == {"correct": True}
    assert last_record("") == {} and last_record("not json") == {}


@pytest.mark.slow
def test_evaluations_apart_same_moment(fault_ctx):
    o = evaluations_apart(fault_ctx, 1)
    d = o.details[0]
    assert d["start"] == "same moment" and d["exit_codes"] == [0, 0], d
    assert d["correct"] == [True, True] and d["own_tables"] == [True, True]
    assert d["tables"][0] != d["tables"][1] and min(d["commits"]) > 0
    assert o.lost == 0 and o.destroyed == 0 and o.not_one_line == 0
    assert o.recovered == 1 and o.goal_met
