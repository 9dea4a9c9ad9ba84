"""Timed processes: exit code, wall time, peak memory of the whole process tree."""

from __future__ import annotations

import sys

from contest.infra.proc import run_timed, tree_rss

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
