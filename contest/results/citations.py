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

In a table, a column whose header says it holds ratios (`ratio`, `ratios`, `last /
first`) holds figures in every cell: each decimal of its cells is one, cited by a
citation in its cell or else by one in its header (`| ratios (sitting native_merge) |`).
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
# A table column of ratios, by its header; a decimal of one of its cells.
RATIO_COLUMN = re.compile(r"\bratios?\b|\blast / first\b", re.IGNORECASE)
CELL_DECIMAL = re.compile(r"(?<![\w.])" + _DECIMAL)
TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}")
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


def _cells(line: str) -> list[str]:
    """A markdown table row's cells (an escaped `\\|` stays inside its cell)."""
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [c.replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def _citation(text: str) -> str | None:
    m = CITATION.search(text)
    return (m.group(1) or TARGET) if m else None


def _column_figures(n: int, header: list[str], line: str) -> Iterator[Cited]:
    """The figures of a table row's ratio columns (`RATIO_COLUMN`), each cited by its
    cell or its column's header."""
    for head, cell in zip(header, _cells(line), strict=False):
        if not RATIO_COLUMN.search(CITATION.sub("", head)):
            continue
        sitting = _citation(cell) or _citation(head)
        for m in CELL_DECIMAL.finditer(CITATION.sub("", cell)):
            yield Cited(n, m.group(1), sitting)


def cited(text: str) -> Iterator[Cited]:
    """Every ratio figure of `text`, line by line, with its citation (a table's ratio
    columns by `_column_figures`)."""
    lines = text.splitlines()
    header: list[str] | None = None
    for n, line in enumerate(lines, 1):
        if not line.lstrip().startswith("|"):
            header = None
        elif header is None and n < len(lines) and TABLE_RULE.match(lines[n].strip()):
            header = _cells(line)
        elif header is not None and not TABLE_RULE.match(line.strip()):
            yield from _column_figures(n, header, line)
            # The other cells as prose (a ratio column's cells are read above only).
            cells = _cells(line)
            line = " | ".join(
                cell
                for i, cell in enumerate(cells)
                if i >= len(header) or not RATIO_COLUMN.search(CITATION.sub("", header[i]))
            )
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
