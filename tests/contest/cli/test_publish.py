"""Local runs stay in this machine's ignored store; `contest publish` copies the runs it
is told into the published results, says which, and never twice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contest.cli.main import main
from contest.results.runs import JobLoad, RunRecord, append_records, local_runs


def _run(strategy: str, run_id: str, score: float, **kw: object) -> RunRecord:
    return RunRecord(strategy, run_id=run_id, scale=0.1, correct=True, rows_per_core_s=score, **kw)


@pytest.fixture
def store(tmp_path) -> tuple[list[str], Path, Path]:
    args = ["--set", f"work_dir={tmp_path / 'work'}", "--set", f"results_dir={tmp_path / 'res'}"]
    local = local_runs(tmp_path / "work")
    busy = _run("optimized", "cccc00000003", 90.0, machine_cores=2, git_dirty=True)
    # Busy by the one rule, the noise measured during the job (a load average is not it).
    busy.load["write"] = JobLoad(load1_before=4.0, outside_share=0.25, peak_outside_share=0.6)
    append_records(
        local,
        [
            _run("optimized", "aaaa00000001", 100.0),
            _run("baseline-mor", "bbbb00000002", 50.0),
            busy,
        ],
    )
    return args, local, tmp_path / "res" / "runs.jsonl"


def test_local_store_is_per_machine_under_the_work_folder(tmp_path):
    path = local_runs(tmp_path, "m1")
    assert path == tmp_path / "results" / "m1" / "runs.jsonl"
    assert local_runs(tmp_path).parent.parent == tmp_path / "results"


def test_publish_takes_the_named_runs_once(store, capsys):
    args, _, published = store
    assert main([*args, "publish", "--runs", "aaaa", "--runs", "bbbb00000002"]) == 0
    out = capsys.readouterr().out
    assert "published aaaa00000001" in out and "published bbbb00000002" in out
    last = json.loads(out.strip().splitlines()[-1])
    assert last["published"] == ["aaaa00000001", "bbbb00000002"] and last["to"] == str(published)
    ids = [json.loads(x)["run_id"] for x in published.read_text().splitlines()]
    assert ids == ["aaaa00000001", "bbbb00000002"]
    assert main([*args, "publish", "--runs", "all"]) == 0
    out, err = capsys.readouterr()
    assert "already published aaaa00000001" in out and "1 run(s) appended" in err
    assert json.loads(out.strip().splitlines()[-1])["published"] == ["cccc00000003"]
    assert (
        "warning: run cccc00000003 was taken on a busy machine (other work held 25% of the "
        "CPUs during the job (write)) and a dirty tree" in err
    )
    assert "dirty tree" in err
    ids = [json.loads(x)["run_id"] for x in published.read_text().splitlines()]
    assert ids == ["aaaa00000001", "bbbb00000002", "cccc00000003"]
    assert main([*args, "report"]) == 0  # the published file is the report's default
    # Busy: 1 of the 1 run whose noise was recorded (the other has none to judge).
    assert "| 0.1 | optimized | 2 | 2 | 1 of 1 |" in (published.parent / "README.md").read_text()


@pytest.mark.parametrize(
    "which,message",
    [("zzzz", "no run has the id 'zzzz'"), ("last:0", "last:N"), (None, "name the runs")],
)
def test_publish_refuses_what_it_cannot_name(store, capsys, which, message):
    args, _, published = store
    argv = [*args, "publish"] + (["--runs", which] if which else [])
    assert main(argv) == 2
    assert message in capsys.readouterr().err and not published.exists()


def test_publish_lists_and_takes_the_last(store, capsys):
    args, local, published = store
    assert main([*args, "publish", "--list"]) == 0
    assert len(capsys.readouterr().out.strip().splitlines()) == 3
    assert main([*args, "publish", "--runs", "last:2"]) == 0
    ids = [json.loads(x)["run_id"] for x in published.read_text().splitlines()]
    assert ids == ["bbbb00000002", "cccc00000003"]
    assert main([*args, "report", "--local"]) == 0  # this machine's own table, beside them
    assert "| 0.1 | baseline-mor | 1 | 1 | ? |" in (local.parent / "README.md").read_text()
