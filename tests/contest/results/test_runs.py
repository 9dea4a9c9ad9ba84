"""Run records: typed, versioned, old lines read; phases with start, end and status
from the one runner; rates only for jobs that ran; the busy-machine flag."""

from __future__ import annotations

import dataclasses
import json

import pytest

from contest.errors import DataError, HarnessError, PhaseError, RunError
from contest.evaluation.phases import Step, run_phases
from contest.evaluation.procedure import score
from contest.results.runs import (
    FAILED,
    OK,
    SCHEMA_VERSION,
    JobLoad,
    RunRecord,
    append_records,
    load_records,
)

SCHEMA1 = {  # a line of runs.jsonl written before records had a schema
    "strategy": "optimized",
    "correct": False,
    "failed_phase": "read (spark-submit)",
    "error": "read job exited 1: boom",
    "write_s": 9.5,
    "read_s": None,
    "rows": 1000,
    "environment": {"git_commit": "abc1234", "machine_cores": 2, "spark": "3.5.8"},
    "some_future_key": [1, 2],
}


def test_schema1_line_is_read_and_kept_on_rewrite(tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(SCHEMA1) + "\n")
    (old,) = load_records(runs)
    assert old.schema == 1 and old.phases == [] and old.failed_phase == "read (spark-submit)"
    assert old.git_commit == "abc1234" and old.machine_cores == 2 and old.write_s == 9.5
    assert old.extra == {"some_future_key": [1, 2]}
    append_records(runs, [old])
    again = load_records(runs)[1]
    assert again == old and json.loads(runs.read_text().splitlines()[1])["some_future_key"]


def test_new_record_round_trips_with_phases_and_load(tmp_path):
    rec = RunRecord("optimized", run_id=RunRecord.new_id(), rows=10)
    rec.begin("data").finish()
    rec.fail(rec.begin("write"), "write job exited 1: boom")
    rec.load["write"] = JobLoad(0.5, 1.5, 0.0, 0.01)
    append_records(tmp_path / "r.jsonl", [rec])
    line = json.loads((tmp_path / "r.jsonl").read_text())
    assert line["schema"] == SCHEMA_VERSION
    assert [(p["name"], p["status"]) for p in line["phases"]] == [("data", OK), ("write", FAILED)]
    assert all(p["start"] <= p["end"] and p["seconds"] >= 0 for p in line["phases"])
    back = load_records(tmp_path / "r.jsonl")[0]
    assert back.phases == rec.phases and back.load == rec.load
    assert back.failed_phase == "write" and back.error == "write job exited 1: boom"


@pytest.mark.parametrize("line", ["{not json", '{"correct": true}', "[1, 2]"])
def test_a_line_that_is_not_a_record_names_itself(tmp_path, line):
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(SCHEMA1) + "\n\n" + line + "\n")
    with pytest.raises(DataError, match=r"runs.jsonl:3: not a run record"):
        load_records(runs)


def test_phase_error_is_in_the_harness_family():
    assert issubclass(PhaseError, RunError) and issubclass(PhaseError, HarnessError)


def test_runner_stops_at_the_first_failure_and_keeps_it_in_the_record():
    done: list[str] = []
    ctx = {"rows": 0}

    def count(c: dict) -> None:
        c["rows"] = 42
        done.append("count")

    def broken(c: dict) -> None:
        raise OSError("disk full")

    steps = [
        Step(lambda c: "count", count),
        Step(lambda c: "skipped", lambda c: done.append("skipped"), lambda c: False),
        Step(lambda c: f"write ({c['rows']} rows)", broken),
        Step(lambda c: "never", lambda c: done.append("never")),
    ]
    rec = RunRecord("optimized")
    said: list[str] = []
    assert run_phases(ctx, steps, rec, said.append, "optimized") is False
    assert done == ["count"]
    assert [(p.name, p.status) for p in rec.phases] == [("count", OK), ("write (42 rows)", FAILED)]
    assert rec.failed_phase == "write (42 rows)" and rec.error == "OSError: disk full"
    assert len(said) == 2 and said[1].endswith("optimized: write (42 rows)")
    check = RunRecord("optimized")
    assert not run_phases(None, [Step(lambda c: "check", _wrong)], check, said.append, "x")
    assert check.error == "2 keys differ"  # a PhaseError's message as is


def _wrong(_: object) -> None:
    raise PhaseError("2 keys differ")


def test_a_failed_write_carries_no_write_rate():
    rec = RunRecord("optimized", rows=1000, cores=2, write_s=5.0)
    rec.fail(rec.begin("write (1,000 rows)"), "write job exited 1: boom")
    score(rec)
    assert rec.write_rows_per_core_s is None and rec.rows_per_core_s is None
    ok = RunRecord("optimized", rows=1000, cores=2, write_s=5.0, read_s=5.0, correct=True)
    ok.begin("write (1,000 rows)").finish()
    ok.begin("read (spark-submit)").finish()
    score(ok)
    assert (ok.write_rows_per_core_s, ok.read_rows_per_core_s) == (100.0, 100.0)
    assert ok.rows_per_core_s == 50.0


def test_a_record_without_per_job_noise_is_not_judged_by_another_window():
    """The one busy rule is the per-job noise: an older record's load average, CPU share
    before a job or steal around it judge nothing; it says its noise was not recorded."""
    rec = RunRecord("optimized", machine_cores=2)
    assert rec.busy is None and rec.busy_text == "noise not recorded"
    rec.load["write"] = JobLoad(load1_before=1.9, cpu_busy_before=0.6, steal_after=0.05)
    rec.load["read"] = JobLoad(load1_before=2.5, cpu_busy_before=0.61)
    assert rec.busy is None and not rec.noise_recorded
    assert rec.busy_text == "noise not recorded"
    back = RunRecord.from_dict(rec.to_dict())
    assert back.load["write"].cpu_busy_before == 0.6 and back.busy_text == rec.busy_text


def test_noise_during_a_job_flags_what_a_sample_before_it_cannot_see():
    """Load that starts once a job runs is invisible to the sample before it; the noise
    measured during the job (contest/infra/noise.py) flags it, and round-trips."""
    from contest.infra.machine import Sample
    from contest.infra.noise import JobNoise

    quiet = Sample(load1=0.1, steal=0.0, cpu_busy=0.02)
    during = JobNoise(
        wall_s=20.0,
        cores=2,
        tree_cpu_s=35.0,
        outside_cpu_s=8.0,
        outside_share=0.2,
        peak_outside_share=0.6,
        steal_share=0.0,
        samples=80,
    )
    rec = RunRecord("optimized", machine_cores=2)
    rec.load["write"] = JobLoad.around(quiet, quiet)
    rec.load["read"] = JobLoad.around(quiet, quiet, during)
    assert rec.busy == "other work held 20% of the CPUs during the job (read)"
    back = RunRecord.from_dict(json.loads(json.dumps(rec.to_dict())))
    assert back.load["read"].job_cpu_s == 35.0
    assert back.busy == rec.busy
    assert rec.busy_text == rec.busy
    calm = dataclasses.replace(during, outside_share=0.03, peak_outside_share=0.2)
    rec.load["read"] = JobLoad.around(quiet, quiet, calm)
    # Quiet by its jobs' own noise, whatever the load average before them said.
    rec.load["write"] = JobLoad.around(Sample(load1=1.9, steal=0.05, cpu_busy=0.6), quiet)
    assert rec.busy is None and rec.busy_text is None
