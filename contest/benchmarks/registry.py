"""Every benchmark, by its command name: `contest bench <name>` is generated from here.
Adding one is a module with a `Benchmark` subclass and a line below."""

from __future__ import annotations

from contest.benchmarks.commits import CommitsBench
from contest.benchmarks.compact import CompactBench
from contest.benchmarks.costs.bench import CostsBench
from contest.benchmarks.duckdb.bench import DuckDBBench
from contest.benchmarks.peers.bench import PeersBench
from contest.benchmarks.read import ReadBench
from contest.benchmarks.replay import ReplayBench
from contest.benchmarks.scale import ScaleBench
from contest.benchmarks.stream.bench import StreamBench
from contest.errors import UsageError
from contest.sitting import Benchmark
from contest.trials.faults.bench import FaultsBench
from contest.trials.interop import InteropBench

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
        PeersBench,
        InteropBench,
        CostsBench,
    )
}


def benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]()
    except KeyError:
        raise UsageError(
            f"unknown benchmark {name!r}: choose from {', '.join(BENCHMARKS)}"
        ) from None
