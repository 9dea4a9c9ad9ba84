"""`contest evaluate --strategy lakesoul-stock`: the timed spark-submit jobs carry LakeSoul's
packages, jars and class path on their command line, and the result is exact on every
contract case (all cases in one data set, keys prefixed by the case's name)."""

import json
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data.batches import SCHEMA
from tests.support.config import cli
from tests.support.contract_cases import CASES
from tests.support.lakesoul import result_rows

pytestmark = [pytest.mark.spark, pytest.mark.pg, pytest.mark.slow]


def all_cases(folder):
    """Batch i holds every case's rows applied i-th (a case with versions: its batch of
    version i), so one write applies each case's batches in the contract's order."""
    files: dict[int, list[dict]] = {}
    expected = []
    for name, case in CASES.items():
        order = case.get("versions") or {i: i for i in range(len(case["batches"]))}
        for index, rows in enumerate(case["batches"]):
            files.setdefault(order[index], []).extend(
                {**r, "uuid": f"{name}:{r['uuid']}"} for r in rows
            )
        expected += [{**r, "uuid": f"{name}:{r['uuid']}"} for r in case["expected"]]
    folder.mkdir(parents=True)
    for i in sorted(files):
        pq.write_table(pa.Table.from_pylist(files[i], schema=SCHEMA), folder / f"base-{i}.parquet")
    return sorted(expected, key=lambda r: r["uuid"])


def test_evaluate_lakesoul_stock_is_exact_on_the_contract_cases(cfg, pg, tmp_path, capsys):
    expected = all_cases(tmp_path / "data")
    args = ["evaluate", "--strategy", "lakesoul-stock", "--data", str(tmp_path / "data")]
    code = main(cli(cfg, *args, "--results", "-"))  # default cores: what the jobs held
    out, err = capsys.readouterr()
    rec = json.loads(out.strip().splitlines()[-1])
    assert code == 0, err[-3000:]
    assert rec["correct"] and rec["strategy"] == "lakesoul-stock"
    cores = os.cpu_count()
    assert rec["spark_cores"] == {"write": cores, "read": cores} and rec["cores"] == cores
    assert result_rows(rec["result_dir"]) == expected
