"""Every benchmark, by its command name: `contest bench <name>` is generated from here.
Adding one is a module with a `Benchmark` subclass and a line below."""

from __future__ import annotations

from contest.errors import UsageError
from contest.evaluation.bench.base import Benchmark
from contest.evaluation.bench.commits import CommitsBench
from contest.evaluation.bench.compact import CompactBench
from contest.evaluation.bench.duckdb import DuckDBBench
from contest.evaluation.bench.faults.bench import FaultsBench
from contest.evaluation.bench.read import ReadBench
from contest.evaluation.bench.replay import ReplayBench
from contest.evaluation.bench.scale import ScaleBench
from contest.evaluation.bench.stream import StreamBench

BENCHMARKS: dict[str, type[Benchmark]] = {
    b.name: b
    for b in (
        ReadBench,
        CompactBench,
        FaultsBench,
        DuckDBBench,
        ScaleBench,
        CommitsBench,
        ReplayBench,
        StreamBench,
    )
}


def benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]()
    except KeyError:
        raise UsageError(
            f"unknown benchmark {name!r}: choose from {', '.join(BENCHMARKS)}"
        ) from None
