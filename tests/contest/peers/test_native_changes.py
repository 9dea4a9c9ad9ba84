"""Change data through the native libraries (contest/peers/native/): delta-rs's own MERGE
and pyiceberg's own delete and upsert, each batch collapsed by key with the delete rule
(contest/peers/native/collapse.py). The hand change cases (deletes, a delete then a
re-insert inside one batch, files lacking columns, a NULL told from an absent column, a
two-column and a binary key, NULL key parts dropped), random change batches and the cdc
generator's workload, each written and read by the real library (no Spark, no JVM) and
checked against the oracle; the pure pieces on their own; and every other native library
refusing change data in one line naming what it lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.config import load_config
from contest.data import operators as ops
from contest.data.batches import Batch, discover
from contest.data.changes import Changes
from contest.data.workload import schema_of_batch
from contest.errors import ConfigError, DataError, SchemaEvolutionError
from contest.evaluation.strategies import STRATEGIES
from contest.peers import change_check
from contest.peers.change_merge import REPLACE
from contest.peers.native.collapse import (
    collapsed_changes,
    folded_changes,
    key_codes,
    without_null_keys,
)
from contest.peers.native.job import check_schemas, run_native_read, run_native_write
from tests.support import peer_changes
from tests.support.config import cli
from tests.support.contract_cases import CHANGE_CASES, write_change_case

NATIVE = ["delta-rs", "pyiceberg"]
RANDOM_SEEDS = range(3)
OPS = {"ip": ops.USE_LAST_NOT_NULL, "requests": ops.SUM_ALL, "note": ops.USE_LAST}


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, dict]:
    """Every hand change case with an answer, a live key re-inserted inside a batch and
    random change batches, each with the oracle's answer."""
    return peer_changes.change_cases(tmp_path_factory.mktemp("native_changes"), RANDOM_SEEDS)


def run_native(strategy: str, cases: dict[str, dict], tmp_path: Path) -> dict[str, dict]:
    """Every case written and read by the strategy's native jobs in this process (one
    core), as peer_changes.run reports a Spark strategy's."""
    out = {}
    for name, case in cases.items():
        overrides = {**case["overrides"], "spark.master": "local[1]"}
        cfg = load_config(preset=STRATEGIES[strategy], overrides=overrides)
        table, result = tmp_path / name / "t", tmp_path / name / "out"
        report = run_native_write(cfg, case["data"], table)
        if report.ok:
            run_native_read(cfg, table, str(result), overwrite=False)
        out[name] = {
            "ok": report.ok,
            "summary": report.summary(),
            "operations": [b.operation for b in report.batches],
            "out": str(result),
        }
    return out


@pytest.mark.parametrize("strategy", NATIVE)
def test_change_data_through_the_native_library_equals_the_oracle(strategy, cases, tmp_path):
    results = run_native(strategy, cases, tmp_path)
    partial = peer_changes.assert_changes_applied(results, cases)
    # Its first batch holds every column: the upsert's create; the others the change path.
    assert partial["operations"][0] == "create+append"
    assert all("partial columns" in o for o in partial["operations"][1:]), partial
    two = pq.read_table(results["composite_int_and_string_key_in_debeziums_spelling"]["out"])
    assert two.column_names[:2] == ["tenant", "id"] and two.schema.field("id").type == pa.int32()
    binary = pq.read_table(results["binary_key_kept_as_binary"]["out"])
    typ = binary.schema.field("bk").type  # binary kept binary (pyiceberg reads large types)
    assert pa.types.is_binary(typ) or pa.types.is_large_binary(typ)


@pytest.fixture(scope="module")
def cdc_data(cfg, tmp_path_factory):
    """The cdc generator's workload at a tiny scale (Debezium's spelling, deletes,
    re-inserts, update batches of one to three columns)."""
    data = tmp_path_factory.mktemp("cdc") / "data"
    assert main(cli(cfg, "gen", "--workload", "cdc", "--scale", "0.0002", "--out", str(data))) == 0
    return data


@pytest.mark.parametrize("strategy", NATIVE)
def test_a_native_strategy_evaluates_the_cdc_workload_exactly(
    cfg, tmp_path, capsys, cdc_data, strategy
):
    """`contest evaluate`: the data phase lets the change data through, the library's
    timed Write and Read jobs (Python processes) apply it, the oracle checks it."""
    capsys.readouterr()
    args = cli(cfg, "evaluate", "--workload", "cdc", "--strategy", strategy)
    code = main(
        [*args, "--data", str(cdc_data), "--cores", "2", "--work", str(tmp_path / "w")]
        + ["--results", "-"]
    )
    out, err = capsys.readouterr()
    rec = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and rec["correct"], err[-3000:]
    operations = [b["operation"] for b in rec["peer_write"]["batches"]]
    assert len(operations) == 11 and operations[0].startswith("create+change")
    assert all("after a key's last delete" in o for o in operations), operations
    assert "spark-submit" not in err


def _found(cfg, case: str, tmp_path: Path):
    found = schema_of_batch(cfg.workload)
    discover(write_change_case(CHANGE_CASES[case], tmp_path / "d"), None, found)
    return found


@pytest.mark.parametrize(
    ("name", "strategy", "lacks"),
    [
        ("lakesoul-py", "lakesoul-py", "lakesoul 2.0.0's Python scan does not apply CDC deletes"),
        ("pypaimon", "pypaimon", "pypaimon 2.1.0 requires polars<2"),
        ("hudi-rs", "", "hudi-rs (hudi 0.5.0) has no writer API: it reads only"),
    ],
)
def test_every_other_native_library_refuses_change_data_in_one_line(
    tmp_path, name, strategy, lacks
):
    cfg = load_config(overrides={"workload.op_column": "op", "peer.format": name})
    found = _found(cfg, "delete_then_reinsert_starts_the_key_afresh", tmp_path)
    why = change_check.refusal_of(cfg, found, strategy)
    assert why is not None and "\n" not in why
    assert why.startswith(f"{name}: cannot delete rows (op column 'op'): {lacks}")


