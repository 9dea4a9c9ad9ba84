"""The micro-batch guard of the harness's Delta, Hudi and Paimon sinks
(contest/peers/microbatch.py: the check and each sink's lookup of its micro-batch) and
Hudi's empty completed instant: pure logic over real records and files."""

from __future__ import annotations

import pytest

from contest.errors import DataError, RunError
from contest.peers.hudi.timeline import completed_instants, empty_after
from contest.peers.microbatch import MicroBatch, SourceRecord, SourceRecords, check_batch


def test_check_batch_replay_refusals_and_order(tmp_path):
    ledger = SourceRecords(tmp_path / "_contest_stream")
    ledger.write(SourceRecord("q", 0, ("/s/feed-000000.parquet", "/s/feed-000002.parquet")))
    ledger.write(SourceRecord("q", 1, ("/s/feed-000003.parquet",)))  # never committed
    entries = ledger.entries()
    done = {("q", 0)}

    def committed(e: SourceRecord) -> bool:
        return (e.query, e.batch) in done

    files = ["/s/feed-000000.parquet", "/s/feed-000002.parquet"]
    assert check_batch(entries, committed, "q", 0, files, "t") is True  # a replay
    with pytest.raises(RunError, match="batch 0 of query q was committed with .*planned it"):
        check_batch(entries, committed, "q", 0, [*files, "/s/feed-000004.parquet"], "t")
    with pytest.raises(RunError, match="feed-000002.parquet was committed to t by batch 0"):
        check_batch(entries, committed, "other", 0, ["/s/feed-000002.parquet"], "t")
    with pytest.raises(DataError, match="feed-000001.parquet: landed after .*feed-000002"):
        check_batch(entries, committed, "q", 1, ["/s/feed-000001.parquet"], "t")
    # batch 1's record never committed: it guards nothing, its files apply
    assert check_batch(entries, committed, "q", 1, ["/s/feed-000003.parquet"], "t") is False
    # a committed batch id with no record (older than the records): a replay
    done.add(("q", 7))
    assert check_batch(entries, committed, "q", 7, ["/s/x.parquet"], "t") is True


def test_a_micro_batch_finds_its_own_record_and_writes_the_next(tmp_path):
    ledger = SourceRecords(tmp_path / "_contest_stream")
    ledger.write(SourceRecord("q", 0, ("/s/feed-000000.parquet",), after="7"))
    files = ["/s/feed-000000.parquet"]
    replay = MicroBatch("q", 0, files, ledger.entries(), "t")
    assert replay.own == SourceRecord("q", 0, ("/s/feed-000000.parquet",), "7")
    assert replay.replayed(lambda e: e.batch == 0) is True
    new = MicroBatch("q", 1, ["/s/feed-000001.parquet"], ledger.entries(), "t")
    assert new.own is None and new.replayed(lambda e: e.batch == 0) is False
    assert new.record("8") == SourceRecord("q", 1, ("/s/feed-000001.parquet",), "8")


def test_an_empty_completed_instant_after_the_record_is_the_batch(tmp_path):
    timeline = tmp_path / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    (timeline / "20260101000000001_20260101000000002.deltacommit").write_text("{}")
    (timeline / "20260101000000003.deltacommit.requested").write_text("")
    assert completed_instants(tmp_path) == [("20260101000000001", 2)]
    assert not empty_after(completed_instants(tmp_path), "20260101000000001")
    (timeline / "20260101000000003_20260101000000004.deltacommit").write_text("")
    instants = completed_instants(tmp_path)
    assert empty_after(instants, "20260101000000001")  # the batch's commit, killed half-way
    assert not empty_after(instants, "-")  # the first instant is not empty
    assert not empty_after(instants, "")  # no record: nothing to say
