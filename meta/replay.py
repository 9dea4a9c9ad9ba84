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

from meta.errors import ReplayError

RESET_OPS = frozenset({"UpdateCommit", "CompactionCommit", "DeleteCommit"})

__all__ = ["RESET_OPS", "Commit", "ReplayError", "in_version_order", "order_commits"]


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