def test_a_native_write_refuses_change_data_before_its_folder_is_touched(tmp_path):
    cfg = load_config(
        preset=STRATEGIES["lakesoul-py"],
        overrides={"workload.op_column": "op", "spark.master": "local[1]"},
    )
    data = write_change_case(
        CHANGE_CASES["delete_then_reinsert_starts_the_key_afresh"], tmp_path / "d"
    )
    with pytest.raises(ConfigError, match="^lakesoul-py: cannot delete rows"):
        run_native_write(cfg, data, tmp_path / "t")
    assert not (tmp_path / "t").exists()


# -- the pure pieces ----------------------------------------------------------------


def test_key_codes_group_binary_and_two_column_keys():
    one, two = bytes(16), bytes(range(16))
    binary = pa.array([one, two, one], pa.binary(16))
    assert key_codes([binary]).tolist() in ([0, 1, 0], [1, 0, 1])
    tenant = pa.chunked_array([["a", "a"], ["b", "a"]])
    ident = pa.chunked_array([[1, 2], [1, 1]], pa.int32())
    codes = key_codes([tenant, ident])
    assert codes[0] == codes[3] and len(set(codes.tolist())) == 3
    assert key_codes([pa.array([], pa.string())]).tolist() == []


ROWS = pa.table(
    {
        "uuid": ["a", "a", "a", "b", "b", "c", "a"],
        "op": ["insert", "update", "delete", "insert", "delete", "update", "insert"],
        "ip": ["1", "2", None, "3", None, None, None],
        "requests": [1, 2, None, 3, None, 4, 5],
    }
)


def test_a_batch_collapses_by_the_delete_rule():
    change = collapsed_changes(ROWS, Changes(op_column="op"), OPS, "base-1.parquet")
    got = {r["uuid"]: r for r in change.rows.to_pylist()}
    # a: only the re-insert after its last delete folds, and it replaces the table's row.
    assert got["a"] == {"uuid": "a", "op": "insert", REPLACE: True, "ip": None, "requests": 5}
    # b: its last row a delete: a delete row, no value.
    assert got["b"] == {"uuid": "b", "op": "delete", REPLACE: False, "ip": None, "requests": None}
    assert got["c"]["requests"] == 4 and not got["c"][REPLACE]
    assert change.columns == ("ip", "requests")  # the batch's; note it lacks
    order = change.rows.column("uuid").to_pylist()
    assert change.deletes().tolist() == [u == "b" for u in order]
    assert change.replaces().tolist() == [u == "a" for u in order]


def test_without_row_kinds_every_row_folds():
    change = collapsed_changes(ROWS.drop_columns(["op"]), Changes(), OPS, "f")
    got = {r["uuid"]: r["requests"] for r in change.rows.to_pylist()}
    assert got == {"a": 8, "b": 3, "c": 4} and not change.deletes().any()
    assert change.rows.column_names == ["uuid", "ip", "requests"]


def test_a_null_key_part_is_dropped_or_refused_naming_the_file():
    rows = pa.table({"tenant": ["t", None], "id": pa.array([1, 2], pa.int32())})
    key = ("tenant", "id")
    kept = without_null_keys(rows, Changes(key=key, drop_null_keys=True), "base-0.parquet")
    assert kept.num_rows == 1
    with pytest.raises(DataError, match="^base-0.parquet: row.s. with a NULL key column"):
        without_null_keys(rows, Changes(key=key), "base-0.parquet")


def test_a_change_batch_folds_onto_the_tables_rows():
    """A held column by its operator onto the table's value, a lacked one kept (the
    batch lacks note); a replaced key's row the batch's, NULL where it lacks a column;
    a deleted key has none (`current`: the table's rows of the folded keys only)."""
    schema = pa.schema(
        [
            ("uuid", pa.string()),
            ("ip", pa.string()),
            ("requests", pa.int64()),
            ("note", pa.string()),
        ]
    )
    current = pa.table({"uuid": ["c"], "ip": ["9"], "requests": [10], "note": ["kept"]})
    change = collapsed_changes(ROWS, Changes(op_column="op"), OPS, "f")
    got = folded_changes(current, change, schema, OPS).sort_by("uuid").to_pylist()
    assert got == [
        {"uuid": "a", "ip": None, "requests": 5, "note": None},
        {"uuid": "c", "ip": "9", "requests": 14, "note": "kept"},
    ]


def test_partial_files_are_change_data_and_a_schema_that_evolves_is_refused(tmp_path):
    data = write_change_case(
        CHANGE_CASES["absent_column_keeps_the_value_a_present_NULL_follows_the_operator"],
        tmp_path / "d",
    )
    cfg = load_config(overrides={"workload.columns": {"note": "UseLast"}})
    batches = discover(data, None, schema_of_batch(cfg.workload))
    check_schemas(cfg, batches)  # files of some of the columns: no evolution
    evolving = load_config(
        overrides={"workload.columns": {"note": "UseLast"}, "workload.added": {"note": 1}}
    )
    with pytest.raises(SchemaEvolutionError, match="^base-0.parquet: the workload adds"):
        check_schemas(evolving, [Batch(0, "x/base-0.parquet", 0, 0, 0)])
