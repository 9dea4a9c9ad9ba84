"""`kept_session`: one application's commands share the session the first of them
started (a workload lane's long-lived application), stopped when the block ends, not
by a command."""

from __future__ import annotations

import json

import pytest

from tests.support.lakesoul import run_module

pytestmark = pytest.mark.spark


def test_the_second_command_runs_in_the_first_commands_session(cfg, tmp_path):
    proc = run_module("tests.support.kept_session_child", cfg, [], tmp_path, timeout=600)
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    first, second = seen["ids"]
    assert first == second and seen["running"] and seen["rows"] == 3
    assert seen["left"] is False  # stopped with the block
