"""hudi-merger's stream sink (`UpsertBatch`): what it writes for a micro-batch, the
collapse in source order (real Spark), and the batch-id mark in the commit's metadata
(the end-to-end stream, replay included, is tests/contest/stream/test_peer_stream.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contest.config import load_config
from contest.errors import RunError
from contest.evaluation.strategies import STRATEGIES
from contest.peers.hudi.merger import (
    FORMAT,
    ROW_BITS,
    SINK_CHECKPOINT_KEY,
    UpsertBatch,
    collapsed_rows,
)
from contest.peers.hudi.options import ORDERING

QUERY = "6a1f2c3d-0000-4000-8000-000000000001"


def sink(tmp_path: Path, query: str | None = QUERY) -> UpsertBatch:
    checkpoint = tmp_path / "checkpoint"
    checkpoint.mkdir()
    if query is not None:  # what Spark writes when the query first starts
        (checkpoint / "metadata").write_text(json.dumps({"id": query}) + "\n")
    cfg = load_config(preset=STRATEGIES["hudi-merger"])
    return UpsertBatch(FORMAT, cfg, tmp_path / "table", str(checkpoint), None)


def test_the_commit_metadata_holds_the_batch_id_under_hudis_sink_key(tmp_path):
    opts = sink(tmp_path).options(7)
    # Hudi's streaming sink's own record: {identifier: batch id}, the checkpoint's query
    # id the identifier; the key prefix lets only that key into the commit's metadata.
    assert json.loads(opts[SINK_CHECKPOINT_KEY]) == {QUERY: "7"}
    prefix = opts["hoodie.datasource.write.commitmeta.key.prefix"]
    assert [k for k in opts if k.startswith(prefix)] == [SINK_CHECKPOINT_KEY]
    assert opts["hoodie.datasource.write.operation"] == "upsert"
    assert opts["hoodie.write.record.merge.mode"] == "CUSTOM"
    # Disabling async compaction makes a batch write of a MOR table compact inline.
    assert "hoodie.datasource.compaction.async.enable" not in opts


def test_a_checkpoint_without_a_query_id_is_a_one_line_error(tmp_path):
    with pytest.raises(RunError, match="no query id"):
        sink(tmp_path, query=None).options(0)


def test_a_micro_batch_collapses_in_source_order_whatever_order_spark_gives(spark):
    # Rows of key "a" over two files (feed numbers 3 and 5), given out of source order:
    # (uuid, _ver, _pos, name, requests, ip).
    rows = [
        ("a", 5, 0, None, 4, None),  # the last row: a NULL name keeps the one before
        ("a", 3, 0, "first", 1, "ip-1"),
        ("a", 3, 2, "null", None, None),  # "null" is no name either
        ("a", 3, 1, "second", 2, None),
        ("b", 5, 1, "only", None, "ip-b"),
    ]
    df = spark.createDataFrame(
        [(u, ip, None, req, name, None, None, None, v, p) for u, v, p, name, req, ip in rows],
        "uuid string, ip string, hostname string, requests long, name string, city string, "
        "job string, phonenum string, _ver long, _pos long",
    )
    out = {r["uuid"]: r.asDict() for r in collapsed_rows(df).collect()}
    assert out["a"]["name"] == "second" and out["a"]["ip"] == "ip-1"
    assert out["a"]["requests"] == 7
    assert out["a"][ORDERING] == 5 * 2**ROW_BITS + 0  # the key's last row's
    assert out["b"] == {
        "uuid": "b",
        "ip": "ip-b",
        "hostname": None,
        "requests": None,
        "name": "only",
        "city": None,
        "job": None,
        "phonenum": None,
        ORDERING: 5 * 2**ROW_BITS + 1,
    }
