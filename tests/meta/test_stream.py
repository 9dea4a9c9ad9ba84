"""Micro-batch commits on the real metadata store: recorded with the commit, a replayed
batch id commits nothing, versions follow every earlier commit, a source file is
committed once per table."""

from __future__ import annotations

import pyarrow as pa
import pytest

from meta import catalog
from meta.commits import DataFile, commit_files, head_snapshot
from meta.stream import BatchRecorded, SourceConsumed, batches, commit_batch, recorded, visible

SCHEMA = pa.schema([("uuid", pa.string()), ("v", pa.int64())])


def _file(table, name: str, rows: int = 3) -> DataFile:
    return DataFile(f"{table.path}/part-{name}_0000.parquet", 10, ("uuid", "v"), 0, rows)


@pytest.mark.pg
def test_replayed_batch_commits_nothing_and_versions_follow(pg, tmp_path):
    t = catalog.create_table(pg, "stream_meta_t", tmp_path / "t", SCHEMA, ["uuid"], 1, replace=True)
    # A bulk write's versions first: the stream's follow them.
    commit_files(pg, t, [_file(t, "bulk0")], version=0)
    commit_files(pg, t, [_file(t, "bulk1")], version=1)
    _, v0 = commit_batch(pg, t, [_file(t, "a")], query_id="q1", batch_id=0, source_files=["/s/1"])
    _, v1 = commit_batch(pg, t, [_file(t, "b")], query_id="q1", batch_id=1, source_files=["/s/2"])
    assert (v0, v1) == (2, 3)
    head_before = head_snapshot(pg, t)
    with pytest.raises(BatchRecorded) as info:
        commit_batch(pg, t, [_file(t, "b2")], query_id="q1", batch_id=1, source_files=["/s/2"])
    assert info.value.batch.version == 3
    assert head_snapshot(pg, t) == head_before  # nothing committed: no commit, no version
    with pytest.raises(SourceConsumed, match="/s/1 was committed"):
        commit_batch(pg, t, [_file(t, "c")], query_id="q2", batch_id=0, source_files=["/s/1"])
    assert head_snapshot(pg, t) == head_before
    got = batches(pg, t)
    assert [(b.query_id, b.batch_id, b.version, b.rows) for b in got] == [
        ("q1", 0, 2, 3),
        ("q1", 1, 3, 3),
    ]
    assert recorded(pg, t, "q1", 1) == got[1] and recorded(pg, t, "q1", 2) is None
    assert visible(pg, t) == got
    catalog.drop_table(pg, "stream_meta_t")
    assert recorded(pg, t, "q1", 1) is None  # dropped with the table


@pytest.mark.pg
def test_commit_appends_to_the_head_in_postgresql_and_resets_replace_it(pg, tmp_path):
    """Each commit's partition version is the head's snapshot plus the commit (appended
    by PostgreSQL), after a long synthetic history as after none; a compaction (a reset)
    starts a new snapshot."""
    from meta.synthetic import generate_history, head_commit_ids

    table = generate_history(pg, "stream_meta_long", tmp_path / "long", 500).table
    head, before = head_commit_ids(pg, table)
    ids = [
        commit_batch(
            pg, table, [_file(table, f"m{b}")], query_id="q", batch_id=b, source_files=[f"/s/{b}"]
        )[0].commit_id
        for b in range(3)
    ]
    version, after = head_commit_ids(pg, table)
    assert version == head + 3 and after == [*before, *ids]
    reset = commit_files(pg, table, [_file(table, "compacted")], commit_op="CompactionCommit")
    last = commit_files(pg, table, [_file(table, "next")], version=10_000)
    assert head_commit_ids(pg, table) == (head + 5, [reset.commit_id, last.commit_id])
    catalog.drop_table(pg, "stream_meta_long")
