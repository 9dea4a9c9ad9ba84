"""A peer table's batch ledger: what an `--append` may add (no Spark). A Delta table that
refuses a batch twice is in tests/contest/workload/test_runner.py (its workload's table)."""

import json

import pytest

from contest.data.batches import Batch
from contest.errors import DataError, ReadError
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
        "0": {"batch": "base-0.parquet", "state": "done", "seq": 2},
        "1": {"batch": "base-1.parquet", "state": "done", "seq": 1},
    }
    assert [p.name for p in tmp_path.iterdir()] == [ledger.LEDGER]  # no temporary left
    with pytest.raises(DataError, match=r"already applied; nothing written \(--replace"):
        ledger.check(tmp_path, [_batch(1)], in_order=True)
    (tmp_path / ledger.LEDGER).write_text("{not json")
    with pytest.raises(DataError, match="not a batch ledger"):
        ledger.load(tmp_path)


def _done(commit: str, seq: int, group: int | None = None) -> dict:
    entry: dict = {"batch": "b", "state": "done", "commit": commit, "seq": seq}
    return entry if group is None else entry | {"group": group}


def test_a_version_maps_to_the_commit_holding_exactly_the_batches_up_to_it():
    held = {0: _done("c0", 1), 2: _done("c2", 2), 5: _done("c5", 3)}
    assert ledger.commit_for(held, 0) == "c0"
    assert ledger.commit_for(held, 3) == "c2"  # versions 3 and 4: none, as of 2
    assert ledger.commit_for(held, 9) == "c5"
    assert ledger.newest(held) == 5
    with pytest.raises(ReadError, match="version -1: the table holds no batch at or before"):
        ledger.commit_for(held, -1)


def test_a_version_no_commit_holds_exactly_is_refused_saying_why():
    # Version 5 appended (a concurrent format may) before version 3: the commit after 3
    # holds 5 too, so nothing holds exactly the batches up to 3 or 4.
    shuffled = {0: _done("c0", 1), 5: _done("c5", 2), 3: _done("c3", 3)}
    with pytest.raises(ReadError, match="version 5 committed before version 3"):
        ledger.commit_for(shuffled, 4)
    assert ledger.commit_for(shuffled, 5) == "c3"
    assert ledger.commit_for(shuffled, 2) == "c0"
    # Versions 1-3 applied at once: their commits' order is unknown; all of them is fine.
    group = {0: _done("c0", 1)} | {v: _done("head", 1 + v, group=7) for v in (1, 2, 3)}
    with pytest.raises(ReadError, match=r"versions 1-3 were applied at once \(write.threads"):
        ledger.commit_for(group, 2)
    assert ledger.commit_for(group, 3) == "head" and ledger.commit_for(group, 0) == "c0"
    pending = {0: _done("c0", 1), 1: {"batch": "b", "state": "pending"}}
    with pytest.raises(ReadError, match="version 1 was being applied when a write stopped"):
        ledger.commit_for(pending, 1)
    assert ledger.commit_for(pending, 0) == "c0"
    nameless = {0: {"batch": "b", "state": "done", "seq": 1}}
    with pytest.raises(ReadError, match="no commit of the format was recorded"):
        ledger.commit_for(nameless, 0)


def test_marks_record_the_commit_its_order_and_a_group(tmp_path):
    ledger.mark(tmp_path, _batch(0), ledger.DONE, "c0")
    ledger.mark(tmp_path, _batch(2), ledger.DONE, None, group=9)
    ledger.mark(tmp_path, _batch(1), ledger.DONE, None, group=9)
    ledger.set_commit(tmp_path, [1, 2], "head")
    held = ledger.load(tmp_path) or {}
    assert [held[v].get("seq") for v in (0, 1, 2)] == [1, 3, 2]
    assert ledger.commit_for(held, 2) == "head" and ledger.commit_for(held, 0) == "c0"
    with pytest.raises(ReadError, match="applied at once"):
        ledger.commit_for(held, 1)


def test_a_batch_brings_added_columns_and_widened_integers_only():
    from contest.peers.iceberg.format import first_non_append
    from contest.peers.schema import changes

    table = {"requests": "bigint", "hits": "int", "name": "string"}
    batch = {"requests": "bigint", "tag": "string", "hits": "bigint", "name": "string"}
    assert [str(c) for c in changes(table, batch)] == [
        "added tag string",
        "widened hits int->bigint",
    ]
    assert changes({"hits": "bigint"}, {"hits": "int"}) == []  # narrower: cast up by the merge
    assert changes(table, {"requests": "bigint"}) == []  # a column it lacks reads NULL
    assert [str(c) for c in changes(table, {"name": "bigint"})] == ["retyped name string->bigint"]
    # Iceberg's snapshots (id -> (parent, operation)): the first non-append after start.
    snaps = {"1": ("None", "append"), "2": ("1", "overwrite"), "3": ("2", "append")}
    assert first_non_append(snaps, "1", "3") == ("2", "overwrite")
    assert first_non_append(snaps, "2", "3") is None


def test_a_refused_batch_leaves_a_gap_no_later_batch_or_read_crosses(tmp_path):
    ledger.mark(tmp_path, _batch(0), ledger.DONE, "c0")
    ledger.mark(tmp_path, _batch(1), ledger.REFUSED, why="delta: widened hits int->bigint: no")
    held = ledger.load(tmp_path) or {}
    assert ledger.commit_for(held, 0) == "c0" and ledger.newest(held) == 0
    with pytest.raises(ReadError, match=r"version 1 was refused by the format \(delta: widened"):
        ledger.commit_for(held, 2)
    why = ledger.refusal(held, [_batch(2)], in_order=True) or ""
    assert "version 1 (base-1.parquet) was refused by the format" in why
    assert "applied over the gap" in why


def test_a_read_job_maps_its_versions_before_spark_starts(tmp_path):
    from contest.peers.read import Span, plan_span

    assert plan_span(tmp_path) == Span()  # no ledger: the head only
    with pytest.raises(ReadError, match="no batch ledger .* only its head can be read"):
        plan_span(tmp_path, as_of=1)
    for v in (0, 1, 2):
        ledger.mark(tmp_path, _batch(v), ledger.DONE, f"c{v}")
    assert plan_span(tmp_path) == Span(version=2)
    assert plan_span(tmp_path, as_of=1) == Span(version=1, end="c1")
    changes = plan_span(tmp_path, from_version=0, to_version=2)
    assert changes == Span(version=2, from_version=0, end="c2", start="c0", changes=True)
    # From before the first batch: the whole table as of the end (no start commit).
    assert plan_span(tmp_path, from_version=-1, to_version=1).start is None
    assert plan_span(tmp_path, from_version=1).end == "c2"  # to the newest held
    with pytest.raises(ReadError, match="--from-version 2 is not before version 2"):
        plan_span(tmp_path, from_version=2, to_version=2)
