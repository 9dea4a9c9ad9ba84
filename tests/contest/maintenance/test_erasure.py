"""Erasure: after `contest compact` and `contest vacuum` no data file of a change table
still holds a key whose last row is a delete, nor a row of a key from before its last
delete. Every Parquet file left in the table's folder is scanned (the files the
current snapshot names are among them), for the harness's LakeSoul table and for
Delta's, Iceberg's and Hudi's, each through the commands a user runs; a data file the
scan cannot read (Hudi's Avro log files, Delta's deletion vectors) must be gone. Before
them the files do hold such rows (the check can fail). Paimon's aggregation engine
takes no deletes here (the feature table): it has nothing to erase."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from contest.config import override
from contest.data import operators as ops
from contest.data.batches import discover
from contest.data.changes import Changes
from contest.data.oracle import expected_rows
from contest.maintenance.compact import compact
from contest.maintenance.vacuum import vacuum
from contest.peers import formats
from contest.peers.files import data_listing
from meta.merge import merge_table
from tests.contest.peers.test_compact import child_config, run_child, set_format
from tests.contest.read.test_changes import change_config, plain
from tests.support.contract_cases import full, write_change_case
from tests.support.erasure import forbidden, leftovers
from tests.support.pipeline import read_rows, write

# Every row's hostname is its own marker. a: deleted, then inserted again (a@0 and the
# delete a@1 must go); c, d, e: left deleted (every row of them must go); b, f: live.
CASE = {
    "batches": [
        [full("insert", k, host=f"{k}@0", req=1) for k in "abcdf"],
        [
            full("delete", "a", host="a@1"),
            full("update", "b", host="b@1", req=2),
            full("delete", "c", host="c@1"),
            full("update", "d", host="d@1"),
        ],
        [
            full("insert", "a", host="a@2", req=3),
            full("delete", "d", host="d@2"),
            full("insert", "e", host="e@2"),
        ],
        [full("update", "a", host="a@3", req=4), full("delete", "e", host="e@3")],
    ],
    "changes": {"op_column": "op"},
}


def oracle(data: Path) -> list[dict]:
    return plain(
        expected_rows(discover(data, schema=None), ops.CONTRACT, Changes(op_column="op")), ("uuid",)
    )


def test_the_forbidden_rows_of_the_case():
    gone, stale = forbidden(CASE["batches"])
    assert gone == {"c", "d", "e"} and stale == {"a@0", "a@1"}


@pytest.mark.spark
def test_lakesoul_compact_then_vacuum_erase_deleted_keys(spark, pg, cfg, tmp_path):
    data = write_change_case(CASE, tmp_path / "data")
    ccfg = change_config(cfg, CASE)
    root = tmp_path / "erased"
    _, table = write(spark, pg, ccfg, data, root)
    gone, stale = forbidden(CASE["batches"])
    before = leftovers(root, gone, stale)
    assert any("'c'" in line for line in before) and any("a@0" in line for line in before)
    merge_table(pg, table)
    compact(spark, pg, ccfg, table)
    assert leftovers(root, gone, stale)  # the compacted-away files stay until vacuum
    vacuum(pg, table, retain_hours=0)
    assert leftovers(root, gone, stale) == []
    got = plain(read_rows(spark, pg, ccfg, table), ("uuid",))
    assert [r["uuid"] for r in got] == ["a", "b", "f"] and got == oracle(data)


# One strategy a format that compacts and vacuums here: Delta with deletion vectors (its
# vacuum must drop both the rewritten files and the vectors; delta-merge's copy-on-write
# leaves only rewritten files, the same vacuum), Iceberg's merge-on-read (position
# deletes), Hudi's merge-on-read (`_hoodie_is_deleted` upserts into Avro log files: its
# compaction, then its cleaner keeping each file group's newest slice), and hudi-merger,
# whose record merger keeps a deleted key as a tombstone row (the key, no payload) by
# design, so that a later insert starts the key afresh: its deleted rows' payload must go,
# the tombstone may stay (KEEPS_TOMBSTONES).
PEERS = ["delta-dv", "iceberg-mor", "hudi-mor", "hudi-merger"]
KEEPS_TOMBSTONES = {"hudi-merger"}


@pytest.mark.spark
@pytest.mark.slow  # a child JVM a format, twice
@pytest.mark.parametrize("strategy", PEERS)
def test_peer_compact_then_vacuum_erase_deleted_keys(cfg, tmp_path, strategy):
    data = write_change_case(CASE, tmp_path / "data")
    child = override(
        child_config(cfg, strategy, tmp_path),
        {"workload.key": ["uuid"], "workload.op_column": "op"},
    )
    fmt = set_format(child, strategy)
    table, out = tmp_path / strategy / "erased", tmp_path / "result"
    skip = formats.of(child).metadata_dirs
    gone, stale = forbidden(CASE["batches"])
    run_child(child, [[*fmt, "write", "--data", str(data), "--table", str(table)]], tmp_path)
    before = leftovers(table, gone, stale, skip)
    assert before, "the writes left no deleted row on disk: nothing to erase"
    run_child(
        child,
        [
            [*fmt, "compact", "--table", str(table)],
            [*fmt, "vacuum", "--table", str(table)],
            [*fmt, "read", "--table", str(table), "--out", str(out)],
        ],
        tmp_path,
    )
    kept = strategy in KEEPS_TOMBSTONES
    assert leftovers(table, gone, stale, skip, tombstones=kept) == []
    if kept:  # the tombstones are there: the check above let exactly those through
        assert {
            line.split("'uuid': ")[1][1] for line in leftovers(table, gone, stale, skip)
        } == gone
    unread = [p for p, (kind, _) in data_listing(table, skip).items() if kind != "data"]
    assert unread == [], "files the scan cannot read are still on disk"
    got = plain(pq.read_table(out).to_pylist(), ("uuid",))
    want = oracle(data)
    assert [r["uuid"] for r in got] == ["a", "b", "f"]
    assert [{k: r[k] for k in want[0]} for r in got] == want
