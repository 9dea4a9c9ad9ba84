"""`contest bench scale`: a scale run is exact, frees its batches once written, and the
table gathers the newest row of each scale across invocations."""

from __future__ import annotations

import dataclasses
import json

import pytest

from contest.benchmarks.scale import (
    ScaleBench,
    job_seconds,
    measure,
    newest_per_scale,
    render_table,
    scale_list,
)
from contest.errors import UsageError
from contest.results.benchmarks import ScaleRecord
from contest.sitting import Results


def _row(scale: float, s_per_m: float | None, when: str) -> dict:
    return {
        "scale": scale,
        "rows": int(scale * 30_000_000),
        "cores": 2,
        "correct": s_per_m is not None,
        "write_s": 10.0,
        "read_s": 5.0,
        "rows_per_core_s": 1000.0 if s_per_m else None,
        "write_inprocess_s": 8.0,
        "read_inprocess_s": 3.0,
        "s_per_million_rows": s_per_m,
        "write_peak_process_rss_bytes": 2_000_000_000,
        "read_peak_process_rss_bytes": 1_500_000_000,
        "harness_peak_rss_bytes": None,
        "stored_bytes": 3_000_000_000,
        "files_per_bucket": 12.0,
        "when": when,
    }


def test_job_seconds_takes_the_last_json_line_with_the_key(tmp_path):
    log = tmp_path / "write.log"
    log.write_text('{"wall_s": 1.5}\nnoise\n{"other": 1}\n{"wall_s": 2.25, "x": 1}\ntail\n')
    assert job_seconds(log, "wall_s") == 2.25
    assert job_seconds(log, "seconds") is None
    assert job_seconds(tmp_path / "absent.log", "wall_s") is None


def test_a_failed_write_takes_no_figure_from_an_earlier_scales_read_log(tmp_path):
    """Scale 10's write failed (a full disk): its row must not carry scale 3's read."""
    from contest.benchmarks.scale import scale_row
    from contest.config import load_config
    from contest.results.runs import RunRecord

    cfg = load_config(env={}, overrides={"work_dir": str(tmp_path)})
    logs = tmp_path / "eval" / "logs"
    logs.mkdir(parents=True)
    (logs / "optimized-write.log").write_text('{"wall_s": 266.7}\n')
    (logs / "optimized-read.log").write_text('{"seconds": 49.1}\n')  # scale 3's
    failed = RunRecord("optimized", rows=300_000_000, scale=10.0, write_s=271.5, correct=False)
    row = scale_row(cfg, failed)
    assert row["write_inprocess_s"] == 266.7
    assert row["read_inprocess_s"] is None and row["s_per_million_rows"] is None
    done = dataclasses.replace(failed, read_s=60.0, correct=True, table="")
    assert scale_row(cfg, done)["s_per_million_rows"] == round((266.7 + 49.1) / 300, 3)


def test_a_scale_that_cannot_fit_is_refused_before_it_starts(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    from contest.benchmarks.disk import check_disk, disk_needed
    from contest.config import load_config

    assert 55e9 < disk_needed(10, cached=False, keep_data=False) < 65e9
    assert disk_needed(10, cached=True, keep_data=False) < disk_needed(10, False, False)
    assert disk_needed(1, cached=False, keep_data=True) > disk_needed(1, False, False)
    # The check spills where the table's files were: with them kept it needs more.
    kept = disk_needed(10, cached=True, keep_data=False, keep_table=True)
    assert kept > disk_needed(10, cached=True, keep_data=False)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(100e9, 60e9, 40e9))
    cfg = load_config(env={}, overrides={"work_dir": str(tmp_path / "not" / "yet")})
    check_disk(cfg, 3, cached=False, keep_data=False)  # ~18 GB: fits
    with pytest.raises(UsageError, match="scale 10 needs about 60 GB free .* 40 GB free"):
        check_disk(cfg, 10, cached=False, keep_data=False)


