"""Workloads end to end: `contest gen --workload` then `contest evaluate` on any number of
batches, and a wide workload's extra columns through write, read, oracle and check
(whole spark-submit processes, real PostgreSQL; small data)."""

import dataclasses
import json

import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from tests.support.config import cli

pytestmark = [pytest.mark.spark, pytest.mark.pg]


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def test_evaluate_forty_batches(cfg, pg, tmp_path, capsys):
    shape = tmp_path / "forty.toml"
    shape.write_text(
        "[workload]\nbatches = 40\nfirst_rows = 2000\nbatch_rows = 100\n"
        'update_share = 0.8\nrepeat_share = 0.1\ndistribution = "recent"\nrecent_batches = 3\n'
    )
    data = tmp_path / "data"
    assert main(cli(cfg, "gen", "--workload", str(shape), "--scale", "1", "--out", str(data))) == 0
    gen = _last_json(capsys.readouterr().out)
    assert gen["files"] == 40 and gen["workload"] == "forty"
    assert sorted(p.name for p in data.iterdir()) == sorted(f"base-{i}.parquet" for i in range(40))
    code = main(cli(cfg, "evaluate", "--data", str(data), "--cores", "2", "--results", "-"))
    out, err = capsys.readouterr()
    rec = _last_json(out)
    assert code == 0, err[-3000:]
    assert rec["correct"] and rec["rows"] == 2000 + 39 * 100 == gen["rows"]


def test_data_and_oracle_caches_are_keyed_by_the_workload(cfg, tmp_path):
    """What `evaluate` generates and checks against: one folder per shape (the contest's
    keeps its old name), and the oracle's result per extra columns' operators."""
    from contest.config import load_config, to_toml
    from contest.data.workload import workload_settings
    from contest.evaluation.data_cache import cached_data, cached_expected

    work = dataclasses.replace(cfg, work_dir=str(tmp_path))
    wide = dataclasses.replace(
        work, workload=load_config(workload=workload_settings("wide")).workload
    )
    plain = cached_data(work, 0.0001, 1, print)
    assert plain.name == "scale-0.0001-seed-1"
    wide_data = cached_data(wide, 0.0001, 1, print)
    assert wide_data.name.startswith("wide-") and wide_data != plain
    assert len(pq.read_schema(wide_data / "base-0.parquet").names) == 8 + 21
    expected = pq.read_table(cached_expected(wide, wide_data, "", print))
    assert str(expected.schema.field("metric_01").type) == "int64"
    assert expected.num_rows == 1000
    # The timed jobs get the workload through the configuration file evaluate writes.
    f = tmp_path / "job.toml"
    f.write_text(to_toml(wide))
    assert load_config(f).workload == wide.workload


def test_wide_data_without_its_workload_is_one_clear_error(cfg, tmp_path, capsys):
    data = tmp_path / "wide"
    argv = ["gen", "--workload", "wide", "--scale", "0.0001", "--out", str(data)]
    assert main(cli(cfg, *argv)) == 0
    capsys.readouterr()
    code = main(cli(cfg, "oracle", "--data", str(data), "--out", str(tmp_path / "e")))
    err = capsys.readouterr().err
    assert code == 2 and "unexpected column(s) metric_01" in err and "--workload" in err
    argv = ["oracle", "--workload", "wide", "--data", str(data), "--out", str(tmp_path / "e")]
    assert main(cli(cfg, *argv)) == 0


def test_a_strategy_refuses_a_workload_operator_it_cannot_express(cfg, tmp_path, capsys):
    argv = cli(cfg, "evaluate", "--strategy", "lakesoul-stock", "--workload", "wide")
    code = main([*argv, "--scale", "0.0001", "--work", str(tmp_path), "--results", "-"])
    rec = _last_json(capsys.readouterr().out)
    assert code == 1 and rec["failed_phase"] == "data"
    assert "merge operator Max (column peak_01) is not expressible" in rec["error"]
    assert not (tmp_path / "data").exists()  # refused before generating anything


def test_pipeline_commands_take_the_workload(cfg, pg, spark, tmp_path, capsys):
    data, table, out = tmp_path / "d", tmp_path / "tables" / "wide_cli", tmp_path / "r"
    steps = [
        ["gen", "--workload", "wide", "--scale", "0.0001", "--out", str(data)],
        ["write", "--workload", "wide", "--data", str(data), "--table", str(table), "--replace"],
        ["meta", "merge", "--table", "wide_cli"],
        ["read", "--workload", "wide", "--table", "wide_cli", "--out", str(out)],
        ["check", "--workload", "wide", "--result", str(out), "--data", str(data)],
    ]
    for argv in steps:
        code = main(cli(cfg, *argv))
        assert code == 0, f"{argv}: {capsys.readouterr().err[-2000:]}"
    assert capsys.readouterr().out.strip().endswith("OK: expected 1,000 rows, result has 1,000")
    # The same result read without the workload's operators (UseLast for every extra
    # column) is found wrong by the checker, naming the columns that differ.
    main(cli(cfg, "read", "--table", "wide_cli", "--out", str(tmp_path / "plain")))
    capsys.readouterr()
    code = main(
        cli(
            cfg,
            "check",
            "--workload",
            "wide",
            "--result",
            str(tmp_path / "plain"),
            "--data",
            str(data),
        )
    )
    report = capsys.readouterr().out
    assert code == 1 and "FAIL" in report and "metric_01" in report
