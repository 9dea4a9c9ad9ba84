"""`contest bench compact`: reads before and after compaction both exact, one file per
bucket after, results rendered."""

from __future__ import annotations

import pytest

from contest.benchmarks.compact import CompactBench, measure
from contest.data.batches import discover
from contest.data.generator import generate
from contest.data.oracle import expected_result
from contest.sitting import Results

pytestmark = [pytest.mark.spark, pytest.mark.pg]


def test_compact_bench_reads_exact_before_and_after(spark, pg, cfg, tmp_path):
    data = tmp_path / "data"
    generate(data, 0.0002, seed=5, progress=False)
    expected = tmp_path / "expected.parquet"
    expected_result(discover(data), expected)
    res = measure(spark, pg, cfg, data, expected, repeat=1, say=lambda _: None)
    assert res["rows"] == 6000
    assert res["files_before"] > res["files_after"] == cfg.table.hash_buckets
    assert res["files_per_bucket_after"] == 1.0 < res["files_per_bucket_before"]
    assert len(res["read_before_s"]) == len(res["read_after_s"]) == 1
    results = Results(tmp_path / "results", CompactBench.stem)
    results.append([{**res, "scale": 0.0002}])
    text = CompactBench().publish(results).read_text()
    assert f"{res['files_before']} ({res['files_per_bucket_before']})" in text
    assert f"{res['speedup']}x" in text
