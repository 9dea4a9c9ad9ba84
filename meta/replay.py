"""Replay rules, pure: which commits are live and in what order they merge.

A partition's head snapshot lists its live commits in arrival order. A reset
commit (UpdateCommit, CompactionCommit, DeleteCommit) holds everything before it,
so it stays first and what preceded it is gone; the commits after it are applied
in user-defined version order. A commit without a version (written by a plain
LakeSoul writer) applies after every version that had arrived before it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from meta.errors import ReplayError

RESET_OPS = frozenset({"UpdateCommit", "CompactionCommit", "DeleteCommit"})

__all__ = [
    "RESET_OPS",
    "Commit",
    "ReplayError",
    "first_duplicate",
    "in_version_order",
    "is_permutation",
    "tail_start",
    "merge_positions",
    "order_commits",
]
NO_VERSION_BASE = np.iinfo(np.int64).min  # order_commits' -(2**63): before every version


@dataclass(frozen=True)
class Commit:
    commit_id: str
    commit_op: str
    version: int | None


def last_reset(commits: Sequence[Commit]) -> int:
    """Index of the newest reset commit, or -1."""
    for i in range(len(commits) - 1, -1, -1):
        if commits[i].commit_op in RESET_OPS:
            return i
    return -1


def order_commits(commits: Sequence[Commit]) -> list[Commit]:
    """The live commits of a snapshot in merge order (see the module docstring)."""
    cut = last_reset(commits)
    head, tail = list(commits[: cut + 1]), list(commits[cut + 1 :])
    if cut > 0:
        head = head[cut:]  # a reset's snapshot starts with it; older entries are stale
    check_unique(tail)
    keyed = []
    high: int | None = None
    for pos, c in enumerate(tail):
        if c.version is not None:
            high = c.version if high is None else max(high, c.version)
            keyed.append(((c.version, 0, pos), c))
        else:
            base = high if high is not None else -(2**63)
            keyed.append(((base, 1, pos), c))
    return head + [c for _, c in sorted(keyed, key=lambda kc: kc[0])]


def check_unique(commits: Sequence[Commit]) -> None:
    seen: dict[int, str] = {}
    for c in commits:
        if c.version is None:
            continue
        if c.version in seen:
            raise ReplayError(
                f"commits {seen[c.version]} and {c.commit_id} both have version {c.version}"
            )
        seen[c.version] = c.commit_id


def in_version_order(commits: Sequence[Commit]) -> bool:
    return [c.commit_id for c in order_commits(commits)] == [c.commit_id for c in commits]


# -- the same rules on columns (numpy), for long histories ------------------------------


def merge_positions(resets: np.ndarray, versions: np.ndarray, known: np.ndarray) -> np.ndarray:
    """`order_commits` on columns: the arrival positions of the live commits in merge
    order. resets[i]: commit i is a reset commit; versions[i] its version where known[i].
    Duplicate versions are not checked here (`first_duplicate`)."""
    start = tail_start(resets)
    cut = start - 1
    v = np.asarray(versions[start:], dtype=np.int64)
    k = np.asarray(known[start:], dtype=bool)
    # An unversioned commit sorts after the highest version that arrived before it.
    seen = np.maximum.accumulate(np.where(k, v, NO_VERSION_BASE)) if len(v) else v
    key = np.where(k, v, seen)
    tail = np.lexsort((~k, key)) + start  # stable: arrival order breaks ties
    head = np.array([cut] if cut >= 0 else [], dtype=np.int64)
    return np.concatenate([head, tail.astype(np.int64)])


def tail_start(resets: np.ndarray) -> int:
    """Where the ordered part of a snapshot starts: after its newest reset commit."""
    hits = np.flatnonzero(resets)
    return int(hits[-1]) + 1 if len(hits) else 0


def first_duplicate(versions: np.ndarray, known: np.ndarray) -> tuple[int, int] | None:
    """The first commit (in arrival order) whose version an earlier commit has: the
    positions (earlier, later), as `check_unique` reports them; None when unique."""
    at = np.flatnonzero(known)
    if len(at) < 2:
        return None
    v = np.asarray(versions, dtype=np.int64)[at]
    by = np.argsort(v, kind="stable")
    sv = v[by]
    again = sv[1:] == sv[:-1]
    if not again.any():
        return None
    later = int(by[1:][again].min())  # stable sort: a repeat's first holder is earlier
    earlier = int(by[np.searchsorted(sv, v[later], side="left")])
    return int(at[earlier]), int(at[later])


def is_permutation(positions: np.ndarray, n: int) -> bool:
    """Every position 0..n-1 exactly once: nothing dropped or duplicated."""
    if len(positions) != n:
        return False
    if n == 0:
        return True
    if positions.min() < 0 or positions.max() >= n:
        return False
    return bool((np.bincount(positions, minlength=n) == 1).all())


def positions_of(order: Sequence[str], arrival: Sequence[str]) -> np.ndarray:
    """The arrival position of each commit id of `order` (-1 for one not in `arrival`);
    an id listed twice takes its positions in turn."""
    where: dict[str, list[int]] = {}
    for pos in range(len(arrival) - 1, -1, -1):
        where.setdefault(arrival[pos], []).append(pos)
    out = np.empty(len(order), dtype=np.int64)
    for i, cid in enumerate(order):
        stack = where.get(cid)
        out[i] = stack.pop() if stack else -1
    return out
