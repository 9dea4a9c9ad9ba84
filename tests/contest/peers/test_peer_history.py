"""History on a peer format: a table whose workload adds two
columns and widens an int32 column, written by the format with its own schema changes
(`PeerFormat.evolve`), read as of versions before and after each change by its own time
travel and checked against the oracle under the newest schema; the change read answered
exactly or refused in one line; then the format's own expiry of old versions (the
vacuumed start): an as-of read of an expired version refused naming the oldest one left,
the head still exact. Every operator of the registry rides along in its own column. Real
Spark, the format's own library, one child JVM per format."""

from __future__ import annotations

import json

import pytest

from contest.config import load_config
from contest.data import operators as registry
from contest.data.batches import discover, upto
from contest.data.checker import compare
from contest.data.generator import generate
from contest.data.oracle import expected_result
from contest.data.workload import contract_operators, schema_of_batch
from tests.support.config import EVOLVING_HISTORY
from tests.support.peer_child import script_result

pytestmark = [pytest.mark.spark, pytest.mark.slow]

# The evolving columns, beside one column per operator of the registry with NULLs,
# "null" strings and keys repeated inside a batch (what tests/contest/peers/
# test_peer_operators.py checks for the other formats: here for Delta and Iceberg, whose
# head read below is the same check, in the same child JVM).
EVOLVING = {
    **EVOLVING_HISTORY,
    "workload.name": "history",
    "workload.columns": {
        **{f"c_{name.lower()}": name for name in registry.OPERATOR_NAMES},
        **EVOLVING_HISTORY["workload.columns"],
    },
}

# One process, one session: writes (batches 0-1, then 2-3 appended: the tag, clicks and the widening
# of hits each a schema change of the format's), reads, the expiry, reads again.
SCRIPT = """
import json, sys
from pathlib import Path
from contest.config import load_config
from contest.data.batches import discover
from contest.data.workload import schema_of_batch
from contest.errors import HarnessError
from contest.evaluation.strategies import STRATEGIES
from contest.infra.spark import spark_session
from contest.peers import formats
from contest.peers.read import plan_span, table_dataframe
from contest.peers.write import session_config, write_peer

strategy, data, root, overrides = sys.argv[1:5]
overrides = json.loads(overrides) | {"spark.shuffle_partitions": 2}
cfg = load_config(preset=STRATEGIES[strategy], overrides=overrides)
table = Path(root) / "wh" / "ns" / "t"
batches = discover(data, None, schema_of_batch(cfg.workload))
out = {"writes": []}
with spark_session(session_config(cfg), "history", formats.coordinates(cfg)) as spark:
    def read(name, **span):
        try:
            plan = plan_span(table, **span)
            df = table_dataframe(spark, cfg, table, plan)
            df.write.parquet(str(Path(root) / name))
            out[name] = {"out": str(Path(root) / name), "version": plan.version}
        except HarnessError as exc:
            out[name] = {"refused": str(exc)}

    for part, exists in ((batches[:2], False), (batches[2:], True)):
        report = write_peer(spark, cfg, table, part, exists=exists)
        out["writes"].append(report.to_dict() | {"refused": report.refused})
    read("head")
    read("as_of_0", as_of=0)
    read("as_of_2", as_of=2)
    read("changes_1_3", from_version=1)
    read("changes_2_3", from_version=2, to_version=3)
    out["expire"] = formats.of(cfg).expire(spark, cfg, table)
    read("expired_0", as_of=0)
    read("head_after")
print("RESULT " + json.dumps(out))
"""


@pytest.fixture(scope="module")
def evolving_data(tmp_path_factory):
    """The batches, and the oracle's answer at each version and for the change read."""
    folder = tmp_path_factory.mktemp("history")
    w = load_config(overrides=EVOLVING).workload
    generate(folder / "data", 1.0, 3, workload=w)
    batches = discover(folder / "data", None, schema_of_batch(w))
    expected = {}
    for v in range(4):
        expected[f"upto_{v}"] = folder / f"upto-{v}.parquet"
        expected_result(upto(batches, v), expected[f"upto_{v}"], operators=contract_operators(w))
    for end in (2, 3):
        expected[f"changes_1_{end}"] = folder / f"changes-{end}.parquet"
        expected_result(
            [b for b in batches if 1 < b.version <= end],
            expected[f"changes_1_{end}"],
            operators=contract_operators(w),
        )
    return folder / "data", expected


def _run(strategy: str, data, root) -> dict:
    return script_result(SCRIPT, [strategy, str(data), str(root), json.dumps(EVOLVING)], root)


@pytest.fixture(scope="module", params=["delta-merge", "iceberg-mor"])
def history(request, evolving_data, tmp_path_factory):
    data, expected = evolving_data
    root = tmp_path_factory.mktemp(request.param)
    return request.param, _run(request.param, data, root), expected


# What each format makes of the widening of hits (int32 to int64 at batch 3): Delta 3.3's
# type widening (a preview) widens no int to bigint, and says so.
WIDENING_REFUSED = {"delta-merge": "[DELTA_UNSUPPORTED_ALTER_TABLE_CHANGE_COL_OP]"}


def test_the_format_evolves_its_schema_and_reads_as_of_versions_exactly(history):
    strategy, out, expected = history
    batches = [b for w in out["writes"] for b in w["batches"]]
    evolved = [e for b in batches for e in b["evolved"]]
    refusal = WIDENING_REFUSED.get(strategy)
    if refusal:
        assert evolved == ["added tag string", "added clicks bigint"]
        last = out["writes"][-1]
        assert last["refused"] and not last["ok"]
        error = batches[-1]["error"]
        assert refusal in error and "widened hits int->bigint" in error
        assert "\n" not in batches[-1]["error"]
        batches = batches[:-1]
    else:
        assert evolved == ["added tag string", "added clicks bigint", "widened hits int->bigint"]
    commits = [b["commit"] for b in batches]
    assert None not in commits and len(set(commits)) == len(batches), commits
    head = len(batches) - 1
    for name, version in (("head", head), ("as_of_0", 0), ("as_of_2", 2), ("head_after", head)):
        assert out[name].get("version") == version, (name, out[name])
        check = compare(out[name]["out"], expected[f"upto_{version}"])
        assert check.ok, (strategy, name, check.render())


def test_the_change_read_is_exact_or_refused_in_one_line(history):
    strategy, out, expected = history
    changes = out["changes_1_3"]  # from version 1 to the newest the table holds
    if "refused" in changes:
        assert "\n" not in changes["refused"]
        assert changes["refused"].startswith(strategy.split("-")[0] + ":"), changes
    else:
        check = compare(changes["out"], expected[f"changes_1_{changes['version']}"])
        assert check.ok, check.render()


def test_an_expired_start_is_refused_naming_the_oldest_left(history):
    strategy, out, _ = history
    refused = out["expired_0"].get("refused", "")
    assert refused and "\n" not in refused, out["expired_0"]
    assert "oldest" in refused
