"""Change data through Delta's and Iceberg's own MERGE (contest/peers/change_merge.py):
the hand contract cases of change data (tests/support/contract_cases.py) and random
change batches (deletes, re-inserts, files lacking columns, NULLs and "null" strings, a
composite int32 + string key, versions out of file order) written by delta-merge and
iceberg-mor and read back, each against the oracle. Real Spark, the format's own library,
one child JVM per format (every case in one session)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.config import load_config
from contest.data import operators as ops
from contest.data.batches import discover
from contest.data.changes import ROW_KINDS, Changes, changes_of
from contest.data.checker import compare
from contest.data.oracle import expected_result
from contest.data.workload import contract_operators, schema_of_batch
from contest.peers.change_merge import ChangeBatch, merge_sql
from tests.contest.data.test_change_reference import KEY, TYPES, random_files
from tests.support.contract_cases import CHANGE_CASES, change, full, write_change_case

# Every case in one session: discovered, written by the strategy (write_peer), read by the
# format's reader in the workload's newest schema (what the read job writes).
SCRIPT = """
import json, sys
from pathlib import Path
from contest.config import load_config
from contest.data.batches import discover
from contest.data.workload import schema_of_batch
from contest.evaluation.strategies import STRATEGIES
from contest.infra.spark import spark_session
from contest.peers import formats
from contest.peers.read import plan_span, table_dataframe
from contest.peers.write import session_config, write_peer

strategy, cases = sys.argv[1], json.loads(sys.argv[2])
def config(overrides):
    overrides = overrides | {"spark.shuffle_partitions": 2}
    return load_config(preset=STRATEGIES[strategy], overrides=overrides)
out = {}
with spark_session(session_config(config({})), "changes", formats.coordinates(config({}))) as spark:
    for name, case in cases.items():
        cfg = config(case["overrides"])
        table = Path(case["table"])
        batches = discover(case["data"], cfg.write.versions or None, schema_of_batch(cfg.workload))
        report = write_peer(spark, cfg, table, batches)
        if report.ok:
            df = table_dataframe(spark, cfg, table, plan_span(table, None, None, None))
            df.write.parquet(case["out"])
        out[name] = {"ok": report.ok, "summary": report.summary(),
                     "operations": [b.operation for b in report.batches]}
print("RESULT " + json.dumps(out))
"""

STRATEGIES = ["delta-merge", "iceberg-mor"]
# A live key deleted and inserted again inside one later batch: the collapsed row replaces
# the table's (the MERGE's REPLACE clause), its columns the batch lacks NULL.
REINSERT_OF_A_LIVE_KEY = {
    "batches": [
        [full("insert", "a", ip="i1", req=5, name="x"), full("insert", "b", req=1)],
        [
            change("update", "a", requests=1),
            change("delete", "a"),
            change("insert", "a", requests=2),
            change("update", "a", requests=None),
            change("update", "b", requests=3),
        ],
    ],
    "changes": {"op_column": "op"},
}
# Few examples (the suite's time): the hand cases hold every rule; the random ones mix them.
RANDOM_SEEDS = range(2)


def case_overrides(case: dict) -> dict:
    """A contract case's change rules and operators as configuration keys."""
    rules = Changes(**case.get("changes", {}))
    extra = {c: op for c, op in case.get("operators", {}).items() if c not in ops.CONTRACT}
    return {
        "workload.key": list(rules.key),
        "workload.op_column": rules.op_column,
        "workload.op_values": rules.op_values,
        "write.drop_null_keys": rules.drop_null_keys,
        "workload.columns": extra,
    }


