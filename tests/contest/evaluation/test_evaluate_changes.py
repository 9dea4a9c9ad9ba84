"""Change data end to end: `contest gen --workload cdc`, then `contest evaluate` of a
strategy whose format declares no deletes, refused in the data phase before any table is
written, and of iceberg-mor, whose own MERGE takes the deletes and the partial batches,
checked by the oracle (whole spark-submit processes; small data)."""

import json

import pytest

from contest.cli.main import main
from tests.support.config import cli

pytestmark = [pytest.mark.spark]


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cdc_data(cfg, tmp_path_factory):
    data = tmp_path_factory.mktemp("cdc") / "data"
    args = cli(cfg, "gen", "--workload", "cdc", "--scale", "0.0005", "--out", str(data))
    assert main(args) == 0
    return data


def _evaluate(cfg, tmp_path, strategy, data):
    args = cli(cfg, "evaluate", "--workload", "cdc", "--strategy", strategy, "--data", str(data))
    return main([*args, "--cores", "2", "--work", str(tmp_path / "work"), "--results", "-"])


def test_a_format_without_deletes_is_refused_before_its_table_is_written(
    cfg, tmp_path, capsys, cdc_data
):
    capsys.readouterr()
    code = _evaluate(cfg, tmp_path, "paimon-agg", cdc_data)
    rec = _last_json(capsys.readouterr().out)
    assert code != 0 and not rec["correct"]
    assert rec["failed_phase"] == "data"
    assert rec["error"].startswith(
        "workload cdc: paimon-agg: cannot delete rows (op column 'op'): Paimon 0.9's "
        "aggregation engine retracts a -D row field by field and keeps the key"
    )
    assert not list((tmp_path / "work").rglob("*.parquet"))  # no table, no result


@pytest.mark.slow  # two spark-submit jobs and eleven MERGEs: about a minute
def test_iceberg_merges_the_cdc_workload_as_the_oracle(cfg, tmp_path, capsys, cdc_data):
    code = _evaluate(cfg, tmp_path, "iceberg-mor", cdc_data)
    out, err = capsys.readouterr()
    rec = _last_json(out)
    assert code == 0, err[-3000:]
    assert rec["correct"] and rec["check"].startswith("OK")
    operations = [b["operation"] for b in rec["peer_write"]["batches"]]
    assert all("after a key's last delete" in o for o in operations), operations
