"""`contest bench stream`'s metadata part: a stream's commits, commit only, on the real
metadata store; every micro-batch lands once, and the bench's table is dropped after."""

from __future__ import annotations

import pytest

from contest.benchmarks.stream.meta import commit_cost

pytestmark = [pytest.mark.pg]


@pytest.mark.parametrize("history", [0, 200])
def test_commit_cost_commits_every_micro_batch_once(pg, cfg, history):
    from meta import catalog

    before = {t.name for t in catalog.list_tables(pg)}
    record = commit_cost(pg, cfg, 30, history=history, say=lambda _m: None)
    assert record["micro_batches"] == 30 and record["history_commits"] == history
    assert record["exact"] is True
    # The head snapshot lists the history and the micro-batches: 16 bytes a commit.
    assert record["head_snapshot_bytes"] >= 16 * (30 + history)
    assert record["commit_ms_first"] > 0 and record["commit_ms_last"] > 0
    assert {t.name for t in catalog.list_tables(pg)} == before
