"""A peer table's batch ledger: what an `--append` may add (no Spark). A Delta table that
refuses a batch twice is in tests/contest/workload/test_runner.py (its workload's table)."""

import json

import pytest

from contest.data.batches import Batch
from contest.errors import DataError
from contest.peers import ledger


def _batch(i: int, version: int | None = None) -> Batch:
    return Batch(i, f"/data/base-{i}.parquet", 10, 100, i if version is None else version)


def test_a_batch_applied_pending_or_older_is_refused_and_a_newer_one_is_not():
    held = {i: {"batch": f"base-{i}.parquet", "state": "done"} for i in (0, 1)}
    assert ledger.refusal(held, [_batch(2), _batch(3)], in_order=True) is None
    assert "version 1 (base-1.parquet) is already applied" in (
        ledger.refusal(held, [_batch(2), _batch(1)], in_order=False) or ""
    )
    pending = held | {2: {"batch": "base-2.parquet", "state": "pending"}}
    assert "may be in the table or not" in (ledger.refusal(pending, [_batch(2)], True) or "")
    # Version 5 of batch 4 then batch 5 at version 4: older than what the table holds.
    shuffled = {5: {"batch": "base-4.parquet", "state": "done"}}
    assert "older than version 5" in (ledger.refusal(shuffled, [_batch(5, 4)], True) or "")
    assert ledger.refusal(shuffled, [_batch(5, 4)], in_order=False) is None  # any order


def test_marks_replace_the_file_whole_and_a_table_without_one_is_refused(tmp_path):
    with pytest.raises(DataError, match="has no batch ledger"):
        ledger.check(tmp_path, [_batch(1)], in_order=True)
    ledger.mark(tmp_path, _batch(1), ledger.PENDING)
    ledger.mark(tmp_path, _batch(1), ledger.DONE)
    ledger.mark(tmp_path, _batch(0), ledger.DONE)
    assert json.loads((tmp_path / ledger.LEDGER).read_text()) == {
        "0": {"batch": "base-0.parquet", "state": "done"},
        "1": {"batch": "base-1.parquet", "state": "done"},
    }
    assert [p.name for p in tmp_path.iterdir()] == [ledger.LEDGER]  # no temporary left
    with pytest.raises(DataError, match=r"already applied; nothing written \(--replace"):
        ledger.check(tmp_path, [_batch(1)], in_order=True)
    (tmp_path / ledger.LEDGER).write_text("{not json")
    with pytest.raises(DataError, match="not a batch ledger"):
        ledger.load(tmp_path)
