"""Each deferring-and-merging peer's history under the newest schema: the
format's own schema evolution (one added string column, one added summed column, one
int -> bigint widening of a summed column), reads as of a commit before and after the
change and change reads between commits, each checked against the oracle under the
newest schema or refused in one line, and the start expired by the format's own
cleanup. The methods are called directly (tests/support/history_child.py) in a child
process holding the format's jars; the schema rules are pure functions tested apart."""

from __future__ import annotations

import json
from typing import Any

import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data.batches import discover
from contest.data.oracle import expected_rows
from contest.data.workload import contract_operators, schema_of_batch, workload_settings
from contest.evaluation.strategies import STRATEGIES
from contest.peers.schema import Change, schema_changes
from tests.support.config import cli
from tests.support.lakesoul import run_module
from tests.support.peer_child import child_config

SPEC = """
[workload]
batches = 4
first_rows = 40
batch_rows = 30
update_share = 0.7
repeat_share = 0.2

[workload.columns]
"tag" = "UseLastNotNull"
"clicks" = "SumAll"
"hits" = "SumAll"

[workload.added]
"tag" = 2
"clicks" = 2

[workload.widened]
"hits" = 3
"""

# Before the changes (1), after the additions (2), after the widening (3), across
# them (1 -> 3), from the beginning.
READS: list[dict[str, Any]] = [
    {"as_of": 1},
    {"as_of": 2},
    {"as_of": 3},
    {"from": 1, "to": 3},
    {"from": None, "to": 2},
]
# After the format's compaction and cleanup: the expired start, and the head.
AFTER: list[dict[str, Any]] = [{"as_of": 1}, {"from": 1, "to": 3}, {"as_of": "head"}]
# One child (JVM) per set of jars: hudi-mor runs in hudi-merger's session.
GROUPS = [["hudi-merger", "hudi-mor"], ["paimon-agg"]]
# The reads each strategy refuses (the index in READS), and a word of the refusal;
# every other read is the oracle's rows.
REFUSED = {
    # Hudi's incremental query is not the range's own merge.
    "hudi-mor": {3: "post-image"},
    "hudi-merger": {3: "unmerged"},
    # A snapshot before the summed column's addition: its schema lacks the column the
    # table's newest options give an aggregate function (Paimon's own error).
    "paimon-agg": {0: "Field clicks can not be found"},
}


def test_a_new_column_is_added_and_an_integer_widened():
    table = [("uuid", "string"), ("hits", "int"), ("name", "string")]
    batch = [("uuid", "string"), ("tag", "string"), ("hits", "bigint"), ("name", "string")]
    assert schema_changes(table, batch) == [
        Change("added", "tag", "", "string"),
        Change("widened", "hits", "int", "bigint"),
    ]
    assert [str(c) for c in schema_changes(table, batch)] == [
        "added tag string",
        "widened hits int->bigint",
    ]


def test_a_batch_that_fits_changes_nothing_and_other_changes_are_named():
    table = [("uuid", "string"), ("hits", "bigint"), ("tag", "string")]
    assert schema_changes(table, [("uuid", "string"), ("hits", "bigint")]) == []
    assert schema_changes(table, [("hits", "int")]) == [Change("narrowed", "hits", "bigint", "int")]
    assert schema_changes(table, [("tag", "bigint")]) == [
        Change("retyped", "tag", "string", "bigint")
    ]


@pytest.fixture(scope="module")
def tiny(cfg, tmp_path_factory):
    root = tmp_path_factory.mktemp("peer-history")
    spec, data = root / "tiny.toml", root / "data"
    spec.write_text(SPEC)
    assert main(cli(cfg, "gen", "--workload", str(spec), "--scale", "1", "--out", str(data))) == 0
    return spec, data


def expected(child, data, spec: dict[str, Any], head: int) -> list[dict]:
    """The oracle's rows of a read under the newest schema: the batches up to `to` (or
    the as-of version), after `from` for a change read."""
    batches = discover(data, None, schema_of_batch(child.workload))
    upto = head if spec.get("as_of") == "head" else spec["as_of" if "as_of" in spec else "to"]
    after = spec.get("from")
    chosen = [b for b in batches if b.version <= upto and (after is None or b.version > after)]
    return expected_rows(chosen, contract_operators(child.workload))


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS, ids=["+".join(g) for g in GROUPS])
def test_history_reads_under_the_newest_schema(cfg, tiny, tmp_path, group):
    spec, data = tiny
    child = child_config(cfg, group[0], tmp_path, workload_settings(str(spec)))
    plans = [
        {
            "format": STRATEGIES[s]["peer.format"],
            "data": str(data),
            "table": str(tmp_path / s / "table"),
            "out": str(tmp_path / s / "out"),
            "reads": READS,
            "after_expire": AFTER,
        }
        for s in group
    ]
    proc = run_module("tests.support.history_child", child, plans, tmp_path, timeout=1200)
    reports = json.loads(proc.stdout.strip().splitlines()[-1])
    for strategy, report in zip(group, reports, strict=True):
        print(strategy, json.dumps({k: report[k] for k in ("evolved", "seconds", "expired")}))
        # The format's own schema evolution: the columns added at batch 2, hits widened
        # at batch 3 (Hudi's on the write itself).
        assert [c.split(" (")[0] for c in report["evolved"]["2"]] == [
            "added tag string",
            "added clicks bigint",
        ]
        assert [c.split(" (")[0] for c in report["evolved"]["3"]] == ["widened hits int->bigint"]
        assert report["evolved"]["1"] == []
        for n, (read, want) in enumerate(zip(report["reads"], READS + AFTER, strict=True)):
            what = f"{strategy} {want}: {read}"
            if len(READS) <= n < len(READS) + 2:  # its start expired: refused, naming
                # the oldest commit left
                assert "the oldest" in read.get("refused", ""), what
            elif n in REFUSED[strategy]:
                assert REFUSED[strategy][n] in read.get("refused", ""), what
            else:
                assert "rows" in read, what
                got = sorted(pq.read_table(read["rows"]).to_pylist(), key=lambda r: r["uuid"])
                assert got == expected(child, data, want, 3), what
