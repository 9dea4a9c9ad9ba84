"""History on stock LakeSoul: a table whose workload adds two
columns and widens an int32 column, evolved by LakeSoul's DBManager (`updateTableSchema`)
batch by batch, two of the changes in one write and one in an append; read as of versions
before and after each change through LakeSoul's partition versions and as the changes
of a range, every read checked against the oracle under the newest schema, or refused
in LakeSoul's own words where its reader cannot read the files together. Real jars,
one child JVM; the pure parts (the schema plan, the partition versions a read takes)
beside."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pytest

from contest.config import load_config
from contest.data.batches import discover, upto
from contest.data.checker import compare
from contest.data.generator import generate
from contest.data.oracle import expected_result
from contest.data.stock_layout import evolved, schema_plan, stored_schema
from contest.data.workload import batch_schema, contract_operators, schema_of_batch
from contest.errors import ReadError, SchemaEvolutionError
from contest.read.stock import (
    StockSpan,
    merge_refusal,
    partition_version_of,
    read_columns,
    stock_span,
)
from tests.support.config import EVOLVING_HISTORY
from tests.support.lakesoul import run_child

EVOLVING = {**EVOLVING_HISTORY, "workload.name": "stock-history"}

# name -> the read's span and the batches (versions) the oracle merges for it. Refused
# (name -> a word of the refusal): clicks (summed, added at batch 2) over commits of
# which some lack it (SumAll would make the sum NULL); hits int32 in batches 0-2 and
# int64 in batch 3 (LakeSoul 2.6.2's reader merges the files' schemas strictly).
REFUSED = {
    "head": "clicks is summed by LakeSoul's SumAll",
    "as_of_2": "2 of the read's 3 commits were written before it existed",
    "changes_0_2": "clicks is summed by LakeSoul's SumAll",
    "changes_1": "Fail to merge schema field 'hits'",
}
READS = {
    "head": ({}, range(0, 4)),
    "as_of_0": ({"as_of": 0}, range(0, 1)),
    "as_of_1": ({"as_of": 1}, range(0, 2)),
    "as_of_2": ({"as_of": 2}, range(0, 3)),
    "changes_0_2": ({"from": 0, "to": 2}, range(1, 3)),
    "changes_1": ({"from": 1}, range(2, 4)),
    "changes_2_3": ({"from": 2, "to": 3}, range(3, 4)),
}


@pytest.fixture(scope="module")
def stock_history(cfg, pg, tmp_path_factory):
    """Batches 0-1 (tag added by the second) written, 2-3 appended (clicks added, hits
    widened), then every read of READS and one as of a version before the table."""
    tmp = tmp_path_factory.mktemp("stock-history")
    w = load_config(overrides=EVOLVING).workload
    generate(tmp / "data", 1.0, 5, workload=w)
    batches = discover(tmp / "data", None, schema_of_batch(w))
    table = tmp / "tables" / f"stock_history_{uuid.uuid4().hex[:8]}"
    common = {"data": str(tmp / "data"), "table": str(table), "workload": EVOLVING}
    steps: list[dict] = [
        {"do": "stock_append", **common, "only": [0, 1]},
        {"do": "stock_append", **common, "only": [2, 3]},
    ]
    expected = {}
    for name, (span, versions) in READS.items():
        steps.append(
            {"do": "stock_read", "table": table.name, "out": str(tmp / name), **span,
             "workload": EVOLVING, "error": str(tmp / f"{name}.txt")}
        )  # fmt: skip
        expected[name] = tmp / f"expected-{name}.parquet"
        chosen = [b for b in batches if b.version in versions]
        expected_result(chosen, expected[name], operators=contract_operators(w))
    assert upto(batches, 3) == batches
    steps.append(
        {"do": "stock_read", "table": table.name, "out": str(tmp / "before"), "as_of": -1,
         "workload": EVOLVING, "error": str(tmp / "before.txt")}
    )  # fmt: skip
    run_child(cfg, steps, tmp)
    return tmp, expected


@pytest.mark.slow
@pytest.mark.spark  # the jobs run in a child process
def test_stock_lakesoul_reads_its_history_under_the_newest_schema_exactly(stock_history):
    tmp, expected = stock_history
    for name in READS:
        if name in REFUSED:
            continue
        assert (tmp / f"{name}.txt").read_text() == "", name
        check = compare(tmp / name, expected[name])
        assert check.ok, (name, check.render())


@pytest.mark.slow
@pytest.mark.spark
def test_reads_lakesoul_cannot_answer_are_refused_in_one_line(stock_history):
    tmp, _ = stock_history
    for name, word in REFUSED.items():
        refused = (tmp / f"{name}.txt").read_text()
        assert refused.startswith("lakesoul-stock: ") and word in refused, (name, refused)
        assert "\n" not in refused
        assert not (tmp / name).exists()


@pytest.mark.slow
@pytest.mark.spark
def test_a_read_before_the_first_batch_is_refused_in_one_line(stock_history):
    tmp, _ = stock_history
    refused = (tmp / "before.txt").read_text()
    assert refused == "version -1: the table holds no batch at or before it"


def test_the_schema_plan_adds_columns_at_the_end_and_widens_in_place():
    w = load_config(overrides=EVOLVING).workload
    ops = contract_operators(w)
    stored = [stored_schema(batch_schema(w, i), ops) for i in range(4)]
    assert "tag" not in stored[0].names and "clicks_nonnull" not in stored[1].names
    assert stored[2].field("clicks_nonnull").type == pa.int64()
    plan = schema_plan(None, stored)
    assert [[str(c) for c in done] for _, done in plan] == [
        [],
        ["added tag string"],
        ["added clicks bigint", "added clicks_nonnull bigint"],
        ["widened hits int->bigint"],
    ]
    final = plan[-1][0]
    assert final.names[: len(stored[0].names)] == stored[0].names  # nothing moved
    assert final.field("hits").type == pa.int64()
    assert plan[2][0].field("hits").type == pa.int32()
    # Appended onto the table as it is after batch 1: the same schemas from there on.
    assert [s for s, _ in schema_plan(plan[1][0], stored[2:])] == [s for s, _ in plan[2:]]


def test_a_narrower_batch_is_written_in_the_tables_type_and_a_retyping_refused():
    table = pa.schema([("uuid", pa.string()), ("hits", pa.int64())])
    same, done = evolved(table, pa.schema([("uuid", pa.string()), ("hits", pa.int32())]))
    assert same == table and done == []
    with pytest.raises(SchemaEvolutionError, match="retyped hits bigint->string"):
        evolved(table, pa.schema([("uuid", pa.string()), ("hits", pa.string())]))


def test_a_read_takes_the_partition_version_the_versions_commit_made():
    partitions = [(0, ["a"]), (1, ["a", "b"]), (2, ["a", "b"]), (3, ["a", "b", "c"])]
    versions = {10: "a", 20: "b", 30: "c"}
    assert partition_version_of(partitions, "b") == 1
    with pytest.raises(ReadError, match="no partition version"):
        partition_version_of(partitions, "z")
    assert stock_span(versions, partitions) == StockSpan(version=30)
    assert stock_span(versions, partitions, as_of=25) == StockSpan(end=1, version=20)
    assert stock_span(versions, partitions, as_of=30) == StockSpan(end=3, version=30)
    assert stock_span(versions, partitions, from_version=10, to_version=25) == StockSpan(
        end=1, start=0, changes=True, version=20
    )
    # From before the first batch: from the beginning; to the newest by default.
    assert stock_span(versions, partitions, from_version=5) == StockSpan(
        end=3, start=None, changes=True, version=30
    )
    with pytest.raises(ReadError, match="not before"):
        stock_span(versions, partitions, from_version=20, to_version=20)
    with pytest.raises(ReadError, match="no batch at or before"):
        stock_span(versions, partitions, as_of=5)


def test_a_read_leaves_out_columns_no_commit_holds_and_refuses_a_half_held_sum():
    columns = ["uuid:string", "tag:string", "clicks:long", "clicks_nonnull:long"]
    ops = {"tag": "UseLastNotNull", "clicks": "SumAll"}
    before = ("uuid",)
    after = ("uuid", "tag", "clicks", "clicks_nonnull")
    assert read_columns(columns, [before], ops) == ["uuid:string"]
    assert read_columns(columns, [after, after], ops) == columns
    assert read_columns(columns, [()], ops) == columns  # a commit naming none: all
    # tag (last non-null) reads NULL from a file without it: answered.
    assert read_columns(columns[:2], [before, ("uuid", "tag")], ops) == columns[:2]
    with pytest.raises(ReadError, match="1 of the read's 2 commits"):
        read_columns(columns, [before, after], ops)


def test_lakesouls_schema_merge_failure_is_told_in_its_words_in_one_line():
    trace = (
        "py4j.protocol.Py4JJavaError: An error occurred\n\tat x\nCaused by: "
        "java.io.IOException: Init native reader failed with error: Arrow error: Schema "
        "error: Fail to merge schema field 'hits' because the from data_type = Int64 does "
        "not equal Int32\n\tat y"
    )
    why = merge_refusal(RuntimeError(trace))
    assert why is not None and "\n" not in why
    assert why.endswith(
        "Fail to merge schema field 'hits' because the from data_type = Int64 does not equal Int32"
    )
    assert merge_refusal(RuntimeError("No space left on device")) is None
