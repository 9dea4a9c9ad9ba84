"""The floor of `contest bench duckdb` (contest/benchmarks/duckdb/floor.py): every batch read
once, the result's rows written once, two trivial Spark jobs; the page's ratios over it.
Its parts for real on tiny data; the arithmetic on made records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from contest.benchmarks.duckdb.bench import DuckDBBench, optimized_row, run_floor, variant_settings
from contest.benchmarks.duckdb.floor import io_floor
from contest.benchmarks.duckdb.page import summarize
from contest.data.generator import generate
from contest.errors import UsageError
from contest.results.benchmarks import DuckDBRecord
from contest.results.runs import JobLoad, RunRecord


def test_io_floor_reads_everything_once_and_writes_the_rows_asked(tmp_path: Path) -> None:
    data = tmp_path / "data"
    report = generate(data, 0.0002, seed=3, progress=False)
    out = tmp_path / "out" / "floor.parquet"
    got = io_floor(data, out, threads=2, rows=1234)
    assert got["rows_read"] == report.rows and got["rows_written"] == 1234
    written = pq.ParquetFile(out)
    assert written.metadata.num_rows == 1234
    assert written.metadata.row_group(0).column(0).compression == "UNCOMPRESSED"


def test_io_floor_reads_small_dictionaries_as_such_and_mixes_plain_files(tmp_path: Path) -> None:
    """Columns stored as small dictionaries are read as dictionaries (the least work);
    a batch that stores them plain is cast to the first file's types: the rows written
    are the batches' rows, in order, whatever each file stored."""
    import pyarrow as pa

    from contest.data.batches import discover

    data = tmp_path / "data"
    report = generate(data, 0.0002, seed=3, progress=False)
    files = [b.path for b in discover(data)]
    second = pq.read_table(files[1])
    pq.write_table(second, files[1], use_dictionary=False)  # plain where base-0 is not
    out = tmp_path / "floor.parquet"
    got = io_floor(data, out, threads=2, rows=report.rows)
    assert got["rows_written"] == report.rows
    written = pq.read_table(out)
    assert pa.types.is_dictionary(written.schema.field("city").type)
    expected = pa.concat_tables([pq.read_table(f) for f in files])
    assert (
        written.column("city").cast(pa.string()).to_pylist() == expected.column("city").to_pylist()
    )
    assert written.column("uuid").to_pylist() == expected.column("uuid").to_pylist()


@pytest.mark.parametrize(("statistics", "with_stats"), [("key", {"uuid"}), ("none", set())])
def test_io_floor_writes_the_statistics_the_result_carries(
    tmp_path: Path, statistics: str, with_stats: set[str]
) -> None:
    data = tmp_path / "data"
    generate(data, 0.0002, seed=3, progress=False)
    out = tmp_path / "floor.parquet"
    io_floor(data, out, threads=2, rows=500, statistics=statistics)
    group = pq.ParquetFile(out).metadata.row_group(0)
    columns = [group.column(j) for j in range(group.num_columns)]
    assert {c.path_in_schema for c in columns if c.is_stats_set} == with_stats


@pytest.mark.spark
def test_run_floor_times_the_io_and_two_spark_starts(cfg, tmp_path: Path) -> None:
    data = tmp_path / "data"
    report = generate(data, 0.0002, seed=3, progress=False)
    row = run_floor(cfg, data, 2, 100, tmp_path / "bench", 1)
    assert row["rows"] == report.rows and row["correct"]
    assert row["seconds"] == pytest.approx(row["io_s"] + row["starts_s"], abs=0.01)
    # Two whole spark-submits: each starts a JVM, a session and a Python task.
    assert row["starts_s"] > row["io_s"]
    logs = sorted(p.name for p in (tmp_path / "bench").glob("floor-*.log"))
    assert logs == ["floor-io-1.log", "floor-start-1-1.log", "floor-start-1-2.log"]
    assert not (tmp_path / "bench" / "floor.parquet").exists()  # its output is removed


def test_the_page_gives_each_contender_over_the_floor() -> None:
    def rec(contender: str, rnd: int, seconds: float, **kw: Any) -> DuckDBRecord:
        return DuckDBRecord(
            contender=contender, round=rnd, seconds=seconds, correct=True, sitting="s", **kw
        )

    records = [
        rec("optimized", 1, 40.0, write_s=24.0, read_s=16.0),
        rec(
            "duckdb",
            1,
            34.0,
            peak_process_rss_bytes=3_000_000_000,
            peak_rss_bytes=3_200_000_000,
            parts=6,
        ),
        rec("floor", 1, 20.0, io_s=8.0, starts_s=12.0),
    ]
    s = summarize(records)
    assert s.over_floor == {"optimized": 2.0, "duckdb": 1.7, "floor": 1.0}
    page = DuckDBBench().render(records)
    # A line from before DuckDB ran at its defaults says how it ran then.
    older = "duckdb (capped at the oracle's budget, older sittings; 6 key ranges)"
    assert f"optimized **2.00x (single run)**, {older} **1.70x (single run)**" in page
    assert "| floor | 20.0 | 20.0 (8.0 + 12.0) | 0.00, - | - | True |" in page
    # DuckDB in key ranges is another reference than one query: the page says which.
    assert f"| {older} | 34.0 | 34.0 | 3.00, 3.20 | - | True |" in page
    # A sitting without a floor renders as before.
    assert "Over the floor" not in DuckDBBench().render(records[:2])


