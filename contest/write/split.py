"""How a big batch is cut into write tasks without a shuffle: contiguous row ranges.

A task of the arrow split (contest/write/files.py, write_file_split) reads one range of
the batch file with pyarrow and writes it in pieces, each piece's rows as sorted bucket
files. Ranges follow the row groups where there are enough of them (a task then reads
whole row groups, nothing skipped); a row group is cut only to give every core a task,
since a range starting inside a row group decodes and drops the rows before it. The
tasks' files are committed in range order, piece by piece, so the rows of a key that
land in several files of one commit are applied in the file's row order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence


def part_count(rows: int, task_rows: int, fixed: int, cores: int) -> int:
    """How many parts a big batch is written in: about `task_rows` rows each and at
    least one per core when `task_rows` is set, else the `fixed` count."""
    if task_rows <= 0:
        return max(fixed, 1)
    return max(cores, math.ceil(rows / task_rows), 1)


def plan_ranges(
    group_rows: Sequence[int], piece_rows: int, min_tasks: int
) -> list[tuple[int, int]]:
    """Contiguous [start, stop) row ranges covering a file with row groups of
    `group_rows` rows: consecutive row groups packed while a range stays within
    `piece_rows` (a bigger row group is a range of its own); then, when there are fewer
    than `min_tasks` ranges, each range cut into equal parts by its share of the rows."""
    total = sum(group_rows)
    if total == 0:
        return []
    runs: list[tuple[int, int]] = []
    start = pos = 0
    for rows in group_rows:
        if pos > start and piece_rows > 0 and pos - start + rows > piece_rows:
            runs.append((start, pos))
            start = pos
        pos += rows
    runs.append((start, pos))
    runs = [r for r in runs if r[1] > r[0]]
    if len(runs) >= min_tasks:
        return runs
    out: list[tuple[int, int]] = []
    for lo, hi in runs:
        parts = min(max(1, math.ceil(min_tasks * (hi - lo) / total)), hi - lo)
        out.extend(_equal_cuts(lo, hi, parts))
    return out


def pieces(start: int, stop: int, piece_rows: int) -> list[tuple[int, int]]:
    """A range in equal pieces of at most `piece_rows` rows (one piece when 0)."""
    if stop <= start:
        return []
    if piece_rows <= 0:
        return [(start, stop)]
    return _equal_cuts(start, stop, math.ceil((stop - start) / piece_rows))


def _equal_cuts(lo: int, hi: int, parts: int) -> list[tuple[int, int]]:
    cuts = [lo + (hi - lo) * i // parts for i in range(parts + 1)]
    return [(a, b) for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def groups_of(group_rows: Sequence[int], start: int, stop: int) -> Iterator[tuple[int, int]]:
    """The row groups a range overlaps, with the file row each begins at."""
    pos = 0
    for g, rows in enumerate(group_rows):
        if pos < stop and pos + rows > start:
            yield g, pos
        pos += rows
