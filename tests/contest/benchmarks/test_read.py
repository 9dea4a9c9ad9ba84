"""`contest bench read`: every variant timed on one real table, results recorded and
rendered."""

from __future__ import annotations

from contest.benchmarks.read import ReadBench, measure, variants
from contest.data.generator import generate
from contest.sitting import Results


def test_variants_cover_default_contest_and_each_operator():
    names = list(variants())
    assert names[:2] == ["default (UseLast)", "contest operators"]
    assert any(n.startswith("SumAll only") for n in names)


def test_read_bench_runs_every_variant_and_writes_results(spark, pg, cfg, tmp_path):
    data = tmp_path / "data"
    generate(data, 0.0002, seed=4, progress=False)
    res = measure(spark, pg, cfg, data, repeat=1, say=lambda _: None)
    assert res["rows"] == 6000 and set(res["variants"]) == set(variants())
    assert res["variants"]["default (UseLast)"]["vs_default"] == 1.0
    assert all(v["median_s"] > 0 for v in res["variants"].values())
    results = Results(tmp_path / "results", ReadBench.stem)
    results.append([{**res, "scale": 0.0002}, {**res, "scale": 0.0002, "repeat": 7}])
    text = ReadBench().publish(results).read_text()
    assert "contest operators" in text
    assert text.count("## 6,000 rows (0.0002 scale)") == 1 and "7 rounds" in text  # newest
