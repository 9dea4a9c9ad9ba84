"""The smoke pipeline against the real Spark, PostgreSQL and LakeSoul native reader."""

from contest.smoke import EXPECTED, run_smoke


def test_smoke_pipeline_exact_rows(cfg, pg, spark):
    result = run_smoke(cfg, table_name="smoke_test")
    assert result["rows"] == EXPECTED
    assert result["correct"]
    # LakeSoul's own reader (PyPI lakesoul, native, no JVM) reads our commits.
    assert result["native_reader_keys"] == ["k1", "k2", "k3", "k4", "k5"]
    assert len(result["commits"]) == 2
