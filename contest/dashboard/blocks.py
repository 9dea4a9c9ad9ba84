"""The dashboard page's building blocks: numbers written the way page.js writes them,
the state its sections share (keys, colours, figures) and the HTML pieces they are
made of; the sections themselves are in scores.py and measured.py, the page in page.py."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio

from contest.dashboard.load import UNKNOWN, Item

GENERATOR = "contest dashboard"
REFERENCE = "optimized"
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


# -- numbers, the same way page.js writes them -------------------------------------------


def _half_up(v: float) -> int:
    return math.floor(v + 0.5)


def fmt(v: float | None, kind: str) -> str:
    """int: 60,457; s1: 55.2; x2: 3.41 (JavaScript's Math.round, so both agree)."""
    if v is None:
        return "—"
    if kind == "int":
        return f"{_half_up(v):,}"
    if kind == "s1":
        return f"{_half_up(v * 10) / 10:.1f}"
    if kind == "x2":
        return f"{_half_up(v * 100) / 100:.2f}"
    raise ValueError(f"unknown number format {kind!r}")


def median(values: Sequence[float]) -> float | None:
    """The median as statistics.median, DuckDB's median() and page.js compute it."""
    s = sorted(values)
    if not s:
        return None
    lo, hi = s[(len(s) - 1) // 2], s[len(s) // 2]
    return (lo + hi) / 2


def gb(v: float | None) -> str:
    return "—" if v is None else f"{v / 1e9:.2f}"


def plot_time(when: str | None) -> str | None:
    """ISO 8601 as Plotly's date axes read it (no "T", no zone; all times are UTC)."""
    return when.replace("T", " ").rstrip("Z") if when else None


def short_time(when: str | None) -> str:
    """2026-11-26T10:55:45Z -> 2026-11-26 10:55 (tables; all times are UTC)."""
    return esc(when[:16].replace("T", " ")) if when else "—"


def scale_order(label: str) -> tuple[int, float, str]:
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def strategy_order(name: str) -> tuple[int, str]:
    """optimized first, then the others by name, unknown last."""
    return (0 if name == REFERENCE else 2 if name == UNKNOWN else 1, name)


def when_desc(items: list[Item], when: Callable[[Item], str | None]) -> list[Item]:
    """Newest first, those without a time last (the order kept among equals)."""
    known = [i for i in items if when(i)]
    return sorted(known, key=lambda i: when(i) or "", reverse=True) + [
        i for i in items if not when(i)
    ]


def when_asc(items: list[Item], when: Callable[[Item], str | None]) -> list[Item]:
    """Oldest first, those without a time last."""
    return sorted(items, key=lambda i: (not when(i), when(i) or ""))


# -- the page's state --------------------------------------------------------------------


@dataclass
class Builder:
    """Keys, colours and figures shared by the sections of one page."""

    keys: dict[tuple[str, ...], int] = field(default_factory=dict)
    figures: dict[str, dict[str, Any]] = field(default_factory=dict)
    colours: dict[str, str] = field(default_factory=dict)

    def key(self, item: Item) -> int:
        """The index of the item's filter dimensions in `keys`."""
        return self.keys.setdefault(item.dims, len(self.keys))

    def colour(self, strategy: str) -> str:
        if strategy not in self.colours:
            self.colours[strategy] = PALETTE[len(self.colours) % len(PALETTE)]
        return self.colours[strategy]

    def figure(self, fig_id: str, fig: go.Figure, height: int = 380) -> str:
        fig.update_layout(
            template="plotly_white",
            height=height,
            margin={"l": 60, "r": 20, "t": 40, "b": 50},
            legend={"orientation": "h", "y": -0.18},
            font={"size": 12},
        )
        self.figures[fig_id] = json.loads(pio.to_json(fig, validate=False))
        return f'<div class="chart" id="{fig_id}"></div>'


# -- HTML pieces -------------------------------------------------------------------------


def esc(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return html.escape(str(v))


def table(
    headers: Sequence[str],
    body: Iterable[tuple[dict[str, str], Sequence[str]]],
    numeric: Iterable[int] = (),
    what: str = "rows",
) -> str:
    """A table whose rows carry `data-*` attributes; cells are already HTML."""
    num = set(numeric)
    head = "".join(
        f'<th class="{"num" if i in num else ""}">{esc(h)}</th>' for i, h in enumerate(headers)
    )
    out = []
    total = 0
    for attrs, cells in body:
        total += 1
        a = "".join(f" {k}='{html.escape(v, quote=True)}'" for k, v in attrs.items())
        tds = "".join(
            f'<td class="{"num" if i in num else ""}">{c}</td>' for i, c in enumerate(cells)
        )
        out.append(f"<tr{a}>{tds}</tr>")
    return (
        f'<div class="table-wrap"><p class="shown" data-what="{what}">{total} {what}</p>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(out)}</tbody></table>"
        '<p class="none-shown" hidden>No rows match the filters.</p></div>'
    )


def summary_cell(kind: str, column: int, values: Sequence[float | None]) -> str:
    """A cell page.js recomputes over the members of its row: n (all of them), count
    (those with a value in `column`), median, range (min-max) or median_s (seconds)."""
    present = [v for v in values if v is not None]
    if kind == "n":
        shown = str(len(values))
    elif kind == "count":
        shown = str(len(present))
    elif kind == "median":
        shown = fmt(median(present), "int")
    elif kind == "range":
        shown = f"{fmt(min(present), 'int')}–{fmt(max(present), 'int')}" if present else "—"
    elif kind == "median_s":
        shown = fmt(median(present), "s1")
    else:
        raise ValueError(kind)
    return f'<span data-agg="{kind}" data-col="{column}">{shown}</span>'


def ratio_text(ref: Sequence[float], own: Sequence[float]) -> str:
    """How many times the reference's median rows/core/s this one's is; a ratio from a
    single run says so."""
    m_ref, m_own = median(ref), median(own)
    if m_ref is None or not m_own:
        return "—"
    note = " (single run)" if min(len(ref), len(own)) < 2 else ""
    return f"{fmt(m_ref / m_own, 'x2')}×{note}"


def section(anchor: str, title: str, intro: str, body: str, none: str = "") -> str:
    """A section of the page. `none`: the line shown in place of an empty body (its
    results files hold nothing yet), so a section names its anchor and heading once."""
    if not body and none:
        body = empty(none)
    return (
        f'<section id="{anchor}"><h2>{esc(title)}</h2><p class="intro">{intro}</p>{body}</section>'
    )


def empty(text: str) -> str:
    return f'<p class="empty">{text}</p>'
