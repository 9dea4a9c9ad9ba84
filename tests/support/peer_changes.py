"""Change data through a peer strategy against the oracle, for the formats' own change
tests: the hand change cases (tests/support/contract_cases.py) and random change
batches, each refused by the strategy's declaration (`refusal_of`: the one line it
gives, then nothing run) or written by the strategy in one child Spark session
(`SCRIPT`) and read back against the oracle."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contest.config import load_config
from contest.data import operators as ops
from contest.data.batches import discover
from contest.data.changes import ROW_KINDS, Changes, changes_of
from contest.data.checker import compare
from contest.data.oracle import expected_result
from contest.data.workload import contract_operators, schema_of_batch
from contest.evaluation.strategies import STRATEGIES
from contest.peers.change_check import refusal_of
from tests.contest.data.test_change_reference import KEY, TYPES, random_files
from tests.support.contract_cases import CHANGE_CASES, change, full, row, write_change_case
from tests.support.peer_child import script_result

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


# A live key deleted and inserted again inside one later batch: the batch's row replaces
# the table's (a MERGE's REPLACE clause, a native collapse, hudi-mor merged so in Spark,
# hudi-merger marked afresh), its columns the batch lacks NULL.
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
    "expected": [
        row("a", ip=None, host=None, req=2, name=None, city=None, job=None, phone=None),
        row("b", req=4),
    ],
}


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


def hand_cases(root: Path, cases: dict[str, dict] = CHANGE_CASES) -> dict[str, dict]:
    """The hand cases with an answer: their data and configuration."""
    out = {}
    for name, case in cases.items():
        if "expected" in case:
            data = write_change_case(case, root / name / "data")
            out[name] = {"data": data, "overrides": case_overrides(case)}
    return out


def random_cases(root: Path, seeds: range, overrides: dict | None = None) -> dict[str, dict]:
    """Random change batches (`random_case`), their overrides updated by `overrides`."""
    out = {}
    for seed in seeds:
        data = root / f"random-{seed}" / "data"
        out[f"random-{seed}"] = {
            "data": data,
            "overrides": random_case(seed, data) | (overrides or {}),
        }
    return out


def change_cases(root: Path, seeds: range, overrides: dict | None = None) -> dict[str, dict]:
    """What every peer's change-data test runs, written once: the hand change cases, a
    live key re-inserted inside a batch and random change batches (`seeds`, their
    overrides updated by `overrides`), each with the oracle's answer."""
    made = hand_cases(root) | hand_cases(root, {"reinsert_of_a_live_key": REINSERT_OF_A_LIVE_KEY})
    made |= random_cases(root, seeds, overrides)
    return with_answers(root, made)


def assert_changes_applied(results: dict, cases: dict[str, dict]) -> dict:
    """Every case equal to the oracle's answer, the re-inserted live key started afresh
    (its lacking columns NULL) and each batch of the delete case reporting the delete
    rule: what a MERGE format and a native library both assert. The partial-columns
    case's results, for the caller's own checks of its operations."""
    wrong = wrong_answers(results, cases)
    assert not wrong, "\n".join(wrong)
    replaced = pq.read_table(results["reinsert_of_a_live_key"]["out"]).to_pylist()
    a = next(r for r in replaced if r["uuid"] == "a")
    assert (a["requests"], a["ip"], a["name"]) == (2, None, None)
    deletes = results["delete_then_reinsert_starts_the_key_afresh"]["operations"]
    assert all("after a key's last delete" in o for o in deletes), deletes
    return results["absent_column_keeps_the_value_a_present_NULL_follows_the_operator"]


def with_answers(root: Path, cases: dict[str, dict]) -> dict[str, dict]:
    """The cases, each with the oracle's answer (`expected`)."""
    for name, case in cases.items():
        cfg = load_config(overrides=case["overrides"])
        batches = discover(case["data"], cfg.write.versions or None, schema_of_batch(cfg.workload))
        case["expected"] = root / name / "expected.parquet"
        expected_result(
            batches,
            case["expected"],
            operators=contract_operators(cfg.workload),
            changes=changes_of(cfg),
        )
    return cases


def refusals(strategy: str, cases: dict[str, dict]) -> dict[str, str]:
    """The cases the strategy's declaration refuses, with the line it gives."""
    out = {}
    for name, case in cases.items():
        cfg = load_config(preset=STRATEGIES[strategy], overrides=case["overrides"])
        found = schema_of_batch(cfg.workload)
        discover(case["data"], cfg.write.versions or None, found)
        why = refusal_of(cfg, found, strategy)
        if why:
            out[name] = why
    return out


def run(strategy: str, cases: dict[str, dict], tmp_path: Path, one_session: bool = True) -> dict:
    """Every case written by the strategy and read back, in one child session (or one
    each: Paimon's catalog keeps the first warehouse a session names, as a write job of
    its own would not): each one's report (ok, summary, the batches' operations) and
    where its read went."""
    if not one_session:
        out: dict = {}
        for name, case in cases.items():
            out |= run(strategy, {name: case}, tmp_path / name)
        return out
    tmp_path.mkdir(parents=True, exist_ok=True)
    todo = {
        name: {
            "data": str(c["data"]),
            "overrides": c["overrides"],
            "table": str(tmp_path / "wh" / "ns" / name.replace("-", "_")),
            "out": str(tmp_path / "out" / name),
        }
        for name, c in cases.items()
    }
    results = script_result(SCRIPT, [strategy, json.dumps(todo)], tmp_path)
    for name, got in results.items():
        got["out"] = todo[name]["out"]
    return results


def wrong_answers(results: dict, cases: dict[str, dict]) -> list[str]:
    """Each case written that failed or whose read differs from the oracle's answer."""
    wrong = []
    for name, got in results.items():
        if not got["ok"]:
            wrong.append(f"{name}: {got['summary']}")
            continue
        report = compare(got["out"], cases[name]["expected"])
        if not report.ok:
            wrong.append(f"{name}: {report.render()}")
    return wrong
