"""`nested_tables` for real: nested folders refused in one line naming both tables;
vacuum, replace and compact of one table leave the other's files and a user's intact."""

from __future__ import annotations

import pytest

from contest.trials.faults.nested import nested_tables, vacuumed


def test_vacuum_json_gives_the_deleted_count():
    assert vacuumed('{"table": "t", "orphan_files": 7, "deleted": []}') == 7
    assert vacuumed("not json") == 0


@pytest.mark.slow
def test_nested_tables_one_trial(fault_ctx):
    o = nested_tables(fault_ctx, 1)
    assert o.not_run is None, o.not_run
    assert o.trials == 1 and len(o.details) == 1
    d = o.details[0]
    for kind in ("inside", "holding"):
        r = d["refusals"][kind]
        assert r["exit"] != 0 and r["line"] and r["names_both"] and not r["created"], r
    assert d["exit_codes"] == {"compact": 0, "vacuum": 0, "replace": 0}
    assert d["other_table_files"] > 0 and d["other_table_files_changed"] == []
    assert d["user_files_changed"] == [] and d["replaced_table_versions"] == [0, 1, 2]
    assert o.failures_observed == 2 and o.not_one_line == 0
    assert o.lost == 0 and o.destroyed == 0 and o.recovered == 1 and o.goal_met
    user = fault_ctx.root / "nested" / "sib" / "nt_a" / "notes" / "mine.csv"
    assert user.read_text() == "a user's file: mine.csv\n"
