"""Each native strategy end to end: `contest evaluate` with the real library (a timed
Python process for its write and its read, no Spark), the contract cases' hand-written
rows and the oracle's verdict, the cores the jobs took; its `:defaults` row; what it
refuses, in one line; what dropping a run removes."""

import json
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.config import override
from contest.errors import TableError
from contest.evaluation.evaluate import drop_run, evaluate
from contest.evaluation.strategies import preset
from contest.infra.postgres import resolve_connection
from contest.peers import formats
from contest.peers.iceberg.native import current_metadata
from meta import catalog
from tests.support.combined_cases import write_combined
from tests.support.config import cli
from tests.support.peer_child import child_config, run_child


@pytest.fixture(scope="module")
def contract_data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("native") / "data"
    return folder, write_combined(folder)


def _evaluate(cfg, tmp_path, capsys, strategy, data, *extra) -> tuple[int, dict, str]:
    args = cli(cfg, *extra, "evaluate", "--strategy", strategy, "--data", str(data))
    code = main([*args, "--work", str(tmp_path / "work"), "--results", "-", "--cores", "2"])
    out, err = capsys.readouterr()
    return code, json.loads(out.strip().splitlines()[-1]), err


def _exact(code, rec, err, expected, operation):
    assert code == 0, err[-3000:]
    assert rec["correct"] and rec["check"].startswith("OK")
    assert rec["merge_s"] is None  # no harness metadata merge
    assert rec["spark_cores"] == {"write": 2, "read": 2} and rec["cores"] == 2
    got = pq.read_table(rec["result_dir"]).to_pylist()
    assert sorted(got, key=lambda r: r["uuid"]) == expected
    report = rec["peer_write"]
    assert report["ok"] and [b["version"] for b in report["batches"]] == [0, 1, 2]
    assert all(b["operation"] == operation for b in report["batches"][1:])
    assert rec["stored_bytes"] == report["table_bytes"] > 0
    assert "spark-submit" not in err and "SparkContext" not in err


def test_delta_rs_is_exact(cfg, tmp_path, capsys, contract_data):
    data, expected = contract_data
    code, rec, err = _evaluate(cfg, tmp_path, capsys, "delta-rs", data)
    _exact(code, rec, err, expected, "merge")
    merges = rec["peer_write"]["batches"][1:]
    assert all(b["metrics"]["num_target_rows_updated"] >= 1 for b in merges)  # MERGE's own
    # A line a batch in the job's log as it goes (a job stopped at a time cap shows how far).
    log = (tmp_path / "work" / "eval" / "logs" / "delta-rs-write.log").read_text()
    assert "base-0.parquet v0: create" in log and "base-2.parquet v2: merge" in log


def test_delta_rs_defaults_row_is_exact(cfg, tmp_path, capsys, contract_data):
    data, expected = contract_data
    code, rec, err = _evaluate(cfg, tmp_path, capsys, "delta-rs:defaults", data)
    _exact(code, rec, err, expected, "merge")


def test_pyiceberg_is_exact(cfg, tmp_path, capsys, contract_data):
    data, expected = contract_data
    code, rec, err = _evaluate(cfg, tmp_path, capsys, "pyiceberg", data)
    _exact(code, rec, err, expected, "upsert")
    assert sum(b["metrics"]["rows_updated"] for b in rec["peer_write"]["batches"][1:]) >= 1


def test_lakesoul_py_is_exact(cfg, pg, tmp_path, capsys, contract_data):
    data, expected = contract_data
    code, rec, err = _evaluate(cfg, tmp_path, capsys, "lakesoul-py", data)
    _exact(code, rec, err, expected, "read+upsert")
    table = rec["peer_write"]["table"]
    files = [p.name for p in Path(table).iterdir()]
    assert "_contest_batches.json" in files  # the batch ledger
    data = [f for f in files if not f.startswith("_")]
    assert data and all(f.endswith(".parquet") for f in data)  # the preset's parquet


def test_lakesoul_py_defaults_row_writes_vortex_and_is_exact(
    cfg, pg, tmp_path, capsys, contract_data
):
    data, expected = contract_data
    code, rec, err = _evaluate(cfg, tmp_path, capsys, "lakesoul-py:defaults", data)
    _exact(code, rec, err, expected, "read+upsert")
    names = [p.name for p in Path(rec["peer_write"]["table"]).iterdir()]
    data = [n for n in names if not n.startswith("_")]
    assert data and all(n.endswith(".vortex") for n in data)


@pytest.mark.parametrize("strategy", ["delta-rs", "pyiceberg", "lakesoul-py"])
def test_a_native_strategy_on_the_wide_workload_is_exact(cfg, pg, tmp_path, capsys, strategy):
    """21 more payload columns, every operator of the registry among them, SQL NULLs:
    generated at a tiny scale, written and read by the library, checked by the oracle."""
    args = cli(cfg, "evaluate", "--strategy", strategy, "--workload", "wide", "--scale", "0.0004")
    code = main([*args, "--work", str(tmp_path / "work"), "--results", "-", "--cores", "2"])
    out, err = capsys.readouterr()
    rec = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and rec["correct"], err[-3000:]
    assert rec["rows"] == 2_000 + 10 * 400
    assert pq.read_table(rec["result_dir"]).num_columns == 8 + 21  # the contest's and wide's


def test_pypaimon_is_refused_in_one_line_before_any_work(cfg, tmp_path, capsys, contract_data):
    data, _ = contract_data
    code, rec, err = _evaluate(cfg, tmp_path, capsys, "pypaimon", data)
    assert code == 1 and rec["failed_phase"] == "packages (pypaimon)"
    assert rec["write_s"] is None  # nothing timed
    line = rec["error"]
    assert "\n" not in line and "polars<2" in line and line in err


