"""Figures cited by hand in results/: every ratio (`2.12x`) names the sitting whose
records give it, in one machine-readable form, `2.12x (sitting 2026-12-01T14:44:47Z)`
(a file's lines without a sitting id are named by the file: `(sitting runs)`). A
citation covers the figures before it on its line, back to the previous citation; a
figure after a line's last citation is uncited. A goal, not a measurement, says so the
same way: `1.2x (target)`. The figure must be one its sitting's
records give (contest/results/figures.py) at the rounding it shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

# A ratio as text writes one: `2.12x`, `18x`, not part of a word or a longer number.
FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)x\b")
CITATION = re.compile(r"\((?:sitting ([^()\s]+)|target)\)")
TARGET = "target"


@dataclass(frozen=True)
class Cited:
    """One figure of a page's line, with the sitting that covers it (None: uncited)."""

    line: int
    text: str  # the figure as written, `2.40`
    sitting: str | None  # TARGET: a goal, no sitting's figure

    @property
    def value(self) -> float:
        return float(self.text)

    @property
    def digits(self) -> int:
        return len(self.text.partition(".")[2])


def cited(text: str) -> Iterator[Cited]:
    """Every ratio figure of `text`, line by line, with its citation."""
    for n, line in enumerate(text.splitlines(), 1):
        marks = [(m.start(), m.group(1) or TARGET) for m in CITATION.finditer(line)]
        for m in FIGURE.finditer(line):
            after = next((s for at, s in marks if at > m.end() - 1), None)
            yield Cited(n, m.group(1), after)


def traced(figure: Cited, figures: Mapping[str, float]) -> str | None:
    """The name of a figure of the sitting that `figure` shows at its rounding, or None."""
    for name, value in figures.items():
        if f"{value:.{figure.digits}f}" == figure.text:
            return name
    return None
