"""Each registry is the only list: a throwaway entry added to it is found in every list
that names its kind (the CLI's commands and help, the reference pages). The formats'
registry has its own such test (tests/contest/peers/test_registry.py's toy format), and
so have the results files (tests/contest/dashboard/test_dashboard_records.py)."""

from __future__ import annotations

from typing import ClassVar

import contest.data.workload
from contest.benchmarks import registry
from contest.cli import reference
from contest.cli.main import build_parser
from contest.peers import registry as peers
from contest.sitting import Benchmark
from contest.trials.interop import Family, cells, families


class ThrowawayBench(Benchmark):
    name: ClassVar[str] = "throwaway"
    stem: ClassVar[str] = "throwaway"
    summary: ClassVar[str] = "a benchmark that exists for one test"
    description: ClassVar[str] = "A benchmark that exists for one test."


def _help(*path: str) -> str:
    parser = build_parser()
    for found, sub in reference.commands(parser):
        if found == path:
            # argparse wraps a line after a hyphen: "cdc-\ntrickle" is read back whole.
            return " ".join(reference.help_text(sub).split()).replace("- ", "-")
    raise AssertionError(f"no command {' '.join(path)}")


def test_a_benchmark_added_to_the_registry_is_a_command_with_its_page(monkeypatch):
    monkeypatch.setitem(registry.BENCHMARKS, ThrowawayBench.name, ThrowawayBench)
    assert "a benchmark that exists for one test" in _help("bench")
    assert "A benchmark that exists for one test." in _help("bench", "throwaway")
    assert "contest bench throwaway" in reference.commands_page()
    assert registry.benchmark("throwaway").stem == "throwaway"


def test_a_workload_shipped_with_the_package_is_named_in_every_workload_option(monkeypatch):
    shipped = contest.data.workload.named()
    monkeypatch.setattr(contest.data.workload, "named", lambda: [*shipped, "throwaway"])
    for command in (("evaluate",), ("compare",), ("workload", "run")):
        text = _help(*command)
        assert "throwaway" in text and all(name in text for name in shipped), command


THROWAWAY_FORMAT = peers.FormatFamily("throwaway", "Throwaway Format", rank=99)
THROWAWAY_SPARK = peers.Implementation(
    name="throwaway",
    table_format="Throwaway 0.1",
    runs_on="Spark (a throwaway)",
    strategies=(
        peers.Strategy(
            "throwaway-merge",
            {"peer.format": "throwaway"},
            interop=peers.Interop(writes=True, reads=True, compacted=True),
        ),
        peers.Strategy("throwaway-dv", {"peer.format": "throwaway"}),  # no part
    ),
    family=THROWAWAY_FORMAT,
)
THROWAWAY_READER = peers.Implementation(
    name="throwaway-rs",
    table_format="Throwaway (its Rust library)",
    runs_on="a Python process",
    runtime=peers.NATIVE,
    family=THROWAWAY_FORMAT,
    interop=peers.Interop(reads=True),
)


def test_a_format_added_to_the_registry_is_a_family_of_the_interop_matrix():
    before = families()
    for impl in (THROWAWAY_SPARK, THROWAWAY_READER):
        peers.register(impl)
    try:
        assert families() == (
            *before,
            Family(
                "throwaway",
                "Throwaway Format",
                ("throwaway-merge",),
                ("throwaway-merge", "throwaway-rs"),
                ("throwaway-merge",),
            ),
        )
        assert "throwaway" in _help("bench", "interop")  # --formats names it
        assert ("throwaway-merge", "throwaway-rs") in {(w, r) for _, w, r, _ in cells(families())}
    finally:
        for impl in (THROWAWAY_SPARK, THROWAWAY_READER):
            peers.unregister(impl.name)
    assert families() == before
