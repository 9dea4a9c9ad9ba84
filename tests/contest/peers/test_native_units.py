"""The native libraries' small pieces, with their real inputs: the threads a job takes
from its master, the pinned-library check, delta-rs's update expressions (run by
DataFusion inside a real delta-rs MERGE), the fold of a key's current row with a batch,
and how the registry and the job launcher tell a native strategy from a Spark one."""

from pathlib import Path

import pyarrow as pa
import pytest

from contest.config import load_config
from contest.data import operators
from contest.errors import ConnectorError, UsageError
from contest.evaluation.jobs import native_command, spark_submit
from contest.evaluation.strategies import DEFAULTS, STRATEGIES
from contest.peers import formats, registry
from contest.peers.delta.native import update_expressions
from contest.peers.native import libraries
from contest.peers.native.collapse import collapsed, folded
from contest.peers.native.job import threads_of

NATIVE = ("delta-rs", "pyiceberg", "lakesoul-py", "pypaimon")


def test_threads_come_from_the_local_master():
    assert threads_of("local[3]") == 3 and threads_of("local[*]") is None
    for bad in ("local[0]", "spark://host:7077", "yarn"):
        with pytest.raises(UsageError, match="one process on this machine"):
            threads_of(bad)


def test_a_library_is_checked_against_its_pin():
    assert libraries.pinned("deltalake==1.6.6") == ("deltalake", "1.6.6")
    assert libraries.problem("deltalake==1.6.6", "1.6.6") is None
    assert "not installed" in (libraries.problem("x==1", None) or "")
    assert "1.5 is installed" in (libraries.problem("x==1", "1.5") or "")
    with pytest.raises(ValueError):
        libraries.pinned("deltalake>=1")
    libraries.require(["deltalake==1.6.6", "pyiceberg==0.12.0", "lakesoul==2.0.0"])
    with pytest.raises(ConnectorError, match="deltalake 1.6.6 is installed"):
        libraries.require(["deltalake==0.0.1"])


def test_every_native_strategy_is_registered_as_a_python_process():
    cfg = load_config(preset=STRATEGIES["delta-merge"])
    assert formats.runtime_of(cfg) is registry.SPARK
    assert formats.runtime_of(load_config()) is registry.SPARK  # LakeSoul's own engines
    for name in NATIVE:
        assert name in STRATEGIES and name in DEFAULTS
        cfg = load_config(preset=STRATEGIES[name])
        assert formats.runtime_of(cfg) is registry.NATIVE
        assert registry.implementation_of(name).runtime is registry.NATIVE


def test_a_native_job_is_this_python_not_spark_submit(tmp_path):
    cfg = load_config(preset=STRATEGIES["delta-rs"])
    cmd = native_command(cfg, "write", 2, tmp_path / "c.toml", ["--data", "d"])
    assert Path(cmd[0]).name.startswith("python") and "spark-submit" not in " ".join(cmd)
    assert cmd[-4:] == ["--set", "spark.master=local[2]", "--data", "d"]
    spark = spark_submit(load_config(preset=STRATEGIES["delta-merge"]), "write", 2, tmp_path, [])
    assert Path(spark[0]).name == "spark-submit"


ROWS = pa.table(
    {
        "uuid": ["a", "b", "a", "a"],
        "ip": ["1", None, None, "2"],
        "hostname": ["h", "h", None, None],
        "requests": [1, 5, None, 3],
        "name": ["x", "null", "y", "null"],
        "city": ["c", "c", "c", "d"],
        "job": ["j", "j", "j", "j"],
        "phonenum": ["p", "p", "p", "p"],
    }
)


def test_a_batch_collapses_and_folds_onto_the_current_row():
    cfg = load_config()
    one = {r["uuid"]: r for r in collapsed(ROWS, cfg).to_pylist()}
    assert one["a"]["requests"] == 4 and one["a"]["name"] == "y" and one["a"]["ip"] == "2"
    assert one["b"]["name"] is None and one["a"]["hostname"] == "h"
    current = pa.table({**{c: [v] for c, v in one["a"].items()}, "requests": [10]})
    later = ROWS.slice(3, 1)  # a: ip 2, requests 3, name "null", city d
    after = folded(current.cast(ROWS.schema), later, cfg).to_pylist()
    assert after == [{**one["a"], "requests": 13, "ip": "2", "city": "d"}]


def test_delta_rs_runs_the_contract_as_update_expressions(tmp_path):
    """The expressions, run by delta-rs's own MERGE: a summed `requests`, a NULL that
    keeps the table's value, a name kept when the source's is NULL."""
    from deltalake import DeltaTable, write_deltalake

    ops = dict(operators.CONTRACT)
    exprs = update_expressions(ops)
    assert set(exprs) == set(ops) and exprs["ip"] == 'coalesce(s."ip", t."ip")'
    table = str(tmp_path / "t")
    cfg = load_config()
    write_deltalake(table, collapsed(ROWS.slice(0, 2), cfg))
    source = collapsed(ROWS.slice(2, 2), cfg)
    DeltaTable(table).merge(
        source, 't."uuid" = s."uuid"', source_alias="s", target_alias="t"
    ).when_matched_update(exprs).when_not_matched_insert_all().execute()
    got = {r["uuid"]: r for r in DeltaTable(table).to_pyarrow_table().to_pylist()}
    assert got["a"] == {**collapsed(ROWS, cfg).to_pylist()[0], "uuid": "a"}
    assert got["a"]["requests"] == 4 and got["a"]["name"] == "y"


def test_delta_rs_reads_through_arrows_own_files_not_a_python_file_system(tmp_path, monkeypatch):
    """The read's files open through Arrow's local filesystem: delta-rs's Python one
    (DeltaStorageHandler) left buffers holding Python objects for Arrow's threads to
    release while the interpreter exited (std::terminate, exit -6: local_files). Every
    file method of the Python one is made to fail, and the read is still exact."""
    from deltalake import write_deltalake
    from deltalake.fs import DeltaStorageHandler

    def refused(*args, **kwargs):
        raise AssertionError("the read went through delta-rs's Python file system")

    table = tmp_path / "t"
    cfg = load_config()
    write_deltalake(str(table), collapsed(ROWS, cfg))
    for method in ("open_input_file", "open_input_stream", "get_file_info"):
        monkeypatch.setattr(DeltaStorageHandler, method, refused)
    got = formats.lookup("delta-rs").read_table(cfg, table, 1)  # type: ignore[attr-defined]
    assert got.sort_by("uuid").to_pylist() == collapsed(ROWS, cfg).sort_by("uuid").to_pylist()


def test_the_cli_offers_every_native_strategy(capsys):
    from contest.cli.main import main

    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    helptext = " ".join(capsys.readouterr().out.split())
    assert all(name in helptext for name in NATIVE)
    # An unknown strategy is refused in one line naming them.
    assert main(["evaluate", "--strategy", "delta-rs:tuned"]) == 2
    assert "delta-rs" in capsys.readouterr().err
