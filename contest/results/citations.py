"""Figures cited by hand in results/: every ratio (`2.12x`) names the sitting whose
records give it, in one machine-readable form, `2.12x (sitting 2026-12-01T14:44:47Z)`
(a file's lines without a sitting id are named by the file: `(sitting runs)`). A
citation covers the figures before it on its line, back to the previous citation; a
figure after a line's last citation is uncited. A goal, not a measurement, says so the
same way: `1.2x (target)`. The figure must be one its sitting's
records give (contest/results/figures.py) at the rounding it shows.

A ratio written as a bare decimal is held to the same rule when the text says it is one
(`BARE`): after the word ratio (`ratio 0.53`, `Ratio DuckDB / optimized: **0.796**`),
after a quotient of names (`after / before **0.90**`) or of numbers (`42.7 / 17.0 =
2.5`). A bound after a comparison (`>= 1.0`) is a goal, not a figure; a number with a
unit (`0.8 s`, `4%`, `2.6 GB`) is no ratio; nor are versions, dates and sizes, which
none of these forms precede.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

# A ratio as text writes one: `2.12x`, `18x`, not part of a word or a longer number.
FIGURE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)x\b")
# A ratio written as a bare decimal, in the forms the pages use: the decimal is group 1.
_DECIMAL = r"\**(\d+\.\d+)\**(?![\w%-]|\.\d|\s?(?:[smGMK]i?B?|ms|us|min|cores?)\b)"
BARE = re.compile(
    r"(?:"
    # `ratio 0.53`, `Ratio DuckDB / optimized: 0.796`, `ratio (...): **0.527**`: the
    # first decimal after the word, unless a bound (`>= 1.0`) in a parenthesis.
    r"\bratio\b(?:[^\d().;]|\([^()]*\)){0,40}?"
    r"|"
    # `after / before **0.90**`, `DuckDB / optimized 0.796`: a quotient of names.
    r"\b[A-Za-z][\w-]* / [A-Za-z][\w-]*(?::| was| is| =)? "
    r"|"
    # `42.7 / 17.0 = **2.5**`: a quotient of numbers.
    r"\d / \d+(?:\.\d+)? = "
    r")" + _DECIMAL,
    re.IGNORECASE,
)
# A bound, not a figure: `ratio below 0.8`, `(>= 1.0: ...)`.
BOUND = re.compile(r"(?:[<>]=?|\b(?:below|above|under|over|least|most))[\s*]*$", re.IGNORECASE)
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
        found = [(m.start(1), m.end(), m.group(1)) for m in FIGURE.finditer(line)]
        found += [
            (m.start(1), m.end(), m.group(1))
            for m in BARE.finditer(line)
            if not BOUND.search(line[: m.start(1)])
        ]
        for _, end, figure in sorted(found):
            after = next((s for at, s in marks if at > end - 1), None)
            yield Cited(n, figure, after)


def traced(figure: Cited, figures: Mapping[str, float]) -> str | None:
    """The name of a figure of the sitting that `figure` shows at its rounding, or None."""
    for name, value in figures.items():
        if f"{value:.{figure.digits}f}" == figure.text:
            return name
    return None
