"""The cost model: a job's seconds as fixed + per-row x rows, fitted to its times at
several scales, and the scale from which one contender beats another.

The fit weighs each point by its own size (least squares on relative error), so the
smallest scales, where the fixed part is most of the time, set the fixed part and the
largest set the slope; its error is said as the largest relative miss of a median.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Line:
    """seconds = fixed_s + per_million_s x rows / 1e6, fitted to `points` medians."""

    fixed_s: float
    per_million_s: float
    # The largest |fit - median| / median over the points fitted.
    error: float
    points: int

    def seconds(self, rows: float) -> float:
        return self.fixed_s + self.per_million_s * rows / 1e6


def fit(points: Sequence[tuple[float, float]]) -> Line | None:
    """The line through (rows, seconds) points, least squares on relative error; None
    with fewer than two distinct row counts (no slope to tell from a constant)."""
    if len({r for r, _ in points}) < 2 or any(s <= 0 for _, s in points):
        return None
    # Minimise sum(((a + b x) - y) / y)^2: weights 1 / y^2.
    w = [1 / (s * s) for _, s in points]
    x = [r / 1e6 for r, _ in points]
    y = [s for _, s in points]
    sw = sum(w)
    sx = sum(wi * xi for wi, xi in zip(w, x, strict=True))
    sy = sum(wi * yi for wi, yi in zip(w, y, strict=True))
    sxx = sum(wi * xi * xi for wi, xi in zip(w, x, strict=True))
    sxy = sum(wi * xi * yi for wi, xi, yi in zip(w, x, y, strict=True))
    det = sw * sxx - sx * sx
    if det == 0:
        return None
    slope = (sw * sxy - sx * sy) / det
    fixed = (sy - slope * sx) / sw
    error = max(abs(fixed + slope * xi - yi) / yi for xi, yi in zip(x, y, strict=True))
    return Line(round(fixed, 3), round(slope, 4), round(error, 3), len(points))


def medians(samples: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """(rows, median seconds) per row count, in order of rows."""
    by_rows: dict[float, list[float]] = {}
    for rows, seconds in samples:
        by_rows.setdefault(rows, []).append(seconds)
    return [(r, statistics.median(s)) for r, s in sorted(by_rows.items())]


@dataclass(frozen=True)
class Crossover:
    """Where two lines cross, and on which side the first wins: from `rows` up
    (`above`) or below it; `rows` 0 with `above`: at every size; 0 without: at none."""

    rows: float
    above: bool

    def says(self, rows_per_scale: float) -> str:
        """In the generator's scale (rows_per_scale: rows at scale 1)."""
        if self.rows == 0:
            return "at every scale" if self.above else "at no scale"
        scale = self.rows / rows_per_scale
        return f"from scale {scale:.3g}" if self.above else f"below scale {scale:.3g}"


def crossover(ours: Line, theirs: Line) -> Crossover | None:
    """Where `ours` starts (or stops) taking less time than `theirs`; None when the two
    lines are one."""
    d_fixed = ours.fixed_s - theirs.fixed_s
    d_slope = ours.per_million_s - theirs.per_million_s
    if d_slope == 0:
        return None if d_fixed == 0 else Crossover(0.0, d_fixed < 0)
    rows = -d_fixed / d_slope * 1e6
    if d_slope < 0:  # ours grows slower: it wins from `rows` on
        return Crossover(max(rows, 0.0), True)
    return Crossover(rows, False) if rows > 0 else Crossover(0.0, False)
