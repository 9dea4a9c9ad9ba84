"""Pure measures over a run's phase records: LST-Bench's degradation rate (the mean
relative change between successive phases of the same kind), split at compactions."""

from __future__ import annotations

from collections.abc import Sequence

from contest.results.intervals import Interval, median_interval


def relative_changes(values: Sequence[float]) -> list[float]:
    """(b - a) / a for each successive pair; a pair whose first value is 0 is skipped."""
    return [(b - a) / a for a, b in zip(values, values[1:], strict=False) if a > 0]


def degradation_rate(values: Sequence[float]) -> float | None:
    """LST-Bench's degradation rate of a series of the same phase: the mean relative
    change between successive runs of it (0: flat; 0.1: 10% slower each time). None
    for fewer than two values."""
    changes = relative_changes(values)
    return sum(changes) / len(changes) if changes else None


def segments(kinds: Sequence[str], values: Sequence[float | None]) -> list[list[float]]:
    """The read times between compactions: `kinds` and `values` are a run's phases in
    order (a value per read, None elsewhere); a `compact` starts a new segment, so the
    change across a compaction (its gain) is not counted as degradation."""
    out: list[list[float]] = [[]]
    for kind, value in zip(kinds, values, strict=True):
        if kind == "compact" and out[-1]:
            out.append([])
        elif kind == "read" and value is not None:
            out[-1].append(value)
    return [s for s in out if s]


def degradation_between_compactions(
    kinds: Sequence[str], values: Sequence[float | None]
) -> float | None:
    """The mean relative change between successive reads with no compaction between
    them (the rate deltas pile up at, compaction excluded)."""
    changes = [c for seg in segments(kinds, values) for c in relative_changes(seg)]
    return sum(changes) / len(changes) if changes else None


def degradation_overall(kinds: Sequence[str], values: Sequence[float | None]) -> float | None:
    """The mean relative change between every successive pair of reads, compactions
    included (what a user sees across the whole run)."""
    reads = [v for k, v in zip(kinds, values, strict=True) if k == "read" and v is not None]
    return degradation_rate(reads)


def degradation_interval(kinds: Sequence[str], values: Sequence[float | None]) -> Interval | None:
    """The median relative change between successive reads with no compaction between
    them, with its distribution-free interval (contest/results/intervals.py): how
    sure the rate is, from the run's own reads. None for no pair."""
    changes = [c for seg in segments(kinds, values) for c in relative_changes(seg)]
    return median_interval(changes) if changes else None


def growth_per_commit(points: Sequence[tuple[int, float]]) -> float | None:
    """Read seconds a commit adds: the Theil-Sen slope of read seconds against commits
    (batches applied), the median of the slopes of every pair of reads at different
    commit counts, so one slow read (the application's first of its kind, a busy moment)
    does not tilt the line as it would a least-squares fit. None for fewer than two
    distinct commit counts."""
    slopes = sorted(
        (y2 - y1) / (x2 - x1)
        for i, (x1, y1) in enumerate(points)
        for x2, y2 in points[i + 1 :]
        if x2 != x1
    )
    if not slopes:
        return None
    mid = len(slopes) // 2
    return slopes[mid] if len(slopes) % 2 else (slopes[mid - 1] + slopes[mid]) / 2


def pays_off_from(
    cost_s: float, growth_s: float | None, every: int, read_every: int
) -> float | None:
    """The table age (commits) from which compacting every `every` commits pays for
    itself within its own cycle: a compaction at commit c takes the c commits' growth
    (`growth_s` each, from a table never compacted) off each of the cycle's
    every / read_every reads, so it pays once c * growth_s * every / read_every reaches
    its cost. None where reads do not grow (it never pays in read time)."""
    if growth_s is None or growth_s <= 0 or every < 1 or read_every < 1:
        return None
    return cost_s * read_every / (growth_s * every)
