"""The lakesoul-stock engine (LakeSoul's DBManager, NativeIOWriter, NativeIOReader and merge
operators, real jars): every contract case exact, and its pure parts."""

import pytest

from contest.errors import ReadError
from contest.read.stock import bucket_files, stock_operators
from contest.write.stock import stock_schema
from tests.support.contract_cases import CASES, versions_spec, write_case
from tests.support.lakesoul import result_rows, run_child


@pytest.mark.slow
@pytest.mark.spark  # the jobs run in a child process
def test_every_contract_case_is_exact(cfg, pg, tmp_path):
    steps, outs = [], {}
    for name, case in CASES.items():
        data = write_case(case, tmp_path / "data" / name)
        table = tmp_path / "tables" / f"stock_{name.lower()}"
        outs[name] = tmp_path / "out" / name
        steps.append(
            {"do": "stock_write", "data": str(data), "table": str(table),
             "versions": versions_spec(case)}
        )  # fmt: skip
        steps.append({"do": "stock_read", "table": table.name, "out": str(outs[name])})
    run_child(cfg, steps, tmp_path)
    for name, case in CASES.items():
        assert result_rows(outs[name]) == case["expected"], name


def test_stock_schema_adds_a_count_per_summed_column():
    assert stock_schema().names[-1] == "requests_nonnull"
    assert str(stock_schema().field("requests_nonnull").type) == "int64"


def test_operators_default_to_the_contract_on_a_stock_table():
    cols = [f"{f.name}:{'long' if str(f.type) == 'int64' else 'string'}" for f in stock_schema()]
    ops = stock_operators(cols, ("uuid",), {})
    assert ops["requests"] == ops["requests_nonnull"] == "SumAll"
    assert ops["name"] == ops["ip"] == "UseLastNotNull" and "uuid" not in ops


def test_operators_lakesoul_lacks_are_refused():
    with pytest.raises(ReadError, match="no such operator"):
        stock_operators(["uuid:string", "name:string"], ("uuid",), {"name": "Mystery"})
    with pytest.raises(ReadError, match="no such column"):
        stock_operators(["uuid:string"], ("uuid",), {"nope": "SumAll"})


def test_bucket_files_keep_commit_order():
    commits = [["t/part-a_0001.parquet", "t/part-a_0000.parquet"], ["t/part-b_0001.parquet"]]
    assert bucket_files(commits) == [
        ["t/part-a_0000.parquet"],
        ["t/part-a_0001.parquet", "t/part-b_0001.parquet"],
    ]
