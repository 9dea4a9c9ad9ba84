"""History reads of change data through the harness's LakeSoul read: as of a version
(deletes up to it applied) and the changes between two versions (each changed key's
row with its op in the configured spelling, a deleted key's with NULL payload), every
range of a small change table against the oracle (contest/data/change_history.py),
through the Spark read, the in-process read and the read that writes result files,
before and after a compaction."""

from __future__ import annotations

import dataclasses
import itertools

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data import operators as ops
from contest.data.batches import discover, upto
from contest.data.change_history import changed_rows, expected_changes
from contest.data.changes import Changes
from contest.data.oracle import expected_rows
from contest.maintenance.compact import compact
from contest.read.arrow import read_merged
from contest.read.changes import ChangeSpan, net_changes
from contest.read.files import write_merged
from contest.read.job import ReadRequest, change_span, chosen_commits
from meta import catalog
from meta.merge import merge_table
from tests.contest.maintenance.test_erasure import CASE
from tests.contest.read.test_changes import change_config, plain
from tests.support.config import cli
from tests.support.contract_cases import write_change_case
from tests.support.pipeline import read_rows, write

RULES = Changes(op_column="op")


def test_the_changes_between_two_versions_by_hand():
    at_a = [{"uuid": "a", "x": 1}, {"uuid": "b", "x": 2}, {"uuid": "c", "x": 3}]
    at_b = [{"uuid": "a", "x": 5}, {"uuid": "c", "x": 3}, {"uuid": "d", "x": 4}]
    # a updated, b deleted, c untouched, d inserted, e inserted and deleted between.
    between = [{"uuid": "a", "x": 4}, {"uuid": "d", "x": 4}]
    got = changed_rows(at_a, at_b, between, RULES)
    assert got == [
        {"uuid": "a", "x": 4, "op": "update"},
        {"uuid": "b", "x": None, "op": "delete"},
        {"uuid": "d", "x": 4, "op": "insert"},
    ]
    debezium = changed_rows(at_a, at_b, between, Changes(op_column="op", op_values="debezium"))
    assert [r["op"] for r in debezium] == ["u", "d", "c"]


def keyed(rows) -> list[dict]:
    return plain([dict(r) for r in rows], ("uuid",))


@pytest.mark.spark
@pytest.mark.parametrize("spelling", ["lakesoul", "debezium"])
def test_as_of_and_changes_reads_of_change_data_equal_the_oracle(
    spark, pg, cfg, tmp_path, spelling
):
    case = CASE
    if spelling == "debezium":
        kinds = {"insert": "c", "update": "u", "delete": "d"}
        case = {
            **CASE,
            "batches": [[{**r, "op": kinds[r["op"]]} for r in b] for b in CASE["batches"]],
            "changes": {"op_column": "op", "op_values": "debezium"},
        }
    data = write_change_case(case, tmp_path / "data")
    ccfg = change_config(cfg, case)
    rules = Changes(op_column="op", op_values=spelling)
    batches = discover(data, schema=None)
    _, table = write(spark, pg, ccfg, data, tmp_path / f"hist_{spelling}")
    merge_table(pg, table)

    def check_all(label: str, with_spark: bool) -> None:
        """Every version and range in process; with Spark too (its tasks' merge)."""
        for v in range(4):
            want = keyed(expected_rows(upto(batches, v), ops.CONTRACT, rules))
            request = ReadRequest(out_dir="", as_of=v)
            assert keyed(read_merged(pg, ccfg, table, request).to_pylist()) == want, (label, v)
            if with_spark:
                assert keyed(read_rows(spark, pg, ccfg, table, as_of=v)) == want, (label, v)
        for a, b in itertools.combinations(range(4), 2):
            want = keyed(expected_changes(batches, a, b, ops.CONTRACT, rules))
            assert want, (a, b)  # every range changes something here
            request = ReadRequest(out_dir="", from_version=a, to_version=b)
            got = keyed(read_merged(pg, ccfg, table, request).to_pylist())
            assert got == want, (label, a, b)
            if with_spark:
                got = read_rows(spark, pg, ccfg, table, from_version=a, to_version=b)
                assert keyed(got) == want, (label, a, b)

    check_all("written", with_spark=spelling == "lakesoul")
    # The one with deletes both ways: a re-inserted (update), d and e deleted, e new.
    got = keyed(read_rows(spark, pg, ccfg, table, from_version=0, to_version=3))
    d = spelling == "debezium"
    assert [(r["uuid"], r["op"]) for r in got] == [
        ("a", "u" if d else "update"),
        ("b", "u" if d else "update"),
        ("c", "d" if d else "delete"),
        ("d", "d" if d else "delete"),
    ]
    assert got[2]["hostname"] is None and got[2]["requests"] is None
    # The read that writes result files (read.writer = arrow) names the op too.
    versions = {"as_of": None, "from_version": 1, "to_version": 3}
    commits, _, operators = chosen_commits(pg, ccfg, table, versions)
    out = tmp_path / "result"
    span = change_span(ccfg, table, versions)
    write_merged(spark, table, commits, operators, str(out), span=span)
    want = keyed(expected_changes(batches, 1, 3, ops.CONTRACT, rules))
    assert keyed(pq.read_table(out).to_pylist()) == want
    # Across a compaction (unfolded for ranges inside it) the same answers.
    compact(spark, pg, ccfg, table)
    check_all("compacted", with_spark=False)