def random_case(seed: int, folder: Path) -> dict:
    """Random change files (tests/contest/data/test_change_reference.py's), versions
    shuffled, as a case's data folder and configuration."""
    rnd = random.Random(seed)
    spelling = rnd.choice(sorted(ROW_KINDS))
    files = random_files(rnd, spelling)
    folder.mkdir(parents=True)
    for i, (cols, rows) in enumerate(files):
        schema = pa.schema([(c, TYPES[c]) for c in (*KEY, "op", *cols)])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / f"base-{i}.parquet")
    versions = list(range(len(files)))
    rnd.shuffle(versions)
    return {
        "workload.key": list(KEY),
        "workload.op_column": "op",
        "workload.op_values": spelling,
        "workload.columns": {"note": ops.USE_LAST},
        "write.versions": ",".join(f"{i}={v}" for i, v in enumerate(versions)),
    }


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, dict]:
    """Every case: its data, configuration and the oracle's answer."""
    root = tmp_path_factory.mktemp("changes")
    out = {}
    for name, case in {**CHANGE_CASES, "reinsert_of_a_live_key": REINSERT_OF_A_LIVE_KEY}.items():
        if "expected" in case or name == "reinsert_of_a_live_key":
            data = write_change_case(case, root / name / "data")
            out[name] = {"data": data, "overrides": case_overrides(case)}
    for seed in RANDOM_SEEDS:
        data = root / f"random-{seed}" / "data"
        out[f"random-{seed}"] = {"data": data, "overrides": random_case(seed, data)}
    for name, case in out.items():
        cfg = load_config(overrides=case["overrides"])
        batches = discover(case["data"], cfg.write.versions or None, schema_of_batch(cfg.workload))
        case["expected"] = root / name / "expected.parquet"
        expected_result(
            batches,
            case["expected"],
            operators=contract_operators(cfg.workload),
            changes=changes_of(cfg),
        )
    return out


@pytest.mark.spark
@pytest.mark.slow  # about 3 minutes a format: some 40 MERGEs on 2 cores
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_change_data_through_the_formats_merge_equals_the_oracle(strategy, cases, tmp_path):
    todo = {
        name: {
            "data": str(c["data"]),
            "overrides": c["overrides"],
            "table": str(tmp_path / "wh" / "ns" / name.replace("-", "_")),
            "out": str(tmp_path / "out" / name),
        }
        for name, c in cases.items()
    }
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, strategy, json.dumps(todo)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env=os.environ.copy(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    results = json.loads(line.removeprefix("RESULT "))
    wrong = []
    for name, case in cases.items():
        got = results[name]
        assert got["ok"], f"{name}: {got['summary']}"
        report = compare(todo[name]["out"], case["expected"])
        if not report.ok:
            wrong.append(f"{name}: {report.render()}")
    assert not wrong, "\n".join(wrong)
    replaced = pq.read_table(todo["reinsert_of_a_live_key"]["out"]).to_pylist()
    a = next(r for r in replaced if r["uuid"] == "a")
    assert (a["requests"], a["ip"], a["name"]) == (2, None, None)
    # The batches' reports say the collapse applied the delete rule.
    ops_ = results["delete_then_reinsert_starts_the_key_afresh"]["operations"]
    assert all("after a key's last delete" in o for o in ops_), ops_
    partial = results["absent_column_keeps_the_value_a_present_NULL_follows_the_operator"]
    # Its first batch holds every column: the upsert's create.
    assert all("partial columns" in o for o in partial["operations"][1:]), partial


def _sql(rules: Changes, held: tuple[str, ...]) -> str:
    batch = ChangeBatch(rows=None, rules=rules, columns=held)  # type: ignore[arg-type]
    return merge_sql(
        "t_",
        "s_",
        batch,
        ["ip", "requests", "note"],
        {"ip": ops.USE_LAST_NOT_NULL, "requests": ops.SUM_ALL, "note": ops.USE_LAST},
    )


def test_the_merge_deletes_replaces_and_sets_only_the_columns_the_batch_holds():
    sql = _sql(Changes(("tenant", "id"), "op", "debezium"), ("requests",))
    assert "ON t.`tenant` = s.`tenant` AND t.`id` = s.`id`" in sql
    assert "WHEN MATCHED AND s.`op` IN ('d') THEN DELETE" in sql
    # A re-inserted key: every column the batch's value, NULL where it has none.
    assert (
        "WHEN MATCHED AND s.`__contest_replace` THEN UPDATE SET t.`ip` = NULL, "
        "t.`requests` = s.`requests`, t.`note` = NULL"
    ) in sql
    # A live key: only requests, summed; ip and note keep the table's values.
    combine = "WHEN MATCHED THEN UPDATE SET t.`requests` = CASE WHEN t.`requests` IS NULL"
    assert combine in sql and "t.`ip` = coalesce" not in sql
    assert "WHEN NOT MATCHED AND NOT s.`op` IN ('d') THEN INSERT (`tenant`, `id`, `ip`, " in sql
    assert sql.endswith("VALUES (s.`tenant`, s.`id`, NULL, s.`requests`, NULL)")


def test_without_row_kinds_nothing_is_deleted_and_a_batch_of_no_column_updates_nothing():
    sql = _sql(Changes(), ())
    assert "DELETE" not in sql and "UPDATE" not in sql
    assert "WHEN NOT MATCHED THEN INSERT (`uuid`, `ip`, `requests`, `note`)" in sql
