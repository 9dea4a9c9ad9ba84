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
