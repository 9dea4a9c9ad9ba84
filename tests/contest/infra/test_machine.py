"""The machine's state around timed jobs: id, load, CPU steal, the checkout's commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from contest.infra.machine import (
    Sample,
    busy_between,
    cpu_idle_ticks,
    cpu_ticks,
    git_state,
    machine_id,
    steal_between,
)


def test_machine_id_is_stable_and_file_name_safe(tmp_path):
    etc = tmp_path / "machine-id"
    etc.write_text("0123456789abcdef\n")
    a, b = machine_id(etc), machine_id(etc)
    host, digest = a.rsplit("-", 1)
    assert a == b and "/" not in a and host and len(digest) == 8 and int(digest, 16) >= 0
    etc.write_text("fedcba9876543210\n")
    assert machine_id(etc) != a  # another machine with the same host name


def test_steal_from_proc_stat(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 800 10 0 0 40 0 0\ncpu0 1 2 3\n")
    assert cpu_ticks(stat) == (40, 1000)
    assert steal_between((40, 1000), (60, 1200)) == 0.1
    assert steal_between((40, 1000), (40, 1000)) is None
    assert cpu_ticks(tmp_path / "absent") is None
    s = Sample.take(0.05)
    assert s.steal is None or 0 <= s.steal <= 1
    assert s.cpu_busy is None or 0 <= s.cpu_busy <= 1


def test_busy_share_from_proc_stat(tmp_path):
    stat = tmp_path / "stat"
    stat.write_text("cpu  100 0 50 800 10 0 0 40 0 0\n")
    a = cpu_idle_ticks(stat)
    assert a == (810, 1000)
    stat.write_text("cpu  250 0 100 850 10 0 0 40 0 0\n")  # 200 of 250 new jiffies busy
    assert busy_between(a, cpu_idle_ticks(stat)) == 0.8
    assert busy_between(a, a) is None and cpu_idle_ticks(tmp_path / "absent") is None


def test_git_state_sees_a_dirty_tree(tmp_path):
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    assert git_state(tmp_path) == ("", None)
    git("init", "-q")
    (tmp_path / "f").write_text("1")
    git("add", "f")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x")
    commit, dirty = git_state(tmp_path)
    assert len(commit) >= 7 and dirty is False
    # A benchmark's own records under results/ (even asked from a subfolder): clean.
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.jsonl").write_text("1")
    git("add", "results/r.jsonl")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "y")
    commit = git_state(tmp_path)[0]
    (tmp_path / "results" / "r.jsonl").write_text("2")
    (tmp_path / "sub").mkdir()
    assert git_state(tmp_path) == (commit, False)
    assert git_state(tmp_path / "sub") == (commit, False)
    Path(tmp_path / "f").write_text("2")
    assert git_state(tmp_path) == (commit, True)
    assert git_state(tmp_path / "sub") == (commit, True)