def test_the_page_shows_the_newest_sitting_of_each_data_set_with_intervals() -> None:
    def rec(sitting: str, data: str, contender: str, rnd: int, seconds: float) -> DuckDBRecord:
        return DuckDBRecord(
            contender=contender, round=rnd, seconds=seconds, correct=True, sitting=sitting,
            data=data, outside_share=0.02 * rnd,
        )  # fmt: skip

    old = [rec("s1", "own", e, 1, 99.0) for e in ("optimized", "duckdb")]
    own = [rec("s2", "own", "optimized", r, 40.0 + r) for r in (1, 2, 3)]
    own += [rec("s2", "own", "duckdb", r, 30.0 + r) for r in (1, 2, 3)]
    other = [rec("s3", "pyarrow", "optimized", r, 50.0) for r in (1, 2, 3)]
    other += [rec("s3", "pyarrow", "duckdb", r, 25.0 * r) for r in (1, 2, 3)]
    page = DuckDBBench().render(old + own + other)
    # Newest first, one section a data set, the older sitting of `own` not shown.
    assert page.index("## `pyarrow`") < page.index("## `own`") and "99.0" not in page
    assert "| optimized | 42.0 [41.0-43.0] n=3 | 41.0 (" not in page  # no write/read split
    assert "| optimized | 42.0 [41.0-43.0] n=3 | 41.0, 42.0, 43.0 | 0.00, - | 6% | True |" in page
    # DuckDB / optimized round by round: 31/41, 32/42, 33/43 (all below 1).
    assert "**0.76x [0.76-0.77] n=3 (75%)**" in page
    # pyarrow: 25/50, 50/50, 75/50: the interval crosses 1.
    assert "**1.00x [0.50-1.50] n=3 (75%) ~**" in page


def test_a_variant_of_optimized_is_a_contender_of_its_own_on_the_page() -> None:
    def rec(contender: str, seconds: float, variant: str | None = None) -> DuckDBRecord:
        return DuckDBRecord(
            contender=contender,
            round=1,
            seconds=seconds,
            correct=True,
            sitting="s",
            variant=variant,
        )

    spec = "write.batch_piece_rows=0&spark.cds=false"
    assert variant_settings(spec) == {"write.batch_piece_rows": "0", "spark.cds": "false"}
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        variant_settings("write.batch_piece_rows")
    records = [rec("optimized", 40.0), rec("optimized", 44.0, spec), rec("duckdb", 34.0)]
    s = summarize(records)
    assert list(s.runs) == ["optimized", f"optimized [{spec}]", "duckdb", "floor"]
    assert s.median_s["optimized"] == 40.0 and s.ratio_duckdb_to_optimized == 0.85
    page = DuckDBBench().render(records)
    assert f"| optimized [{spec}] | 44.0 | 44.0 | 0.00, - | - | True |" in page
    assert f"optimized [{spec}]: optimized's seconds over its, round by round" in page
    assert "the variant is faster): **0.91x (single run)**" in page


def test_a_failed_contender_is_shown_failed_and_left_out_of_medians_and_ratios() -> None:
    def rec(contender: str, seconds: float, correct: bool = True, **kw: str) -> DuckDBRecord:
        return DuckDBRecord(
            contender=contender, round=1, seconds=seconds, correct=correct, sitting="s", **kw
        )

    error = "DuckDB merge exited 1: IO Error: No space left on device (log d.log)"
    records = [rec("optimized", 40.0), rec("duckdb", 300.0, False, error=error)]
    s = summarize(records)
    assert s.median_s["duckdb"] is None and s.ratio_duckdb_to_optimized is None
    page = DuckDBBench().render(records)
    older = "duckdb (capped at the oracle's budget, older sittings)"
    assert f"| {older} | - | failed after 300.0 ({error}) | 0.00, - | - | False |" in page
    assert "DuckDB / optimized" not in page


def test_a_failed_optimized_run_carries_its_error_to_the_page() -> None:
    error = "read job exited 1: Python worker exited unexpectedly (crashed)"
    ok = optimized_row(1, RunRecord(strategy="optimized", write_s=2.0, read_s=3.0, correct=True))
    bad = RunRecord(strategy="optimized", write_s=2.0, read_s=9.0, correct=False, error=error)
    row = optimized_row(1, bad)
    assert "error" not in ok and row["error"] == error and row["seconds"] == 11.0
    page = DuckDBBench().render([DuckDBRecord(**row, sitting="s")])
    assert f"| optimized | - | failed after 11.0 ({error}) |" in page


def test_optimized_rows_carry_the_noise_of_their_jobs() -> None:
    """The page judges optimized by the noise during its own jobs (the highest of write
    and read), not by its stamp's window; a record without it shows the window."""

    load = {"write": JobLoad(outside_share=0.03), "read": JobLoad(outside_share=0.12)}
    rec = RunRecord(strategy="optimized", write_s=2.0, read_s=3.0, correct=True, load=load)
    row = optimized_row(1, rec)
    assert row["outside_share"] == 0.12
    assert optimized_row(1, RunRecord(strategy="optimized", write_s=1.0))["outside_share"] is None
    page = DuckDBBench().render([DuckDBRecord(**row, sitting="s")])
    assert "| 12% busy | True |" in page