def test_newest_row_per_scale_in_scale_order():
    rows = [_row(3, 1.0, "a"), _row(0.1, 2.0, "b"), _row(3, 1.5, "c")]
    typed = [ScaleRecord.from_dict(r) for r in rows]
    assert [(r.scale, r.when) for r in newest_per_scale(typed)] == [(0.1, "b"), (3, "c")]


def test_outputs_gather_separate_invocations(tmp_path):
    results = Results(tmp_path, ScaleBench.stem)
    results.append([_row(0.1, 2.0, "first"), _row(1, 1.0, "first")])
    ScaleBench().publish(results)
    results.append([_row(10, None, "second"), _row(1, 1.1, "second")])
    md = ScaleBench().publish(results)
    lines = [ln for ln in md.read_text().splitlines() if ln.startswith("| ") and "scale" not in ln]
    assert [ln.split("|")[1].strip() for ln in lines] == ["0.1", "1", "10"]
    assert "| 1.10 |" in lines[1]  # scale 1: the second invocation's row
    assert "| - |" in lines[2] and lines[2].rstrip().endswith("False |")
    assert "2.00 / 1.50 / -" in lines[0]
    assert len((tmp_path / "scale.jsonl").read_text().splitlines()) == 4
    assert (tmp_path / "scale.png").stat().st_size > 0
    assert render_table([]).startswith("# Cost per row against scale")


def test_scales_are_positive_numbers():
    from contest.cli.main import build_parser

    args = build_parser().parse_args(["bench", "scale", "--scales", "0.1, 1", "--scales", "3"])
    assert scale_list(args.scales) == [0.1, 1.0, 3.0]
    with pytest.raises(UsageError, match="--scales: not a list of numbers"):
        build_parser().parse_args(["bench", "scale", "--scales", "0.1,x"])
    for bad in ([], [1.0, -1.0]):
        with pytest.raises(UsageError, match="--scales"):
            scale_list(bad)


@pytest.mark.spark
@pytest.mark.pg
def test_scale_run_is_exact_and_frees_its_batches_after_the_write(cfg, pg, tmp_path):
    cfg = dataclasses.replace(cfg, work_dir=str(tmp_path / "work"))
    other = tmp_path / "work" / "eval" / "tables" / "someone_elses_table" / "part-0.parquet"
    other.parent.mkdir(parents=True)
    other.write_bytes(b"not the bench's")
    said: list[str] = []
    got: list[dict] = []
    rows = measure(cfg, [0.0005], cores=2, keep_data=False, say=said.append, on_row=got.append)
    (row,) = rows
    assert got == rows  # handed out as soon as measured
    assert row["correct"], row.get("error")
    assert row["rows"] == 15_000 and row["files_per_bucket"] >= 1
    assert row["write_inprocess_s"] and row["read_inprocess_s"] and row["s_per_million_rows"]
    assert row["write_peak_process_rss_bytes"] > 0 and row["harness_peak_rss_bytes"] > 0
    data = tmp_path / "work" / "data" / "scale-0.0005-seed-2022"
    removed = [i for i, s in enumerate(said) if s.startswith(f"removing {data}")]
    read = [i for i, s in enumerate(said) if "optimized: read" in s]
    assert removed and read and removed[0] < read[0]  # freed before the read ran
    # The table's files go once read, before the check (which needs the result only).
    dropped = [i for i, s in enumerate(said) if s.startswith("removing the table's files")]
    check = [i for i, s in enumerate(said) if "optimized: check" in s]
    assert dropped and check and read[0] < dropped[0] < check[0]
    assert not data.exists() and not list((tmp_path / "work" / "oracle").glob("*"))
    from contest.evaluation.evaluate import table_name_of

    own = table_name_of("optimized", tmp_path / "work")
    assert not (tmp_path / "work" / "eval" / "tables" / own).exists()
    assert other.read_bytes() == b"not the bench's"  # another run's table is not the bench's
    json.dumps(row)  # a record line
