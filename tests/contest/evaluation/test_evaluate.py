"""contest evaluate / compare: whole spark-submit processes, the oracle's verdict, the
JSON line, the record; a second evaluation in another work folder leaves the first's
table as it was; a failing phase is named and the exit code is non-zero."""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data.generator import generate
from contest.errors import UsageError
from contest.infra import timeline
from contest.infra.postgres import resolve_connection
from contest.results.runs import local_runs
from meta import catalog
from meta.commits import head_snapshot
from tests.support.config import cli

pytestmark = [pytest.mark.spark, pytest.mark.pg]

KEYS = {
    "strategy",
    "scale",
    "rows",
    "cores",
    "write_s",
    "read_s",
    "merge_s",
    "size_ok",
    "correct",
    "rows_per_core_s",
    "result_dir",
}


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_evaluate_optimized_end_to_end(cfg, pg, tmp_path, capsys, monkeypatch):
    runs = tmp_path / "runs.jsonl"
    monkeypatch.chdir(tmp_path)  # a relative work folder, as `./build.sh run` has (.work)
    argv = cli(cfg, "evaluate", "--scale", "0.0005", "--cores", "2", "--results", str(runs))
    code = main([*argv, "--work", "rel-work"])
    out, err = capsys.readouterr()
    rec = _last_json(out)
    assert code == 0, err[-3000:]
    assert KEYS <= set(rec)
    assert rec["correct"] and rec["size_ok"] and rec["rows"] == 15_000
    assert rec["rows_per_core_s"] == pytest.approx(
        15_000 / (2 * (rec["write_s"] + rec["read_s"])), rel=0.01
    )
    assert "optimized: write (15,000 rows" in err  # phases are shown as they run
    # One line for people with the score before the record (./build.sh run's end).
    score = out.strip().splitlines()[-2]
    assert score == (
        f"optimized: correct; write {rec['write_s']:.3f} s, read {rec['read_s']:.3f} s: "
        f"{rec['rows_per_core_s']:,.1f} rows/core/s (15,000 rows, 2 cores)"
    )
    stored = json.loads(runs.read_text().splitlines()[-1])
    assert stored["environment"]["spark"] == "3.5.8" and "config" in stored
    phases = [(p["name"].split(" ")[0], p["status"]) for p in stored["phases"]]
    assert phases == [
        (name, "ok")
        for name in ("data", "clean", "write", "size", "metadata", "read", "cores", "check")
    ]
    assert all(p["start"] <= p["end"] for p in stored["phases"])
    assert set(stored["load"]) == {"write", "read"} and stored["machine_id"]
    assert stored["load"]["write"]["load1_before"] is not None and stored["git_commit"]
    assert "password" not in json.dumps(stored["config"]["pg"])
    # Each timed job's timeline: every phase from its own marks, the marks in the order
    # they happen, the phases summing to the job's wall time (the parent's launch to its
    # exit).
    spark_job = {"launch", "jvm", "imports", "context", "plan", "tasks", "finish", "stop", "exit"}
    for stage in ("write", "read"):
        phases = stored["timeline"][stage]
        assert set(phases) == spark_job, phases
        assert all(s >= 0 for s in phases.values()) and phases["tasks"] > 0
        assert sum(phases.values()) == pytest.approx(stored[f"{stage}_s"], abs=0.1)
        marks = timeline.read_marks(
            tmp_path / "rel-work" / "eval" / "logs" / f"optimized-{stage}.log"
        )
        at = [marks[m] for m in timeline.MARKS if m in marks]
        assert len(at) == 8 and all(a <= b + 0.005 for a, b in zip(at, at[1:], strict=False))

    # A second evaluation in another work folder (the advice a second one in the same
    # folder gets) never touches the first's table: its clean phase leaves the first's
    # commits and files as they were, and its result.
    commits, files = _table_state(cfg, rec["table"])
    assert len(commits) == 11 and files and all(f.exists() for f in files)
    argv = cli(cfg, "evaluate", "--scale", "0.0005", "--cores", "2", "--results", "-")
    code = main([*argv, "--work", str(tmp_path / "w2")])
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    second = _last_json(out)
    assert second["table"] != rec["table"] and second["correct"]
    assert _table_state(cfg, rec["table"]) == (commits, files)  # same commits, same files
    assert all(f.exists() for f in files)
    assert Path(rec["result_dir"]).is_dir()  # its result, too


def _table_state(cfg, name: str) -> tuple[list, list[Path]]:
    conn = resolve_connection(cfg)
    table = catalog.get_table(conn, name, cfg.table.namespace)
    _, commits = head_snapshot(conn, table)
    ids = sorted(str(c.commit_id) for c in commits)
    files = sorted(Path(f.path.removeprefix("file://")) for c in commits for f in c.files)
    return ids, files


def test_failing_write_names_the_phase(cfg, pg, tmp_path, capsys):
    data = tmp_path / "data"
    generate(data, 0.0005, seed=4, progress=False)
    t = pq.read_table(data / "base-3.parquet")
    keys = t.column("uuid").to_pylist()
    keys[0] = None
    pq.write_table(t.set_column(0, "uuid", pa.array(keys, pa.string())), data / "base-3.parquet")
    code = main(cli(cfg, "evaluate", "--data", str(data), "--cores", "2", "--results", "-"))
    rec = _last_json(capsys.readouterr().out)
    assert code == 1
    assert rec["correct"] is False and rec["failed_phase"].startswith("write")
    assert rec["rows_per_core_s"] is None
    assert rec["write_s"] and rec["write_rows_per_core_s"] is None  # a write that failed
    assert rec["phases"][-1]["status"] == "failed" and rec["phases"][-1]["error"] == rec["error"]


