"""`contest bench`: one command per registered benchmark with its declared options,
`contest meta bench` the same as `contest bench replay`, and a bad option one line
before any work."""

from __future__ import annotations

import argparse

import pytest

from contest.benchmarks.registry import BENCHMARKS
from contest.cli.main import build_parser, main
from contest.errors import EXIT_USAGE


def _sub(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[name]


def test_the_bench_group_is_generated_from_the_registry_and_meta_bench_is_replay():
    parser = build_parser()
    bench = _sub(parser, "bench")
    for name, b in BENCHMARKS.items():
        flags = {o for a in _sub(bench, name)._actions for o in a.option_strings}
        assert {o.flag for o in b.all_options()} <= flags, name
    new = parser.parse_args(["bench", "replay", "--commits", "10,20"])
    old = parser.parse_args(["meta", "bench", "--commits", "10,20"])
    assert new.benchmark == old.benchmark == "replay" and new.commits == old.commits


@pytest.mark.parametrize(
    "argv, message",
    [
        (["bench", "read", "--repeat", "0"], "--repeat must be at least 1, got 0"),
        (["bench", "compact", "--scale", "-1"], "--scale must be positive, got -1.0"),
        (["bench", "duckdb", "--scale", "1", "--data", "d"], "give --data or --scale"),
        (
            ["bench", "duckdb", "--duckdb-variant", "half"],
            "--duckdb-variant must be one of equal, oracle, got half",
        ),
        (["bench", "scale", "--scales", "1,x"], "--scales: not a list of numbers"),
        (["bench", "faults", "--only", "kill_all"], "unknown experiment kill_all"),
        (["bench", "faults", "--read-kills", "-1"], "--read-kills must be at least 0"),
        (["bench", "commits", "--writers", "0"], "--writers must be at least 1"),
        (["meta", "bench", "--commits", "0"], "--commits: give positive history sizes"),
    ],
)
def test_bad_options_fail_in_one_line_before_any_work(argv, message, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path / "out")]) == EXIT_USAGE
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not (tmp_path / "out").exists()