def test_a_table_without_an_op_column_reads_changes_as_before(cfg):
    plain_cfg = dataclasses.replace(cfg)
    table = dataclasses.make_dataclass("T", [("cdc_column", str)])("")
    assert change_span(plain_cfg, table, {"from_version": 1}) is None  # type: ignore[arg-type]


@pytest.mark.spark
def test_a_changes_read_on_the_command_line_checked_by_the_oracle(spark, pg, cfg, tmp_path):
    """`contest read --from-version 0 --to-version 3` of a change table, then `contest
    check --from-version`: right for its own range, wrong for another's."""
    data = write_change_case(CASE, tmp_path / "data")
    ccfg = change_config(cfg, CASE)
    write(spark, pg, ccfg, data, tmp_path / "hist_cli")
    merge_table(pg, catalog.get_table(pg, "hist_cli"))
    op = ["--set", "workload.op_column=op"]
    out = tmp_path / "changes"
    assert main(cli(cfg, *op, "read", "--table", "hist_cli", "--from-version", "0",
                    "--to-version", "3", "--out", str(out))) == 0  # fmt: skip
    assert {r["op"] for r in pq.read_table(out).to_pylist()} == {"update", "delete"}
    check = ["check", "--result", str(out), "--data", str(data), "--upto-version", "3"]
    assert main(cli(cfg, *op, *check, "--from-version", "0")) == 0
    assert main(cli(cfg, *op, *check, "--from-version", "1")) == 1


def test_net_changes_of_one_bucket_with_a_composite_key():
    """The read's own per-bucket changes (contest/read/changes.py) on an int32 + string
    key: (1, x) updated, (1, y) deleted, (2, x) deleted and inserted again (update),
    (3, z) inserted, (4, w) inserted and deleted between (absent)."""
    schema = pa.schema(
        [("id", pa.int32()), ("t", pa.string()), ("n", pa.int64()), ("op", pa.string())]
    )
    before = pa.Table.from_pylist(
        [
            {"id": 1, "t": "x", "n": 1, "op": "insert"},
            {"id": 1, "t": "y", "n": 2, "op": "insert"},
            {"id": 2, "t": "x", "n": 3, "op": "insert"},
        ],
        schema=schema,
    )
    after = pa.Table.from_pylist(
        [
            {"id": 1, "t": "x", "n": 10, "op": "update"},
            {"id": 1, "t": "y", "n": None, "op": "delete"},
            {"id": 2, "t": "x", "n": None, "op": "delete"},
            {"id": 2, "t": "x", "n": 7, "op": "insert"},
            {"id": 3, "t": "z", "n": 5, "op": "insert"},
            {"id": 4, "t": "w", "n": 6, "op": "insert"},
            {"id": 4, "t": "w", "n": None, "op": "delete"},
        ],
        schema=schema,
    )
    span = ChangeSpan(0, "op", "debezium")
    got = net_changes((before, {}), (after, {}), ["id", "t"], {"n": "SumAll"}, span)
    rows = sorted(got.to_pylist(), key=lambda r: (r["id"], r["t"]))
    assert rows == [
        {"id": 1, "t": "x", "n": 10, "op": "u"},
        {"id": 1, "t": "y", "n": None, "op": "d"},
        {"id": 2, "t": "x", "n": 7, "op": "u"},
        {"id": 3, "t": "z", "n": 5, "op": "c"},
    ]
    assert got.schema.field("id").type == pa.int32()
    # Nothing after A: nothing changed.
    empty = net_changes((before, {}), (schema.empty_table(), {}), ["id", "t"], {}, span)
    assert empty.num_rows == 0 and empty.column_names[-1] == "op"
