"""The labels a record is filtered and grouped by (its commit, machine, scale), from
every shape a record has had: what the dashboard shows beside each record.

Older run records kept the commit and the machine only in their `environment` (a
free-form mapping of the run's surroundings), some with `-dirty` glued to the commit;
a DuckDB comparison's line names its scale only in its data folder. Reading those
shapes is the results package's job, so it is here, beside the records.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from contest.results.runs import RunRecord

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


def run_commit(rec: RunRecord) -> str:
    """A run's commit: its own field, or its environment's (schema 1)."""
    env = rec.environment or {}
    dirty = rec.git_dirty or env.get("git_dirty") is True
    return commit_label(rec.git_commit or _env_text(env, "git_commit", "commit"), dirty)


def run_machine(rec: RunRecord) -> str:
    """A run's machine id, or its environment's name for it, or unknown."""
    env = rec.environment or {}
    return rec.machine_id or _env_text(env, "machine_id", "machine", "host") or UNKNOWN


def run_scale(rec: RunRecord) -> str:
    return scale_label(rec.scale) if rec.scale is not None else scale_of_data(rec.data)


def run_load(rec: RunRecord) -> float | None:
    """The one-minute load average just before the write (the first timed job)."""
    write = rec.load.get("write")
    return write.load1_before if write else None
