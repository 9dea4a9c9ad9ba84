"""The harness engine's strategies through `contest evaluate` with the default cores (no
--cores): the jobs report the cores their Spark application held, the score divides by
them, and the result is exact on the contract cases (all cases in one small data set).
The other engines' strategies run with the default cores in their own end-to-end tests
(tests/contest/peers/test_peers_end_to_end.py, test_evaluate_stock.py)."""

import json
import os

import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.config import load_config
from contest.engines import engine_name
from contest.evaluation.strategies import STRATEGIES
from tests.support.combined_cases import write_combined
from tests.support.config import cli

pytestmark = [pytest.mark.spark, pytest.mark.pg, pytest.mark.slow]


@pytest.fixture(scope="module")
def contract_data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("contract") / "data"
    return folder, write_combined(folder)


HARNESS = sorted(
    name
    for name, preset in STRATEGIES.items()
    if engine_name(load_config(preset=preset), "write") == "harness"
)


@pytest.mark.parametrize("strategy", HARNESS)
def test_strategy_is_scored_with_the_cores_its_jobs_held(
    cfg, pg, tmp_path, capsys, contract_data, strategy
):
    data, expected = contract_data
    args = cli(cfg, "evaluate", "--strategy", strategy, "--data", str(data))
    code = main([*args, "--work", str(tmp_path / "work"), "--results", "-"])
    out, err = capsys.readouterr()
    rec = json.loads(out.strip().splitlines()[-1])
    assert code == 0, (rec.get("failed_phase"), rec.get("error"), err[-2000:])
    cores = os.cpu_count()
    assert rec["spark_cores"] == {"write": cores, "read": cores}
    assert rec["cores"] == cores and rec["rows_per_core_s"] > 0
    got = pq.read_table(rec["result_dir"]).to_pylist()
    assert sorted(got, key=lambda r: r["uuid"]) == expected
