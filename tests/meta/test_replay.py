"""Replay rules, pure functions."""

import pytest

from meta.replay import Commit, ReplayError, in_version_order, order_commits


def ids(commits):
    return [c.commit_id for c in commits]


def test_out_of_order_arrival_is_sorted_by_version():
    arrived = [
        Commit("c2", "MergeCommit", 2),
        Commit("c0", "MergeCommit", 0),
        Commit("c1", "MergeCommit", 1),
    ]
    assert ids(order_commits(arrived)) == ["c0", "c1", "c2"]
    assert not in_version_order(arrived)
    assert in_version_order(order_commits(arrived))


def test_a_reset_commit_stays_first_and_drops_what_came_before():
    arrived = [
        Commit("old", "MergeCommit", 9),
        Commit("cmp", "CompactionCommit", None),
        Commit("c5", "MergeCommit", 5),
        Commit("c3", "MergeCommit", 3),
    ]
    assert ids(order_commits(arrived)) == ["cmp", "c3", "c5"]
    upd = [Commit("u", "UpdateCommit", 1), Commit("c0", "MergeCommit", 0)]
    assert ids(order_commits(upd)) == ["u", "c0"]


def test_same_version_twice_names_both_commits():
    with pytest.raises(ReplayError, match="commits a and b both have version 4"):
        order_commits([Commit("a", "MergeCommit", 4), Commit("b", "MergeCommit", 4)])


def test_unversioned_commits_apply_after_what_had_arrived():
    arrived = [
        Commit("v5", "MergeCommit", 5),
        Commit("plain", "AppendCommit", None),
        Commit("v3", "MergeCommit", 3),
        Commit("v7", "MergeCommit", 7),
    ]
    assert ids(order_commits(arrived)) == ["v3", "v5", "plain", "v7"]
    assert ids(
        order_commits([Commit("p", "AppendCommit", None), Commit("v0", "MergeCommit", 0)])
    ) == ["p", "v0"]


def test_never_drops_or_duplicates():
    import random

    rng = random.Random(5)
    commits = [Commit(f"c{i}", "MergeCommit", i) for i in range(200)]
    rng.shuffle(commits)
    out = order_commits(commits)
    assert sorted(ids(out)) == sorted(ids(commits))
    assert [c.version for c in out] == list(range(200))