@pytest.fixture
def held_cpus():
    """A native job run in this process (local[1]) holds it to its cores while it runs
    and gives them back: this process, and every child it starts later, keeps its CPUs."""
    cpus, threads = os.sched_getaffinity(0), pa.cpu_count()
    yield
    assert os.sched_getaffinity(0) == cpus and pa.cpu_count() == threads


def test_a_native_read_as_of_a_version_is_refused_in_one_line(
    cfg, tmp_path, capsys, contract_data, held_cpus
):
    data, _ = contract_data
    table, out = tmp_path / "t", tmp_path / "out"
    base = cli(cfg, "--set", "peer.format=delta-rs", "--set", "spark.master=local[1]")
    assert main([*base, "write", "--data", str(data), "--table", str(table)]) == 0
    capsys.readouterr()
    code = main([*base, "read", "--table", str(table), "--out", str(out), "--as-of-version", "1"])
    err = capsys.readouterr().err
    assert code == 2 and "the native libraries read the table's head only" in err
    assert len(err.strip().splitlines()) == 1 and not out.exists()
    # Not a table of the tool's: a folder it did not make is never replaced.
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    args = [*base, "write", "--data", str(data), "--table", str(other), "--replace"]
    assert main(args) == 2 and (other / "keep.txt").read_text() == "mine"
    assert "not a delta-rs table (no _delta_log): not replaced" in capsys.readouterr().err


def test_a_native_table_takes_batches_in_phases_under_its_ledger(
    cfg, tmp_path, capsys, contract_data, held_cpus
):
    """A workload's phases: --append --only into the table the folder holds; a batch it
    holds already is refused in one line; the read reports the newest version held."""
    data, expected = contract_data
    table, out = tmp_path / "t", tmp_path / "out"
    base = cli(cfg, "--set", "peer.format=pyiceberg", "--set", "spark.master=local[1]")
    write = [*base, "write", "--data", str(data), "--table", str(table), "--append"]
    assert main([*write, "--only", "0"]) == 0
    assert main([*write, "--only", "1,2"]) == 0
    capsys.readouterr()
    assert main([*write, "--only", "2"]) == 2
    assert "nothing written" in capsys.readouterr().err
    assert main([*base, "read", "--table", str(table), "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["version"] == 2 and report["spark_cores"] == 1
    got = pq.read_table(out).to_pylist()
    assert sorted(got, key=lambda r: r["uuid"]) == expected


@pytest.mark.spark  # Spark's Iceberg in a child session, without the spark fixture
def test_spark_iceberg_reads_a_pyiceberg_table_exactly(
    cfg, tmp_path, capsys, contract_data, held_cpus
):
    """PyIceberg keeps its table in a SQL catalog (sqlite in the table's folder, no
    version-hint.text): Spark's Iceberg (a child session with its jars) loads it from the
    catalog's current metadata file, a static table, and reads what PyIceberg reads."""
    data, expected = contract_data
    table, out = tmp_path / "t", tmp_path / "out"
    native = cli(cfg, "--set", "peer.format=pyiceberg", "--set", "spark.master=local[1]")
    assert main([*native, "write", "--data", str(data), "--table", str(table)]) == 0
    assert current_metadata(table).endswith(".metadata.json")
    assert current_metadata(tmp_path) is None  # no PyIceberg catalog there
    capsys.readouterr()
    child = child_config(cfg, "iceberg-mor", tmp_path)
    run_child(child, [["read", "--table", str(table), "--out", str(out)]], tmp_path)
    got = pq.read_table(out).to_pylist()
    assert sorted(got, key=lambda r: r["uuid"]) == expected


def test_a_dropped_lakesoul_py_run_leaves_no_metadata_and_others_keep_theirs(
    cfg, pg, tmp_path, capsys, contract_data, held_cpus
):
    """lakesoul-py keeps its table's metadata in PostgreSQL (LakeSoul's own catalog on the
    harness's database), outside the table folder: dropping the run (as `bench peers`
    does after a checked run) removes that table's rows too, and no other table's."""
    data, _ = contract_data
    conn = resolve_connection(cfg)
    run_cfg = override(cfg, {**preset("lakesoul-py"), "work_dir": str(tmp_path / "work")})
    lakesoul_py = formats.of(run_cfg)
    # Another lakesoul-py table on the same database (a name of its own: the database
    # outlives the test session).
    kept = tmp_path / f"kept_{uuid.uuid4().hex[:12]}"
    base = cli(cfg, "--set", "peer.format=lakesoul-py", "--set", "spark.master=local[1]")
    try:
        assert main([*base, "write", "--data", str(data), "--table", str(kept)]) == 0
        capsys.readouterr()
        rec = evaluate(run_cfg, "lakesoul-py", data=data, cores=2, say=lambda _: None)
        assert rec.correct, rec.error
        assert rec.peer_write is not None
        table = Path(rec.peer_write["table"])
        ref = catalog.find_table(conn, str(table))
        kept_ref = catalog.find_table(conn, str(kept))

        drop_run(run_cfg, rec)

        assert not table.exists() and not Path(rec.result_dir).exists()
        with pytest.raises(TableError):
            catalog.find_table(conn, str(table))
        with pytest.raises(TableError):
            catalog.get_table(conn, ref.name, ref.namespace)
        # The other table: its metadata as it was, and still read by LakeSoul.
        assert catalog.find_table(conn, str(kept)) == kept_ref
        assert lakesoul_py.read_table(run_cfg, kept, 1).num_rows > 0
    finally:
        lakesoul_py.forget(run_cfg, kept)  # the test's own table: gone from the database
