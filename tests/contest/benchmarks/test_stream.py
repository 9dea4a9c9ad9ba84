"""`contest bench stream` on tiny data: the query killed with kill -9 and restarted, the
replay, a new checkpoint refused, a feed rate measured; every case exact against the
oracle; the results rendered."""

from __future__ import annotations

import dataclasses

import pytest

from contest.benchmarks.stream.bench import StreamBench, measure
from contest.sitting import Results

# Child processes run `contest stream run` (Spark, PostgreSQL): marked here.
pytestmark = [pytest.mark.spark, pytest.mark.pg, pytest.mark.slow]


def test_stream_bench_cases_are_exact_and_rendered(pg, cfg, tmp_path):
    cfg = dataclasses.replace(cfg, work_dir=str(tmp_path))
    parts = iter(range(1, 10))
    records = measure(
        cfg, pg, trials=1, rows=200, rates=[2.0], rate_files=3, cores=1, seed=3, say=print,
        stamp=lambda: {"stamp": {"part": next(parts)}},
    )  # fmt: skip
    faults = [r for r in records if r["kind"] == "fault"]
    rates = [r for r in records if r["kind"] == "freshness"]
    assert [r["exact"] for r in records] == [True] * 4, records
    # Stamped as each part ends: the three fault cases one part, the feed rate the next.
    assert [r["stamp"]["part"] for r in records] == [1, 1, 1, 2]
    kill, replay, new = faults
    assert kill["lost_files"] == 0 and kill["double_commits"] == 0
    assert kill["files_consumed"] == kill["files_fed"] > 0
    assert replay["batches_replayed"] == 1 and replay["double_commits"] == 0
    assert new["double_commits"] == 0
    assert rates[0]["files"] == rates[0]["visible"] == 3
    assert rates[0]["freshness_p50_s"] <= rates[0]["freshness_p99_s"]
    results = Results(tmp_path / "results", StreamBench.stem)
    results.append([{**r, "sitting": "s1", "stamp": None} for r in records])
    text = StreamBench().publish(results).read_text()
    assert "| lakesoul (harness) | kill -9 at random moments" in text
    assert "| 2 × 200 | 3 |" in text


def test_zero_trials_and_rate_files_run_no_part(pg, cfg, tmp_path):
    # --trials 0 --peer-trials 0 --rate-files 0 --meta-batches 0: nothing to run, and no
    # stream folder made (a fault sitting running beside keeps its own).
    cfg = dataclasses.replace(cfg, work_dir=str(tmp_path))
    records = measure(
        cfg, pg, trials=0, rows=200, rates=[2.0], rate_files=0, cores=1, seed=3, say=print,
        formats=("lakesoul", "delta"), peer_trials=0,
    )  # fmt: skip
    assert records == []
    assert not (tmp_path / "bench" / "stream").exists() or not any(
        (tmp_path / "bench" / "stream").iterdir()
    )
