"""The labels a record is filtered and grouped by (its strategy, scale, machine,
commit), from every shape a record has had: what the dashboard shows beside each record.

Older run records kept the commit and the machine only in their `environment` (a
free-form mapping of the run's surroundings), some with `-dirty` glued to the commit;
a DuckDB comparison's line names its scale only in its data folder. Reading those
shapes is the results package's job, so it is here, beside the records.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

UNKNOWN = "unknown"

_SHA = re.compile(r"[0-9a-f]{8,40}")
_SCALE_IN_PATH = re.compile(r"scale-([0-9]+(?:\.[0-9]+)?)")


def scale_label(value: float | None) -> str:
    """0.1 -> "0.1", 1.0 -> "1": the way the README names scales."""
    return UNKNOWN if value is None else f"{value:g}"


def scale_of_data(data: str | None) -> str:
    """The scale a data folder names (`.work/data/scale-1-seed-2022` -> "1")."""
    match = _SCALE_IN_PATH.search(data) if data else None
    return scale_label(float(match.group(1))) if match else UNKNOWN


def commit_label(commit: str | None, dirty: bool | None = None) -> str:
    """The git commit (7 characters), "+dirty" when the tree had changes, or unknown."""
    text = (commit or "").strip()
    if not text:
        return UNKNOWN
    if text.endswith(("+dirty", "-dirty")):
        text, dirty = text[:-6], True
    if _SHA.fullmatch(text):
        text = text[:7]
    return text + "+dirty" if dirty else text


def _env_text(env: Mapping[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = env.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


class RunShape(Protocol):
    """What a run's labels are read from (contest/results/runs.py's `RunRecord`)."""

    @property
    def environment(self) -> Mapping[str, Any]: ...
    @property
    def git_commit(self) -> str: ...
    @property
    def git_dirty(self) -> bool | None: ...
    @property
    def machine_id(self) -> str: ...
    @property
    def scale(self) -> float | None: ...
    @property
    def data(self) -> str | None: ...


def run_commit(rec: RunShape) -> str:
    """A run's commit: its own field, or its environment's (schema 1)."""
    env = rec.environment or {}
    dirty = rec.git_dirty or env.get("git_dirty") is True
    return commit_label(rec.git_commit or _env_text(env, "git_commit", "commit"), dirty)


def run_machine(rec: RunShape) -> str:
    """A run's machine id, or its environment's name for it, or unknown."""
    env = rec.environment or {}
    return rec.machine_id or _env_text(env, "machine_id", "machine", "host") or UNKNOWN


def run_scale(rec: RunShape) -> str:
    return scale_label(rec.scale) if rec.scale is not None else scale_of_data(rec.data)


@dataclass(frozen=True)
class Labels:
    """A record's filter dimensions besides its origin."""

    strategy: str = UNKNOWN
    scale: str = UNKNOWN
    machine: str = UNKNOWN
    commit: str = UNKNOWN
    when: str | None = None  # when it was measured: orders the commits, newest first


def labels_of(row: Any) -> Labels:
    """A shown row's labels: its own (a `labels` property), or read from the fields every
    kind of record names alike (strategy, scale, machine_id, git_commit, when)."""
    own = getattr(row, "labels", None)
    if isinstance(own, Labels):
        return own
    strategy, scale = getattr(row, "strategy", None), getattr(row, "scale", None)
    machine, when = getattr(row, "machine_id", None), getattr(row, "when", None)
    return Labels(
        strategy=strategy if isinstance(strategy, str) and strategy else UNKNOWN,
        scale=scale_label(scale) if isinstance(scale, int | float) else UNKNOWN,
        machine=machine if isinstance(machine, str) and machine else UNKNOWN,
        commit=commit_label(_text(getattr(row, "git_commit", None))),
        when=when if isinstance(when, str) and when else None,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
