"""The generated change-data workloads (contest/data/change_generator.py) at a tiny scale:
`cdc` really deletes, inserts deleted keys again and writes files of some of the
columns; `multi-stream` writes each stream's columns apart; the oracle answers both,
and its answer follows the rows' kinds."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from contest.config import load_config
from contest.data.batches import discover
from contest.data.change_generator import MAX_TOUCHED, stream_columns
from contest.data.changes import changes_of
from contest.data.generator import generate
from contest.data.oracle import expected_result
from contest.data.workload import contract_operators, schema_of_batch, workload_settings
from contest.errors import ConfigError

SCALE = 0.002


def _generated(name, tmp_path):
    cfg = load_config(workload=workload_settings(name))
    generate(tmp_path / "data", SCALE, 11, workload=cfg.workload, progress=False)
    found = schema_of_batch(cfg.workload)
    batches = discover(tmp_path / "data", None, found)
    out = expected_result(
        batches,
        tmp_path / "expected.parquet",
        operators=contract_operators(cfg.workload),
        changes=changes_of(cfg),
    )
    return cfg, batches, found, pq.read_table(out.path)


def test_cdc_deletes_reinserts_and_partial_files_and_the_oracle_follows_them(tmp_path):
    cfg, batches, found, expected = _generated("cdc", tmp_path)
    payload = list(contract_operators(cfg.workload))
    last_kind: dict[str, str] = {}
    deleted, reinserted = set(), set()
    for b in batches:
        t = pq.read_table(b.path)
        held = [c for c in t.column_names if c in payload]
        if b.index in found.partial:  # updates of one to three columns, and deletes
            assert 1 <= len(held) <= MAX_TOUCHED
            assert set(t.column("op").to_pylist()) == {"u", "d"}
        else:
            assert held == payload
        for uuid, op in zip(t.column("uuid").to_pylist(), t.column("op").to_pylist(), strict=True):
            if op == "d":
                deleted.add(uuid)
            elif op == "c" and uuid in deleted:
                reinserted.add(uuid)
            last_kind[uuid] = op
    assert found.partial and set(found.partial) == set(range(2, len(batches), 2))
    assert len(deleted) > len(batches) and reinserted
    # A key whose last row is a delete is absent; every other key is there.
    live = {k for k, op in last_kind.items() if op != "d"}
    assert set(expected.column("uuid").to_pylist()) == live
    assert reinserted & live and deleted - live


def test_multi_stream_files_hold_one_streams_columns_and_the_oracle_joins_them(tmp_path):
    cfg, batches, found, expected = _generated("multi-stream", tmp_path)
    streams = stream_columns(cfg.workload)
    assert len(streams) == 3 and sorted(c for s in streams for c in s) == sorted(
        contract_operators(cfg.workload)
    )
    keys: dict[int, set] = {i: set() for i in range(3)}
    for b in batches:
        t = pq.read_table(b.path)
        assert tuple(t.column_names) == ("uuid", *streams[b.index % 3])
        keys[b.index % 3] |= set(t.column("uuid").to_pylist())
    assert set(found.partial) == {b.index for b in batches}
    assert expected.num_rows == len(keys[0] | keys[1] | keys[2])
    # A key stream 1 never wrote has none of its columns; one it wrote has them.
    rows = {r["uuid"]: r for r in expected.to_pylist()}
    only0 = next(iter(keys[0] - keys[1]))
    both = next(iter(keys[0] & keys[1]))
    assert all(rows[only0][c] is None for c in streams[1])
    assert all(rows[both][c] is not None for c in streams[1])


def test_the_change_settings_are_checked():
    with pytest.raises(ConfigError, match="workload.delete_share: deletes need an op column"):
        load_config(overrides={"workload.delete_share": 0.1})
    with pytest.raises(ConfigError, match="workload.delete_share: must be in"):
        load_config(overrides={"workload.op_column": "op", "workload.delete_share": 2})
    with pytest.raises(ConfigError, match="workload.streams: must be 0 or more"):
        load_config(overrides={"workload.streams": -1})
