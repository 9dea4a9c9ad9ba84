"""`contest bench costs`: the page from a sitting's records (lines, crossovers, measured
points, timelines), and a real sitting at two tiny scales whose every result is exact
and whose every Spark job, the bare starts' too, carries its timeline."""

import json

import pytest

from contest.benchmarks.costs.page import lines, render, runs
from contest.cli.main import main
from contest.results.costs import CostRecord
from tests.support.config import cli

SITTING = "2026-12-07T00:00:00Z"


def _record(contender, scale, rnd, job, seconds, phases=None, correct=True):
    return CostRecord(
        sitting=SITTING,
        contender=contender,
        scale=scale,
        rows=int(30_000_000 * scale),
        cores=2,
        round=rnd,
        job=job,
        seconds=seconds,
        correct=correct,
        phases=phases or {},
    )


def _sitting():
    """optimized: 8 s fixed + 1 s per M rows in each job; a library: 1 s + 4 s per M
    rows in one job; the bare starts 6 s a job; each scale's three rounds spread about
    those figures."""
    out = []
    for scale in (0.001, 0.01, 0.1, 1.0):
        m = 30 * scale
        for rnd, noise in ((1, 0.98), (2, 1.0), (3, 1.03)):
            for job in ("write", "read"):
                phases = {"launch": 0.5, "jvm": 1.0, "tasks": 1.0} if scale == 0.001 else None
                out.append(_record("optimized", scale, rnd, job, (8 + m) * noise, phases))
            out.append(_record("library", scale, rnd, "merge", (1 + 4 * m) * noise))
            for job in ("write", "read"):  # the bare starts: 6 s each, whatever the rows
                out.append(_record("spark-start", scale, rnd, job, 6 * noise))
    out.append(_record("library", 1.0, 4, "merge", 1.0, correct=False))  # never counted
    return out


def test_the_page_fits_each_job_and_says_where_optimized_wins():
    records = _sitting()
    fitted = lines(records)
    assert fitted[("optimized", "write")].fixed_s == pytest.approx(8, rel=0.02)
    assert fitted[("optimized", "whole")].per_million_s == pytest.approx(2, rel=0.02)
    assert fitted[("library", "merge")].per_million_s == pytest.approx(4, rel=0.02)
    assert all(s > 5 for rows, s in runs(records)["library"] if rows == 30_000_000)
    page = render(records)
    # 16 + 2m = 1 + 4m at m = 7.5 M rows: scale 0.25.
    assert "| library | from scale 0.25 |" in page
    assert "| spark-start |" not in page.split("### Where")[1].split("###")[0]  # a floor
    assert "optimized's fixed part is 16.0 s, 4.0 s above two bare Spark starts" in page
    assert "| optimized | write | 8.00 | 1.000 |" in page
    assert "| 1 | 30,000,000 | 76.0 [74.5-78.3] (3) | 121.0 [118.6-124.6] (3) |" in page
    assert "| optimized | write | 8.03 | 0.50 | 1.00 | - | - | - | 1.00 |" in page


def test_no_sitting_yet():
    assert "No sitting yet." in render([])


@pytest.mark.spark
@pytest.mark.pg
@pytest.mark.slow
def test_a_sitting_at_two_scales_is_exact_and_every_job_has_its_timeline(cfg, pg, tmp_path):
    results = tmp_path / "results"
    contenders = "optimized,duckdb,spark-start"
    argv = ["--scales", "0.0005,0.001", "--contenders", contenders, "--rounds", "1"]
    code = main(cli(cfg, "bench", "costs", *argv, "--cores", "2", "--results", str(results)))
    assert code == 0
    rows = [json.loads(line) for line in (results / "costs.jsonl").read_text().splitlines()]
    assert {(r["contender"], r["job"], r["scale"]) for r in rows} == {
        (name, job, scale)
        for scale in (0.0005, 0.001)
        for name, job in (
            ("optimized", "write"),
            ("optimized", "read"),
            ("duckdb", "merge"),
            ("spark-start", "write"),
            ("spark-start", "read"),
        )
    }
    assert all(r["correct"] for r in rows)
    assert {r["rows"] for r in rows if r["scale"] == 0.001} == {30_000}
    for r in rows:
        if r["contender"] != "duckdb":  # a Spark job's timeline, the bare start's too
            assert r["phases"]["tasks"] > 0 and r["phases"]["jvm"] > 0
            assert sum(r["phases"].values()) == pytest.approx(r["seconds"], abs=0.1)
    page = (results / "costs.md").read_text()
    assert "| optimized | whole |" in page and "| duckdb | merge |" in page
    assert "| spark-start | whole |" in page
    assert (results / "costs.png").stat().st_size > 0
