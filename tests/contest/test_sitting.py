"""The one shape of a benchmark: options declared once and checked in one line, records
appended and rendered as they come, sittings told apart (old lines too)."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.metadata import version

import pytest

from contest.cli.bench import add_option
from contest.errors import DataError, UsageError
from contest.infra.machine import cpu_model, machine_id
from contest.results.record import Record
from contest.results.registry import ResultsFile
from contest.results.stamp import Stamp
from contest.sitting import (
    REPEAT,
    RESULTS,
    Benchmark,
    Results,
    Sitting,
    newest_per,
    sittings,
)


@dataclass(frozen=True, kw_only=True)
class Count(Record):
    """The record of the counting benchmark: a round and its sitting."""

    round: int
    sitting: str | None = None


COUNTS = ResultsFile("counting", "counting.jsonl", "Counting", Count.from_dict)


class Counting(Benchmark):
    """A benchmark that measures nothing: each round records its number."""

    name = "counting"
    stem = "counting"
    summary = description = "counts"
    options = (REPEAT.but(default=2),)

    def run(self, sitting: Sitting) -> bool:
        for i in range(sitting.options.repeat):
            sitting.record({"round": i + 1})
        return True

    def render(self, records: Sequence[Count]) -> str:
        return "# counting\n" + "".join(f"- {r.round} ({r.sitting})\n" for r in records)


def test_options_are_declared_once_and_varied_per_benchmark():
    parser = argparse.ArgumentParser()
    for opt in Counting.all_options():
        add_option(parser, opt)
    args = parser.parse_args([])
    assert args.repeat == 2 and args.results is None and REPEAT.default == 3
    assert Counting.all_options()[-1] is RESULTS
    assert parser.parse_args(["--out", "x"]).results == "x"  # the old spelling


def test_a_bad_option_value_is_one_usage_error():
    with pytest.raises(UsageError, match="--repeat must be at least 1, got 0"):
        Counting().check(argparse.Namespace(repeat=0, out=None))
    Counting().check(argparse.Namespace(repeat=1, out=None))


def test_cores_above_the_machine_are_refused_for_every_benchmark():
    """`--cores` is checked once for every benchmark that takes it: local[N] above the
    machine's cores would divide the score by cores it has not got."""
    over = (os.cpu_count() or 1) + 1
    with pytest.raises(UsageError, match=f"--cores {over}: this machine has"):
        Counting().check(argparse.Namespace(repeat=1, cores=over))
    Counting().check(argparse.Namespace(repeat=1, cores=over, master="spark://h:7077"))
    Counting().check(argparse.Namespace(repeat=1, cores=1))


def test_records_are_appended_stamped_and_rendered_as_they_come(cfg, tmp_path):
    results = Results(tmp_path, "counting", COUNTS)
    b = Counting()
    first = Sitting(b, argparse.Namespace(repeat=2, out=None), cfg, results, started="s1")
    assert b.execute(first)
    second = Sitting(b, argparse.Namespace(repeat=1, out=None), cfg, results, started="s2")
    assert b.execute(second)
    lines = [json.loads(x) for x in results.jsonl.read_text().splitlines()]
    stamps = [line.pop("stamp") for line in lines]
    assert lines == [
        {"round": 1, "sitting": "s1"},
        {"round": 2, "sitting": "s1"},
        {"round": 1, "sitting": "s2"},
    ]
    # Every row carries the machine, the commit and the noise of its own interval.
    typed = [Stamp.from_dict(s) for s in stamps]
    assert {s.machine_id for s in typed} == {machine_id()}
    assert all(s.git_commit and s.outside_share is not None for s in typed)
    assert all(s.interval_s is not None and s.interval_s >= 0 for s in typed)
    # ... and the full disclosure a peer sitting's runs carry: CPU, every library's
    # version, the effective configuration (no password).
    assert all(s.cpu_model == cpu_model() for s in typed)
    libraries = [(s.environment or {}).get("libraries") or {} for s in typed]
    assert all(lib.get("duckdb") == version("duckdb") for lib in libraries)
    assert all((s.config or {}).get("work_dir") == cfg.work_dir for s in typed)
    assert all("password" not in (s.config or {}).get("pg", {}) for s in typed)
    page = results.md.read_text()
    assert page.startswith("# counting\n- 1 (s1)\n- 2 (s1)\n- 1 (s2)\n\n## Full disclosure")
    # Each sitting's page linked, the one busy rule named.
    assert "[disclosure/counting-s1.md](disclosure/counting-s1.md)" in page
    assert "[disclosure/counting-s2.md](disclosure/counting-s2.md)" in page
    assert "busy by the per-job noise" in page


def test_a_row_its_record_refuses_is_not_written(tmp_path):
    results = Results(tmp_path, "counting", COUNTS)
    with pytest.raises(DataError, match="counting: a row that is not a record: 'round' is 'x'"):
        results.append([{"round": 1}, {"round": "x"}])
    assert not results.jsonl.exists()  # nothing of the batch half-written
    assert [r.round for r in results.append([{"round": 2}])] == [2]


def test_sittings_group_new_lines_by_stamp_and_old_ones_by_a_rule():
    old = [Count(round=1), Count(round=2), Count(round=1)]
    new = [Count(round=1, sitting="a"), Count(round=2, sitting="a"), Count(round=1, sitting="b")]
    groups = sittings(old + new, starts=lambda r: r.round == 1)
    assert [len(g) for g in groups] == [2, 1, 2, 1]
    assert sittings([]) == []
    assert newest_per([{"k": 2, "v": 1}, {"k": 1, "v": 2}, {"k": 2, "v": 3}], lambda r: r["k"]) == [
        {"k": 1, "v": 2},
        {"k": 2, "v": 3},
    ]
