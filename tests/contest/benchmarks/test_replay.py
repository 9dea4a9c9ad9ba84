"""`contest bench replay` and its old spelling `contest meta bench`: both paths give the
same snapshot, records append across sittings, the table shows the newest sitting."""

from __future__ import annotations

import json

import pytest

from contest.cli.main import main
from tests.support.config import cli

pytestmark = [pytest.mark.spark, pytest.mark.pg]


def test_both_spellings_record_into_one_file(spark, pg, cfg, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["--commits", "300", "--commits", "500", "--results", str(out)]
    assert main(cli(cfg, "bench", "replay", *argv)) == 0
    capsys.readouterr()
    assert main(cli(cfg, "meta", "bench", "--commits", "200", "--out", str(out))) == 0
    records = [json.loads(x) for x in (out / "meta_replay.jsonl").read_text().splitlines()]
    assert [r["commits"] for r in records] == [300, 500, 200]
    assert all(r["identical"] and not r["second_run_changed"] for r in records)
    assert all(r["driver_peak_rss_mb"] > 0 for r in records)
    assert len({r["sitting"] for r in records}) == 2
    md = (out / "meta_replay.md").read_text()
    assert "| 200 |" in md and "| 300 |" not in md  # the newest sitting
    printed = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip()]
    assert printed[-2] == md.strip().splitlines()[-1]  # the table, then one JSON object
    assert json.loads(printed[-1]) == {
        "benchmark": "replay",
        "ok": True,
        "records": str(out / "meta_replay.jsonl"),
        "table": str(out / "meta_replay.md"),
    }


def test_a_bench_records_into_this_machines_store_by_default(spark, pg, cfg, capsys):
    """Publishing is on purpose: without --results a bench writes under the work folder's
    per-machine store, as `evaluate` does, and leaves the published results alone."""
    from contest.infra.machine import machine_id

    assert main(cli(cfg, "bench", "replay", "--commits", "100")) == 0
    capsys.readouterr()
    local = cfg.work_path / "results" / machine_id()
    assert [
        json.loads(x)["commits"] for x in (local / "meta_replay.jsonl").read_text().splitlines()
    ] == [100]
    assert (local / "meta_replay.md").is_file()
    assert not (cfg.results_path / "meta_replay.jsonl").exists()
