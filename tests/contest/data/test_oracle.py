"""The oracle against rows written out by hand, one case per rule of the contract."""

import pytest

from contest.data.batches import discover
from contest.data.oracle import expected_result, expected_rows
from tests.support.contract_cases import CASES, versions_spec, write_case


@pytest.mark.parametrize("name", sorted(CASES))
def test_contract_case(name, tmp_path):
    case = CASES[name]
    batches = discover(write_case(case, tmp_path / "data"), versions_spec(case))
    assert expected_rows(batches) == case["expected"]


def test_written_result_is_sorted_int64(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    case = CASES["sums_past_int32"]
    batches = discover(write_case(case, tmp_path / "data"))
    report = expected_result(batches, tmp_path / "out" / "expected.parquet")
    table = pq.read_table(report.path)
    assert table.schema.field("requests").type == pa.int64()
    assert table.to_pylist() == case["expected"]
    assert report.rows == 1


def test_key_ranges_give_the_same_file_as_one_aggregate(tmp_path):
    """Bounded memory: the keys aggregated in ranges, concatenated in order, are the
    single aggregate row by row (NULL values included)."""
    import pyarrow.parquet as pq

    from contest.data.generator import generate
    from contest.data.oracle import Budget

    generate(tmp_path / "data", 0.0005, seed=5, nulls=True, progress=False)
    batches = discover(tmp_path / "data")
    one = expected_result(batches, tmp_path / "one.parquet", budget=Budget(1 << 30, parts=1))
    many = expected_result(batches, tmp_path / "many.parquet", budget=Budget(1 << 30, parts=7))
    assert (one.parts, many.parts) == (1, 7)
    assert pq.read_table(many.path).equals(pq.read_table(one.path))
    assert many.rows == one.rows == 10_000


def test_parts_follow_the_data_and_the_budget():
    from contest.data.oracle import Budget, machine_budget

    assert Budget(1000).parts_for(2500) == 3
    assert Budget(1000, parts=2).parts_for(10**9) == 2
    limit = machine_budget(0.4).memory_limit
    assert 512 << 20 <= limit <= 4 << 30
    assert machine_budget(fixed=123).memory_limit == 123


def test_connect_takes_any_temp_folder_and_its_limits(tmp_path):
    """A quote in the temporary folder's path once ended the SQL string it was set by."""
    from contest.data.oracle import connect

    temp = tmp_path / "it's here"
    temp.mkdir()
    con = connect(memory_limit=256 << 20, threads=1, temp_dir=str(temp))
    try:
        setting = "SELECT current_setting(?)"
        assert con.execute(setting, ["temp_directory"]).fetchone()[0] == str(temp)
        assert con.execute(setting, ["threads"]).fetchone()[0] == 1
        assert con.execute(setting, ["memory_limit"]).fetchone()[0] == "256.0 MiB"
    finally:
        con.close()
