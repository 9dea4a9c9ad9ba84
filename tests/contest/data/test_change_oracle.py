"""The oracle on change data (row kinds, partial columns, keys of one or two columns):
the hand-made cases of tests/support/contract_cases.py, each refusal in one line, and
every operator skipping a row whose file lacks its column."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.data import operators as registry
from contest.data.batches import discover
from contest.data.changes import Changes
from contest.data.oracle import KEY_METADATA, Budget, connect, expected_result, expected_rows
from contest.errors import DataError
from tests.support.contract_cases import CHANGE_CASES, write_change_case

EXPECTED = sorted(n for n, c in CHANGE_CASES.items() if "expected" in c)
REFUSED = sorted(n for n, c in CHANGE_CASES.items() if "refused" in c)


def _run(case, folder, out=None):
    batches = discover(write_change_case(case, folder), schema=None)
    rules = Changes(**case["changes"])
    if out is None:
        return expected_rows(batches, case.get("operators"), rules)
    return expected_result(batches, out, operators=case.get("operators"), changes=rules)


@pytest.mark.parametrize("name", EXPECTED)
def test_change_case(name, tmp_path):
    case = CHANGE_CASES[name]
    assert _run(case, tmp_path / "data") == case["expected"]


@pytest.mark.parametrize("name", REFUSED)
def test_change_case_refused_in_one_line(name, tmp_path):
    case = CHANGE_CASES[name]
    with pytest.raises(DataError) as info:
        _run(case, tmp_path / "data")
    text = str(info.value)
    assert "\n" not in text and case["refused"] in text
    assert text.startswith(str(tmp_path / "data" / "base-"))


def test_the_written_result_keeps_key_types_and_records_the_key(tmp_path):
    """A composite key sorted by its columns in order across key ranges; a binary key
    stays binary; the dropped NULL-key rows counted."""
    case = CHANGE_CASES["composite_int_and_string_key_in_debeziums_spelling"]
    report = _run(case, tmp_path / "data", tmp_path / "out" / "expected.parquet")
    table = pq.read_table(report.path)
    assert table.to_pylist() == case["expected"]
    assert table.schema.field("id").type == pa.int32()
    assert table.schema.metadata[KEY_METADATA] == b'["tenant", "id"]'
    binary = _run(CHANGE_CASES["binary_key_kept_as_binary"], tmp_path / "b", tmp_path / "b.pq")
    assert pa.types.is_binary(pq.read_schema(binary.path).field("bk").type)
    dropped = CHANGE_CASES["composite_key_with_a_NULL_part_dropped_and_counted"]
    assert _run(dropped, tmp_path / "d", tmp_path / "d.pq").null_keys_dropped == dropped["dropped"]


def test_key_ranges_of_a_composite_key_give_the_same_file(tmp_path):
    rows = [
        {"tenant": f"t{i % 7}", "id": i // 7, "op": "insert" if i % 5 else "delete", "requests": i}
        for i in range(700)
    ]
    case = {"batches": [rows[:400], rows[400:]], "changes": {"key": ("tenant", "id")}}
    data = write_change_case({**case, "batches": case["batches"]}, tmp_path / "data")
    batches = discover(data, schema=None)
    rules = Changes(("tenant", "id"), "op")
    one = expected_result(batches, tmp_path / "1.pq", budget=Budget(1 << 30, 1), changes=rules)
    many = expected_result(batches, tmp_path / "5.pq", budget=Budget(1 << 30, 5), changes=rules)
    assert many.parts > 1 and pq.read_table(many.path).equals(pq.read_table(one.path))
    keys = [(r["tenant"], r["id"]) for r in pq.read_table(one.path).to_pylist()]
    assert keys == sorted(keys) and len(keys) == 700 - 140


@pytest.mark.parametrize("name", registry.OPERATOR_NAMES)
def test_every_operator_skips_a_row_whose_file_lacks_its_column(name):
    """The change path marks such a row by NULL in both its value and its order key:
    each operator's aggregate must give what it gives without the row."""
    op = registry.get(name)
    typ = registry.sql_type(op.default_type)
    values = {"int64": ["3", "NULL", "-2", "5"], "float64": ["1.5", "NULL", "2.0", "0.5"]}.get(
        op.default_type, ["'b'", "NULL", "'null'", "'a'"]
    )
    absent = [(f"CAST(NULL AS {typ})", "NULL")]
    present = [(f"CAST({v} AS {typ})", str(i)) for i, v in enumerate(values)]
    con = connect("256MB", 1)
    try:

        def fold(rows):
            body = " UNION ALL ".join(f"SELECT {v} AS c, {o}::HUGEINT AS o" for v, o in rows)
            agg = registry.sql_aggregate(name, "c", "o", op.default_type)
            return con.execute(f"SELECT {agg} FROM ({body})").fetchone()[0]

        for at in range(len(present) + 1):
            assert fold(present[:at] + absent + present[at:]) == fold(present)
        assert fold(absent) == fold([(f"CAST(NULL AS {typ})", "0")])
    finally:
        con.close()


def test_literals_of_each_key_type_read_back_as_themselves():
    from contest.data.change_sql import literal

    con = connect("256MB", 1)
    try:
        for value in ("it's", 7, -(2**40), bytes(range(250, 256)) + b"'\\"):
            assert con.execute(f"SELECT {literal(value)}").fetchone()[0] == value
    finally:
        con.close()
    with pytest.raises(DataError, match="float has no SQL literal"):
        literal(1.5)


def test_the_upsert_path_serves_the_contests_data_alone():
    from contest.data.change_sql import needed

    full = pa.schema([(c, pa.string()) for c in ("uuid", *registry.CONTRACT)])
    assert not needed(Changes(), [full, full], registry.CONTRACT)
    assert needed(Changes(), [full, full.remove(3)], registry.CONTRACT)
    assert needed(Changes(op_column="op"), [full], registry.CONTRACT)
    assert needed(Changes(key=("uuid", "ip")), [full], registry.CONTRACT)
