"""Schema evolution: a workload that adds columns at chosen
batches and widens an int32 column to int64; the oracle reads every batch under the
newest schema (an added column NULL before it exists, the widened one int64
throughout), as of a version and for the changes between two versions."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.config import load_config
from contest.data.batches import Batch, discover, upto
from contest.data.generator import generate
from contest.data.oracle import expected_result, expected_rows
from contest.data.workload import (
    batch_schema,
    contract_operators,
    schema_of_batch,
    workload_schema,
    workload_settings,
)
from contest.errors import ConfigError, DataError
from contest.workload.plan import build_plan, load_plan

EVOLVING = {
    "workload.batches": 4,
    "workload.columns": {"tag": "UseLastNotNull", "clicks": "SumAll", "hits": "SumAll"},
    "workload.added": {"tag": 1, "clicks": 2},
    "workload.widened": {"hits": 3},
}


def test_each_batch_has_its_own_schema_and_the_newest_has_every_column():
    w = load_config(overrides=EVOLVING).workload
    names = [batch_schema(w, i).names[8:] for i in range(4)]
    assert names == [["hits"], ["tag", "hits"], ["tag", "clicks", "hits"]] + [
        ["tag", "clicks", "hits"]
    ]
    hits = [batch_schema(w, i).field("hits").type for i in range(4)]
    assert hits == [pa.int32(), pa.int32(), pa.int32(), pa.int64()]
    assert workload_schema(w).field("hits").type == pa.int64()
    assert batch_schema(w, 3) == workload_schema(w)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"workload.added": {"nope": 1}}, "workload.added.nope: not one of the workload's extra"),
        ({"workload.added": {"tag": 0}}, "workload.added.tag: batch 0 is not one of 1-3"),
        ({"workload.widened": {"hits": 4}}, "workload.widened.hits: batch 4 is not one of 1-3"),
        ({"workload.widened": {"tag": 2}}, "workload.widened.tag: only an int64 column"),
        ({"workload.added": {"tag": "x"}}, "workload.added.tag: expected an integer"),
    ],
)
def test_bad_evolution_settings_are_one_line_errors(overrides, message):
    with pytest.raises(ConfigError, match=message):
        load_config(overrides={**EVOLVING, **overrides})


def test_generated_batches_carry_their_schema_and_discover_checks_it(tmp_path):
    w = load_config(overrides=EVOLVING).workload
    generate(tmp_path, 0.0001, workload=w, progress=False)
    for i in range(4):
        assert pq.read_schema(tmp_path / f"base-{i}.parquet").remove_metadata() == batch_schema(
            w, i
        )
    assert len(discover(tmp_path, None, schema_of_batch(w))) == 4
    # One schema for every batch (the newest) refuses the older batches, naming one.
    with pytest.raises(DataError, match="base-0.parquet: schema differs: missing column"):
        discover(tmp_path, None, workload_schema(w))


def write(tmp_path, i, table) -> Batch:
    path = tmp_path / f"base-{i}.parquet"
    pq.write_table(table, path)
    return Batch(i, str(path), table.num_rows, path.stat().st_size, i)


@pytest.fixture
def evolved(tmp_path):
    """Three tiny batches: v1 has no tag and an int32 hits; v2 adds tag; v3 widens hits."""
    b0 = pa.table(
        {"uuid": ["a", "b"], "hits": pa.array([1, 2], pa.int32())},
    )
    b1 = pa.table(
        {"uuid": ["a", "c"], "tag": ["x", None], "hits": pa.array([10, 20], pa.int32())},
    )
    b2 = pa.table(
        {"uuid": ["c", "d"], "tag": [None, "y"], "hits": pa.array([2**40, 5], pa.int64())},
    )
    return [write(tmp_path, i, t) for i, t in enumerate((b0, b1, b2))]


OPS = {"tag": "UseLastNotNull", "hits": "SumAll"}


def test_the_oracle_reads_history_under_the_newest_schema(evolved):
    # As of version 0: tag did not exist yet, it is a NULL string column all the same.
    assert expected_rows(upto(evolved, 0), OPS) == [
        {"uuid": "a", "tag": None, "hits": 1},
        {"uuid": "b", "tag": None, "hits": 2},
    ]
    # Every version: old rows read tag as NULL, hits summed as int64 across the widening.
    assert expected_rows(evolved, OPS) == [
        {"uuid": "a", "tag": "x", "hits": 11},
        {"uuid": "b", "tag": None, "hits": 2},
        {"uuid": "c", "tag": None, "hits": 20 + 2**40},
        {"uuid": "d", "tag": "y", "hits": 5},
    ]


def test_the_oracle_of_a_change_read_and_its_file_types(evolved, tmp_path):
    # The changes after version 0 up to 2: batches 1 and 2 only.
    changes = [b for b in evolved if b.version > 0]
    assert expected_rows(changes, OPS) == [
        {"uuid": "a", "tag": "x", "hits": 10},
        {"uuid": "c", "tag": None, "hits": 20 + 2**40},
        {"uuid": "d", "tag": "y", "hits": 5},
    ]
    out = expected_result(upto(evolved, 0), tmp_path / "expected.parquet", operators=OPS)
    schema = pq.read_schema(out.path)
    assert schema.field("tag").type == pa.string() and schema.field("hits").type == pa.int64()


def test_the_workload_file_plans_reads_and_changes_across_each_change():
    settings = workload_settings("schema-evolution")
    cfg = load_config(overrides=settings)
    w = cfg.workload
    assert w.added and w.widened
    assert {operators for c, operators in contract_operators(w).items() if c in w.added} == {
        "UseLastNotNull",
        "SumAll",
    }
    steps = load_plan("schema-evolution", w.batches)
    changes = [(s.from_version, s.to_version) for s in steps if s.kind == "changes"]
    as_of = [s.as_of for s in steps if s.kind == "read" and s.as_of is not None]
    for first in (*w.added.values(), *w.widened.values()):
        assert any(a < first <= b for a, b in changes), first
        assert any(v < first for v in as_of) and any(v >= first for v in as_of), first


@pytest.mark.parametrize(
    ("phase", "message"),
    [
        ({"kind": "changes", "from": 1}, "from and to are both needed"),
        ({"kind": "changes", "from": 1, "to": 1}, "from 1 is not before to 1"),
        ({"kind": "changes", "from": 0, "to": 3}, "to 3 is past the newest batch upserted, 1"),
    ],
)
def test_bad_change_phases_are_one_line_errors(phase, message):
    data = {"phase": [{"kind": "upsert", "batches": "0-1"}, phase]}
    with pytest.raises(ConfigError, match=message):
        build_plan(data, 4, "my.toml")


def test_the_workloads_guide_shows_the_workload_file():
    """The workloads guide shows the file's [workload] tables as they are."""
    from tests.support.config import REPO

    text = (REPO / "docs" / "guides" / "workloads.md").read_text()
    section = text.split("## Schema evolution", 1)[1].split("\n## ", 1)[0]
    shown = section.split("```toml\n", 1)[1].split("```", 1)[0]
    body = (REPO / "workloads" / "schema-evolution.toml").read_text()
    start = body.index("[workload]")
    assert body[start : body.index("[[phase]]")].strip() == shown.strip()