def test_a_run_past_its_time_cap_is_recorded_as_timed_out(cfg, pg, tmp_path, capsys):
    """run_cap_s: the write job still running at the cap is stopped and the run is
    recorded, failed in the write and timed out, not left out; no read starts."""
    data = tmp_path / "data"
    generate(data, 0.0005, seed=4, progress=False)
    code = main(cli(cfg, "--set", "run_cap_s=3", "evaluate", "--data", str(data), "--results", "-"))
    rec = _last_json(capsys.readouterr().out)
    assert code == 1 and rec["timed_out"] is True and rec["correct"] is False
    assert rec["failed_phase"].startswith("write") and "timed out" in rec["error"]
    assert "run_cap_s" in rec["error"] and 3 <= rec["write_s"] < 30
    assert rec["read_s"] is None


def test_cap_left_is_what_the_run_has_not_spent():
    from contest.evaluation.run import cap_left

    assert cap_left(0, 5.0) is None  # no cap
    assert cap_left(100, None, None) == 100
    assert cap_left(100, 30.5, None) == 69.5
    assert cap_left(100, 99.9) == 1.0  # at least a second


def test_missing_batch_fails_in_the_data_phase(cfg, pg, tmp_path, capsys):
    data = tmp_path / "gap"
    generate(data, 0.0005, seed=4, progress=False)
    (data / "base-4.parquet").unlink()
    code = main(cli(cfg, "evaluate", "--data", str(data)))
    out, err = capsys.readouterr()
    rec = _last_json(out)
    assert code == 1 and rec["failed_phase"] == "data"
    assert "base-4.parquet: missing" in rec["error"]
    assert rec["write_s"] is None and rec["write_rows_per_core_s"] is None
    # By default the record goes to this machine's ignored store, not the published results.
    local = local_runs(cfg.work_path)
    assert json.loads(local.read_text().splitlines()[-1])["run_id"] == rec["run_id"]
    assert f"run {rec['run_id']} recorded in {local}" in err
    assert not (cfg.results_path / "runs.jsonl").exists()


def test_two_evaluations_never_share_a_work_folder(cfg, tmp_path, capsys):
    from contest.evaluation.evaluate import work_lock

    work = tmp_path / "shared"
    with work_lock(work / "eval"):
        code = main(
            cli(cfg, "evaluate", "--scale", "0.0001", "--work", str(work), "--results", "-")
        )
    err = capsys.readouterr().err
    assert code == 2 and "another evaluation (pid" in err and "--work DIR" in err
    with work_lock(work / "eval"):  # released: it can be taken again
        pass


def test_a_job_that_cannot_start_names_sparks_cause(cfg, pg, tmp_path, capsys):
    """Spark refuses a driver below 450 MB: the one-line failure says so, not py4j's
    wrapper ("An error occurred while calling None...JavaSparkContext")."""
    argv = cli(cfg, "evaluate", "--scale", "0.0005", "--cores", "2", "--results", "-")
    code = main([*argv, "--set", "spark.driver_memory=200m", "--work", str(tmp_path / "w")])
    out, err = capsys.readouterr()
    rec = _last_json(out)
    assert code == 1 and rec["failed_phase"].startswith("write")
    assert "INVALID_DRIVER_MEMORY" in rec["error"].splitlines()[0]
    assert "An error occurred while calling" not in rec["error"]
    failed = next(ln for ln in err.splitlines() if "FAILED in write" in ln)
    assert "INVALID_DRIVER_MEMORY" in failed
    # Spark's advice names spark-submit's --driver-memory; contest's way is the key.
    assert "--driver-memory" not in rec["error"] and "--driver-memory" not in err
    assert "raise spark.driver_memory (--set spark.driver_memory=1g" in rec["error"]
    log = tmp_path / "w" / "eval" / "logs" / "optimized-write.log"
    assert f"optimized: write job's log (per-batch lines): {log}" in err
    assert rec["write_rows_per_core_s"] is None  # a write that never ran has no score


def test_more_cores_than_the_machine_has_is_refused(cfg, tmp_path, capsys):
    """local[N] above the machine's cores ran N tasks on fewer cores and divided the
    score by N (the contest's local[4] on a 2-core machine: 226.6 against ~500)."""
    import os

    from contest.infra.machine import check_local_cores

    many = (os.cpu_count() or 1) + 2
    argv = cli(cfg, "evaluate", "--scale", "0.0005", "--cores", str(many), "--results", "-")
    assert main([*argv, "--work", str(tmp_path / "w")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"contest: --cores {many}: this machine has {os.cpu_count()} cores")
    assert not (tmp_path / "w" / "eval").exists()  # refused before any work
    check_local_cores(4, "spark://h:7077", 2)  # a cluster's cores are its own
    check_local_cores(2, None, 2)
    check_local_cores(None, None, 2)
    with pytest.raises(UsageError, match=r"--cores 4: this machine has 2 cores.*2.0x too low"):
        check_local_cores(4, None, 2)
