"""Hudi 1.0's timeline as files: its completed write instants, read from the folder
without a JVM (the stream's replay check and the kill trials' boundary)."""

from __future__ import annotations

import re
from pathlib import Path

# A micro-batch's record before the table had a completed instant.
NO_INSTANT = "-"
# A completed write instant in Hudi 1.0's timeline: `<requested>_<completed>.<action>`.
COMPLETED = re.compile(r"^(\d+)_(\d+)\.(deltacommit|commit|replacecommit)$")


def completed_instants(table: Path) -> list[tuple[str, int]]:
    """(requested time, size of the file) of each completed write instant, in order."""
    folder = Path(table) / ".hoodie" / "timeline"
    out = []
    for path in folder.iterdir() if folder.is_dir() else []:
        if m := COMPLETED.match(path.name):
            out.append((m.group(1), path.stat().st_size))
    return sorted(out)


def empty_after(instants: list[tuple[str, int]], after: str) -> bool:
    """Whether the first completed write instant after `after` (a micro-batch's record
    of the last one before its write) is an empty file: Hudi 1.0.2 creates the completed
    instant empty and then fills it, and its reads take the instant as committed, so a
    kill in between left that micro-batch committed with no batch id to find. (One writer
    a table: the instant after the record is that micro-batch's.)"""
    if not after:
        return False
    later = [size for t, size in instants if t > after]
    return bool(later) and later[0] == 0


def instant_after(instants: list[tuple[str, int]], after: str) -> str | None:
    """The micro-batch's own completed instant: the first after `after` (its record of
    the last one before its write; one writer a table), or the newest when it has no
    record; None when there is none."""
    if not after:
        return instants[-1][0] if instants else None
    later = [t for t, _ in instants if t > after]
    return later[0] if later else None
