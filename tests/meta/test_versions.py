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


def _entry(version, cid, ts, covers=(), op="MergeCommit"):
    from meta.versions import HistoryEntry

    return HistoryEntry(version, None, cid, op, ts, 1, 1, True, covers)


def test_newest_first_places_compactions_and_unversioned_commits():
    from meta.versions import newest_first

    entries = [
        _entry(0, "a", 1),
        _entry(1, "b", 2),
        _entry(None, "plain", 3),  # applies after version 1
        _entry(2, "c", 4),
        _entry(None, "comp", 5, covers=(0, 1, 2), op="CompactionCommit"),
        _entry(3, "d", 6),
        _entry(3, "d-again", 8),  # committed again after a rollback
    ]
    order = [e.commit_id for e in newest_first(entries)]
    assert order == ["d-again", "d", "comp", "c", "plain", "b", "a"]


@pytest.mark.pg
def test_history_keeps_rolled_back_versions_and_shows_what_a_compaction_covers(
    pg, cfg, tmp_path, capsys
):
    from contest.cli.main import main
    from tests.support.config import cli

    t = catalog.create_table(pg, "ver_h", tmp_path / "ver_h", SCHEMA, ["uuid"], 1, replace=True)
    for v in range(4):
        commit_files(pg, t, [_file(t, f"v{v}")], version=v, batch=f"base-{v}.parquet")
    rollback(pg, t, 2)
    commit_files(pg, t, [_file(t, "v3b")], version=3, batch="base-3.parquet")
    compacted = commit_files(
        pg, t, [_file(t, "cmp")], commit_op="CompactionCommit", covers=range(4)
    )
    h = history(pg, t)
    assert [(e.version, e.live, e.rolled_back) for e in h.entries] == [
        (None, True, False),  # the compaction, newest
        (3, False, False),  # the second version 3, compacted
        (3, False, True),  # the rolled-back version 3 keeps its version
        (2, False, False),
        (1, False, False),
        (0, False, False),
    ]
    assert h.entries[0].commit_id == compacted.commit_id and h.entries[0].covers == (0, 1, 2, 3)
    assert h.entries[2].batch == "base-3.parquet"
    capsys.readouterr()
    assert main(cli(cfg, "history", "--table", "ver_h")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "covers" in lines[1]
    assert compacted.commit_id in lines[2] and " v0-3 " in lines[2] and lines[2].endswith("yes")
    assert lines[4].split()[0] == "3" and lines[4].endswith("no (rolled back)")


@pytest.mark.pg
def test_a_claimed_version_is_taken_over_until_its_commit_lands(pg, tmp_path):
    """Another writer's commit (stock LakeSoul's DBManager) claims its version first: a
    claim whose commit never landed is replaced, one that landed refuses the version."""
    import uuid

    from meta.commits import claim_version

    t = catalog.create_table(pg, "claim_t", tmp_path / "claim_t", SCHEMA, ["uuid"], 1, replace=True)
    stopped = str(uuid.uuid4())
    claim_version(pg, t, stopped, 0, "base-0.parquet")  # its writer stopped before committing
    commit_files(pg, t, [_file(t, "v1")], version=1)
    again = str(uuid.uuid4())
    claim_version(pg, t, again, 0, "base-0.parquet")
    assert committed_versions(pg, t) == {1: head_snapshot(pg, t)[1][0].commit_id}
    with pytest.raises(CommitError, match="version 1 is already committed"):
        claim_version(pg, t, str(uuid.uuid4()), 1)


@pytest.mark.pg
def test_a_rollback_into_a_compaction_is_refused_naming_it(pg, cfg, tmp_path, capsys):
    """`contest compact` merged versions 0-3 into one commit: a rollback to 1 used to say
    `nothing above version 1: nothing to do` and leave all four in; it is refused, naming
    the compaction and what it covers, and changes nothing."""
    from contest.cli.main import main
    from tests.support.config import cli

    t = catalog.create_table(pg, "ver_c", tmp_path / "ver_c", SCHEMA, ["uuid"], 1, replace=True)
    for v in range(4):
        commit_files(pg, t, [_file(t, f"v{v}")], version=v, batch=f"base-{v}.parquet")
    comp = commit_files(pg, t, [_file(t, "cmp")], commit_op="CompactionCommit", covers=range(4))
    before = head_snapshot(pg, t)[0]
    with pytest.raises(UsageError, match=rf"versions v0-3 .* one commit \({comp.commit_id}\)"):
        rollback(pg, t, 1)
    capsys.readouterr()
    assert main(cli(cfg, "rollback", "--table", "ver_c", "--to-version", "1")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "roll back to 3 or later" in err[0] and comp.commit_id in err[0]
    assert head_snapshot(pg, t)[0] == before  # nothing changed
    assert rollback(pg, t, 3).removed == ()  # at or above the compaction: nothing above it
    commit_files(pg, t, [_file(t, "v4")], version=4, batch="base-4.parquet")
    assert len(rollback(pg, t, 3).removed) == 1  # commits above a compaction still go
