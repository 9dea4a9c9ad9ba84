"""Every benchmark is found through the registry, under a name and a results file of
its own."""

from __future__ import annotations

import pytest

from contest.benchmarks.registry import BENCHMARKS, benchmark
from contest.errors import UsageError


def test_registry_names_and_files_are_unique():
    assert list(BENCHMARKS) == [
        "read",
        "compact",
        "faults",
        "duckdb",
        "scale",
        "commits",
        "replay",
        "stream",
        "peers",
        "interop",
        "costs",
    ]
    stems = [b.stem for b in BENCHMARKS.values()]
    assert len(set(stems)) == len(stems)
    assert all(b.summary and b.description for b in BENCHMARKS.values())
    with pytest.raises(UsageError, match="unknown benchmark 'x'"):
        benchmark("x")
