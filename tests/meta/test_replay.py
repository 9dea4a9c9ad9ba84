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


# -- the column form (numpy) gives what order_commits gives ---------------------------

OPS = ["MergeCommit", "AppendCommit", "CompactionCommit", "UpdateCommit"]


def columns(commits):
    import numpy as np

    from meta.replay import RESET_OPS

    resets = np.array([c.commit_op in RESET_OPS for c in commits], dtype=bool)
    known = np.array([c.version is not None for c in commits], dtype=bool)
    versions = np.array([c.version or 0 for c in commits], dtype=np.int64)
    return resets, versions, known


def column_order(commits):
    from meta.replay import first_duplicate, merge_positions, tail_start

    resets, versions, known = columns(commits)
    start = tail_start(resets)
    dup = first_duplicate(versions[start:], known[start:])
    if dup is not None:
        a, b = (commits[start + p] for p in dup)
        raise ReplayError(f"commits {a.commit_id} and {b.commit_id} both have version {a.version}")
    return [commits[p] for p in merge_positions(resets, versions, known).tolist()]


def random_history(rng, n, distinct):
    """Mostly versioned merges, some unversioned appends and resets; versions distinct or
    drawn with repeats (then the order fails on the first repeat)."""
    pool = rng.sample(range(-3, 3 * n + 3), n) if distinct else None
    commits = []
    for i in range(n):
        op = rng.choices(OPS, weights=[20, 4, 1, 1])[0]
        drawn = pool[i] if pool else rng.randrange(-3, 3 * n)
        commits.append(Commit(f"c{i}", op, None if rng.random() < 0.25 else drawn))
    return commits


@pytest.mark.parametrize("seed", range(300))
def test_column_order_is_order_commits(seed):
    import random

    rng = random.Random(seed)
    commits = random_history(rng, rng.randrange(0, 40), distinct=seed % 3 != 0)
    try:
        expected = ids(order_commits(commits))
    except ReplayError as exc:
        with pytest.raises(ReplayError) as got:
            column_order(commits)
        assert str(got.value) == str(exc)
        return
    assert ids(column_order(commits)) == expected


def test_column_order_of_extremes():
    lowest = -(2**63)
    commits = [
        Commit("p0", "AppendCommit", None),
        Commit("lo", "MergeCommit", lowest),
        Commit("p1", "AppendCommit", None),
        Commit("hi", "MergeCommit", 2**63 - 1),
        Commit("p2", "AppendCommit", None),
    ]
    assert ids(column_order(commits)) == ids(order_commits(commits))
    assert ids(column_order([])) == []


def test_is_permutation():
    import numpy as np

    from meta.replay import is_permutation

    assert is_permutation(np.array([2, 0, 1]), 3)
    assert is_permutation(np.array([], dtype=np.int64), 0)
    assert not is_permutation(np.array([0, 0, 1]), 3)
    assert not is_permutation(np.array([1, 2]), 3)
    assert not is_permutation(np.array([0, 1, 3]), 3)


def test_positions_of_maps_an_order_back_to_arrival():
    from meta.replay import positions_of

    assert positions_of(["b", "c", "a"], ["a", "b", "c"]).tolist() == [1, 2, 0]
    assert positions_of(["x", "a"], ["a", "b"]).tolist() == [-1, 0]
    assert positions_of(["d", "d", "e"], ["d", "e", "d"]).tolist() == [0, 2, 1]
    assert positions_of(["d", "d"], ["d"]).tolist() == [0, -1]
