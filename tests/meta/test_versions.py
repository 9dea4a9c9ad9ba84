"""Versions: gaps (pure rules), history and rollback on the real metadata store."""

from __future__ import annotations

import pyarrow as pa
import pytest

from meta import catalog
from meta.commits import DataFile, commit_files, committed_versions, head_snapshot
from meta.errors import CommitError, UsageError
from meta.versions import Gaps, history, plan_versions, rollback, version_gaps

SCHEMA = pa.schema([("uuid", pa.string()), ("v", pa.int64())])


def test_gaps_from_the_plan():
    assert version_gaps([0, 1, 2], [0, 1, 2]) == Gaps()
    assert version_gaps([1, 2, 3], range(11)) == Gaps(holes=(0,), pending=tuple(range(4, 11)))
    assert version_gaps([0, 1, 3], range(4)) == Gaps(holes=(2,))
    assert version_gaps([], [0, 1]) == Gaps(pending=(0, 1))


def test_a_gap_the_plan_skipped_is_still_a_hole():
    # `write --only 0,1,2,4`: the plan has no 3, the table still lacks batch 3.
    assert version_gaps([0, 1, 2, 4], [0, 1, 2, 4]) == Gaps(holes=(3,))
    assert version_gaps([9, 10], [9, 10]) == Gaps()  # nothing known below 9
    assert version_gaps([2, 5], [0, 2, 5, 7]) == Gaps(holes=(0, 1, 3, 4), pending=(7,))


def test_gaps_without_a_plan_are_holes_between_committed():
    assert version_gaps([0, 1, 3, 6]) == Gaps(holes=(2, 4, 5))
    assert version_gaps([5]) == Gaps()
    assert "missing version(s) 2" in version_gaps([0, 1, 3]).describe()


def _file(table, name):
    return DataFile(f"{table.path}/part-{name}_0000.parquet", 10, ("uuid", "v"), 0)


@pytest.mark.pg
def test_history_rollback_and_recommit(pg, tmp_path):
    t = catalog.create_table(pg, "ver_t", tmp_path / "ver_t", SCHEMA, ["uuid"], 1, replace=True)
    plan_versions(pg, t, {v: f"base-{v}.parquet" for v in range(4)})
    for v in (0, 1, 3):
        commit_files(pg, t, [_file(t, f"v{v}")], version=v, batch=f"base-{v}.parquet")
    with pytest.raises(CommitError, match="version 3 is already committed"):
        commit_files(pg, t, [_file(t, "again")], version=3)
    h = history(pg, t)
    assert [e.version for e in h.entries] == [3, 1, 0]
    assert all(e.live and e.files == 1 and e.bytes == 10 for e in h.entries)
    assert h.gaps == Gaps(holes=(2,))

    dry = rollback(pg, t, 1, dry_run=True)
    assert len(dry.removed) == 1 and dry.partition_version is None
    assert sorted(committed_versions(pg, t)) == [0, 1, 3]
    done = rollback(pg, t, 1)
    assert done.partition_version == 3
    assert sorted(committed_versions(pg, t)) == [0, 1]
    assert [c.version for c in head_snapshot(pg, t)[1]] == [0, 1]
    assert history(pg, t).gaps == Gaps()  # the plan above 1 went with the rollback
    commit_files(pg, t, [_file(t, "v3b")], version=3)  # the version is free again
    with pytest.raises(UsageError, match="oldest committed version is 0"):
        rollback(pg, t, -5)
