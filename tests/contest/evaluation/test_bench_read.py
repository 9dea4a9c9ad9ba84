"""`contest bench read`: every variant timed on one real table, results written."""

from __future__ import annotations

from contest.data.generator import generate
from contest.evaluation.bench_read import run_read_bench, variants, write_read_results


def test_variants_cover_default_contest_and_each_operator():
    names = list(variants())
    assert names[:2] == ["default (UseLast)", "contest operators"]
    assert any(n.startswith("SumAll only") for n in names)


def test_read_bench_runs_every_variant_and_writes_results(spark, pg, cfg, tmp_path):
    data = tmp_path / "data"
    generate(data, 0.0002, seed=4, progress=False)
    res = run_read_bench(spark, pg, cfg, data, repeat=1, say=lambda _: None)
    assert res["rows"] == 6000 and set(res["variants"]) == set(variants())
    assert res["variants"]["default (UseLast)"]["vs_default"] == 1.0
    assert all(v["median_s"] > 0 for v in res["variants"].values())
    out = write_read_results([{**res, "scale": 0.0002}], tmp_path / "results")
    assert "contest operators" in out.read_text()
