"""A results file's table and chart drawn from its record's declarations alone
(`contest.results.shown`: each shown value's label, unit, format and part in the chart),
so a record type added to the registry is shown without an edit here.

A table has a column per declared value, in declaration order; a cell is written by its
declared format, the same way page.js writes numbers. A record that declares an x and a
y is drawn as bars, one series per sitting, whiskers from its low to its high, its n in
the hover.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import plotly.graph_objects as go

from contest.dashboard.blocks import PALETTE, Builder, esc, fmt, gb, short_time, table
from contest.dashboard.load import Item
from contest.infra.noise import NOISE_NOT_RECORDED
from contest.results.labels import commit_label, scale_label
from contest.results.shown import Column, columns

# A column besides the record's own: its header, its cell, whether it is a number.
Lead = tuple[str, Callable[[Item], str], bool]


def _check(v: Any, no: str = "NO") -> str:
    if v is None:
        return "—"
    return '<span class="ok">yes</span>' if v else f'<span class="bad">{no}</span>'


def _load(pair: tuple[float | None, float | None]) -> str:
    start, end = pair
    if start is None:
        return "—"
    return f"{start:.1f} → {end:.1f}" if end is not None else f"{start:.1f}"


def _fixed(digits: int) -> Callable[[Any], str]:
    return lambda v: "—" if v is None else f"{v:.{digits}f}"


def _range3(pair: tuple[float, float]) -> str:
    return f"{pair[0]:.3f}–{pair[1]:.3f}"


def _spread2(v: tuple[float, float | None, float | None]) -> str:
    median, low, high = v
    if low is None or high is None:
        return f"{median:.2f}"
    return f"{median:.2f} [{low:.2f}–{high:.2f}]"


# How each declared format is written (contest/results/shown.py names them).
FORMATS: dict[str, Callable[[Any], str]] = {
    "text": esc,
    "count": esc,
    "long": lambda v: f'<span class="long">{esc(v)}</span>',
    "time": short_time,
    "int": lambda v: fmt(v, "int"),
    "s1": lambda v: fmt(v, "s1"),
    "f1": _fixed(1),
    "f2": _fixed(2),
    "f3": _fixed(3),
    "f4": _fixed(4),
    "x2": lambda v: "—" if v is None else f"{v:.2f}×",
    "x3": lambda v: "—" if v is None else f"{v:.3f}×",
    "gb": gb,
    "check": _check,
    "met": lambda v: _check(bool(v), "no"),
    "busy": lambda v: (
        ""
        if not v
        else esc(v)
        if v == NOISE_NOT_RECORDED
        else f'<span class="bad long">{esc(v)}</span>'
    ),
    "error": lambda v: f'<span class="error">{esc(v)}</span>' if v else "",
    "scale": lambda v: esc(scale_label(v)),
    "commit": lambda v: esc(commit_label(v)),
    "range3": _range3,
    "arrow": lambda v: f"{v[0]:g} → {v[1]:g}",
    "spread2": _spread2,
    "feed": lambda v: f"{v[0]:g} × {fmt(v[1], 'int')}",
    "pair": lambda v: f"{esc(v[0])} / {esc(v[1])}",
    "load": _load,
}
# Formats of numbers, right-aligned.
NUMERIC = {"count", "int", "s1", "f1", "f2", "f3", "f4", "x2", "x3", "gb", "range3", "spread2"}


def cell(col: Column, row: Any) -> str:
    return FORMATS[col.shown.fmt](col.value(row))


def shown_columns(items: Sequence[Item]) -> list[Column]:
    """The table's columns: every declared value of the row types it holds."""
    types = list(dict.fromkeys(type(i.row) for i in items))
    return [c for c in columns(*types) if c.shown.column]


def record_table(
    b: Builder, items: Sequence[Item], lead: Sequence[Lead] = (), what: str = "rows"
) -> str:
    """A row per item: the `lead` columns, then the record's declared ones."""
    cols = shown_columns(items)
    headers = [h for h, _, _ in lead] + [c.shown.header for c in cols]
    numeric = [i for i, (_, _, num) in enumerate(lead) if num]
    numeric += [len(lead) + i for i, c in enumerate(cols) if c.shown.fmt in NUMERIC]
    body = (
        (
            {"data-k": str(b.key(i))},
            [f(i) for _, f, _ in lead] + [cell(c, i.row) for c in cols],
        )
        for i in items
    )
    return table(headers, body, numeric=numeric, what=what)


def _role(cols: Iterable[Column], role: str) -> Column | None:
    return next((c for c in cols if c.shown.chart == role), None)


def bars(b: Builder, fig_id: str, items: Sequence[Item]) -> str:
    """Medians (the declared y) as bars over the declared x, one series per sitting,
    whiskers from the declared low to high, n in the text; "" for a record that
    declares no x and y."""
    types = list(dict.fromkeys(type(i.row) for i in items))
    cols = columns(*types)
    x, y = _role(cols, "x"), _role(cols, "y")
    if x is None or y is None:
        return ""
    series, n = _role(cols, "series"), _role(cols, "n")
    low, high = _role(cols, "low"), _role(cols, "high")
    fig = go.Figure()
    keys = [series.value(i.row) if series else None for i in items]
    for k, s in enumerate(dict.fromkeys(keys)):
        pts = [i for i, key in zip(items, keys, strict=True) if key == s]
        ys = [y.value(i.row) for i in pts]
        error = None
        if low is not None and high is not None:
            error = {
                "type": "data",
                "symmetric": False,
                "array": [high.value(i.row) - v for i, v in zip(pts, ys, strict=True)],
                "arrayminus": [v - low.value(i.row) for i, v in zip(pts, ys, strict=True)],
            }
        fig.add_trace(
            go.Bar(
                x=[x.value(i.row) for i in pts],
                y=ys,
                customdata=[b.key(i) for i in pts],
                error_y=error,
                text=[f"n={n.value(i.row)}" for i in pts] if n else None,
                textposition="outside",
                name=f"sitting {short_time(str(s))}" if series else y.shown.header,
                marker={"color": PALETTE[k % len(PALETTE)]},
                hovertemplate=f"%{{x}}: {y.shown.label} %{{y:.3f}}"
                + (" (%{text}, whisker min–max)" if n else "")
                + "<extra></extra>",
            )
        )
    fig.update_layout(barmode="group")
    fig.update_yaxes(title_text=y.shown.header, rangemode="tozero")
    fig.update_xaxes(title_text=x.shown.header)
    return b.figure(fig_id, fig, height=380)
