"""`user_folders` for real: a killed read and the read again beside a user's
`.result.*` folders leave every one of the user's files and an exact result."""

from __future__ import annotations

import time

import pytest

from contest.trials.faults.checks import tree_state
from contest.trials.faults.user_folders import (
    USER_FOLDERS,
    age_tool_leftovers,
    make_user_folders,
    user_folders,
)


def test_user_folders_are_named_like_the_tools_and_old(tmp_path):
    folders = make_user_folders(tmp_path / "result")
    assert [d.name for d in folders] == [f".result.{s}" for s in USER_FOLDERS]
    assert all(time.time() - d.stat().st_mtime > 86400 for d in folders)
    assert all(len(tree_state(d)) == 3 for d in folders)
    tool = tmp_path / ".result.staging-0123abcd"
    tool.mkdir()
    (tool / "_CONTEST_STAGING").write_text("{}\n")
    age_tool_leftovers([tool])
    assert time.time() - (tool / "_CONTEST_STAGING").stat().st_mtime > 1000


@pytest.mark.slow
def test_user_folders_one_trial(fault_ctx):
    o = user_folders(fault_ctx, 1)
    assert o.not_run is None, o.not_run
    d = o.details[0]
    assert d["again_exit"] == 0 and d["exact"] and d["user_files_changed"] == []
    assert d["leftovers_after_again"] == [] and o.orphans_left == 0
    assert o.trials == 1 and o.destroyed == 0 and o.not_one_line == 0
    assert o.recovered == 1 and o.goal_met
    base = fault_ctx.root / "user-folders"
    for s in USER_FOLDERS:
        assert (base / f".result.{s}" / "sub" / "data.csv").is_file()
