"""A peer table's batch ledger: what an `--append` may add (no Spark), and a Delta table
that refuses a batch twice and an older batch, through the Write job's command."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from contest.data.batches import Batch
from contest.errors import DataError
from contest.peers import ledger
from tests.support.config import REPO, cli
from tests.support.contract_cases import write_case


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


def _write(cfg, data: Path, table: Path, *extra: str) -> subprocess.CompletedProcess:
    args = cli(cfg, "write", "--set", "peer.format=delta", "--data", str(data))
    return subprocess.run(
        [sys.executable, "-m", "contest.cli.main", *args, "--table", str(table), *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.spark  # the writes run in child processes
def test_a_delta_table_refuses_a_batch_twice_and_an_older_one(cfg, tmp_path):
    rows = [{"uuid": f"k{i}", "ip": "1.1.1.1", "hostname": "h", "requests": 1,
             "name": "n", "city": "c", "job": "j", "phonenum": "p"} for i in range(3)]  # fmt: skip
    data = write_case({"batches": [rows, rows[:2], rows[1:]]}, tmp_path / "data")
    table = tmp_path / "delta_t"
    first = _write(cfg, data, table, "--only", "0")
    assert first.returncode == 0, first.stderr[-3000:]
    second = _write(cfg, data, table, "--append", "--only", "2")
    assert second.returncode == 0, second.stderr[-3000:]
    log = sorted((table / "_delta_log").glob("*.json"))
    for again, why in (("2", "already applied"), ("1", "older than version 2")):
        refused = _write(cfg, data, table, "--append", "--only", again)
        assert refused.returncode != 0
        assert why in refused.stderr and "nothing written" in refused.stderr
        assert sorted((table / "_delta_log").glob("*.json")) == log  # no commit made
    assert json.loads((table / ledger.LEDGER).read_text()) == {
        "0": {"batch": "base-0.parquet", "state": "done"},
        "2": {"batch": "base-2.parquet", "state": "done"},
    }
