"""A workload's discovery of batch files of change data: the op column and files holding
some of the payload columns taken (the partial ones recorded), the rest refused in one
line naming the file."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.config import load_config
from contest.data.batches import SCHEMA, discover
from contest.data.workload import null_overwriting, schema_of_batch, workload_schema
from contest.errors import DataError
from tests.support.contract_cases import CHANGE_CASES, full, write_change_case


def _workload(**overrides):
    return load_config(overrides={f"workload.{k}": v for k, v in overrides.items()}).workload


def test_the_op_column_and_partial_files_are_taken_and_the_partial_ones_recorded(tmp_path):
    case = CHANGE_CASES["delete_of_an_unknown_key_and_a_key_left_deleted"]
    data = write_change_case(case, tmp_path / "d")
    found = schema_of_batch(_workload(op_column="op"))
    assert [b.index for b in discover(data, None, found)] == [0, 1]
    # base-1 holds uuid and op alone: every payload column absent.
    assert found.partial == {1: tuple(SCHEMA.names[1:])}
    assert found.key_types == {"uuid": "string"}
    # The op column is in no schema of the result.
    assert found.table_schema() == SCHEMA


def test_a_composite_key_is_first_in_the_tables_schema_with_the_files_types(tmp_path):
    case = CHANGE_CASES["composite_int_and_string_key_in_debeziums_spelling"]
    data = write_change_case(case, tmp_path / "d")
    w = _workload(op_column="op", op_values="debezium", key=["tenant", "id"])
    found = schema_of_batch(w)
    discover(data, None, found)
    assert found.key_types == {"tenant": "string", "id": "int32"}
    schema = found.table_schema()
    assert schema.names == ["tenant", "id", *SCHEMA.names[1:]]  # uuid is no column of it
    assert schema.field("id").type == pa.int32()
    assert set(found.partial) == {0, 1}
    # Unknown key types: string.
    assert workload_schema(w).field("id").type == pa.string()


@pytest.mark.parametrize(
    "rows,overrides,message",
    [
        ([{"op": "insert", "ip": "i"}], {"op_column": "op"}, "no key column 'uuid'"),
        ([{"uuid": "a", "ip": "i"}], {"op_column": "op"}, "no op column 'op'"),
        ([{"uuid": "a", "op": 1}], {"op_column": "op"}, "op column 'op' is int64, not a string"),
        ([{"uuid": 1.5}], {}, "key column 'uuid' is double; a key is string, int32"),
        ([{"uuid": "a", "requests": "7"}], {}, "column requests is string, expected int64"),
        ([{"uuid": "a", "op": "insert"}], {}, "unexpected column(s) op"),
    ],
)
def test_a_file_without_the_key_or_of_a_wrong_type_is_one_line(tmp_path, rows, overrides, message):
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "base-0.parquet")
    with pytest.raises(DataError) as exc:
        discover(tmp_path, None, schema_of_batch(_workload(**overrides)))
    text = str(exc.value)
    assert message in text and "base-0.parquet" in text and "\n" not in text


def test_a_key_of_two_types_across_files_is_refused(tmp_path):
    pq.write_table(pa.Table.from_pylist([{"uuid": "a"}]), tmp_path / "base-0.parquet")
    pq.write_table(pa.Table.from_pylist([{"uuid": 1}]), tmp_path / "base-1.parquet")
    with pytest.raises(DataError, match="base-1.parquet: key column 'uuid' is int64, an earlier"):
        discover(tmp_path, None, schema_of_batch(_workload()))


def test_whole_files_are_not_partial_and_null_overwriting_columns_are_named(tmp_path):
    data = write_change_case({"batches": [[full("insert", "a")]]}, tmp_path / "d")
    found = schema_of_batch(_workload(op_column="op"))
    discover(data, None, found)
    assert found.partial == {}
    assert null_overwriting(_workload()) == ()
    assert null_overwriting(_workload(columns={"note": "UseLast", "n": "SumAll"})) == ("note",)
