"""How a record is shown: each displayed field's label, unit and number format, declared
once beside the field (`field(metadata=shown(...))`), or beside a property that computes
a value from several fields (`shown_property`). The dashboard builds a results file's
table and chart from these declarations alone, so a new record type is shown without a
dashboard edit.

Columns come in declaration order (a field or property declared earlier is further
left; a base class's before its subclass's), `place` moves one to the front (< 0) or
the end (> 0). `fmt` names how a value is written (the dashboard's formats: text, long,
time, count, int, s1, f1..f4, x2, x3, gb, check, met, busy, error, scale, commit, and
the pairs range3, arrow, spread2, feed, pair, load). `chart` names a value's part in
the file's chart (x, y, low, high, n, series): a record with an x and a y is drawn as
bars, one series per sitting.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

SHOWN = "shown"
T = TypeVar("T")

# Declarations are numbered as they are made: a class body runs top to bottom, a base
# class before its subclasses, so the numbers are the declaration order.
_ORDER = itertools.count()


@dataclass(frozen=True)
class Shown:
    """One displayed value: its label and unit, how it is written, its part in a chart."""

    label: str
    unit: str = ""
    fmt: str = "text"
    chart: str = ""
    place: int = 0
    column: bool = True  # False: in the chart only
    order: int = field(default_factory=lambda: next(_ORDER), compare=False)

    @property
    def header(self) -> str:
        """The label with its unit: "write s"."""
        return f"{self.label} {self.unit}" if self.unit else self.label


def shown(
    label: str,
    unit: str = "",
    fmt: str = "text",
    chart: str = "",
    place: int = 0,
    column: bool = True,
) -> dict[str, Shown]:
    """A field's metadata that shows it as `label` (in `unit`):
    `write_s: float | None = field(default=None, metadata=shown("write", unit="s"))`."""
    return {SHOWN: Shown(label, unit, fmt, chart, place, column)}


class ShownProperty(property):
    """A property shown as a column: a value computed from the record's fields."""

    shown: Shown


def shown_property(
    label: str, unit: str = "", fmt: str = "text", chart: str = "", place: int = 0
) -> Callable[[Callable[[Any], T]], ShownProperty]:
    """Decorates a method into a property shown as `label` (in `unit`)."""
    declared = Shown(label, unit, fmt, chart, place)

    def wrap(fget: Callable[[Any], T]) -> ShownProperty:
        prop = ShownProperty(fget, doc=fget.__doc__)
        prop.shown = declared
        return prop

    return wrap


@dataclass(frozen=True)
class Column:
    """A shown value of a record type: the attribute it is read from and its declaration."""

    name: str
    shown: Shown

    def value(self, row: Any) -> Any:
        """The row's value; None when the row's type has no such attribute (a table
        that gathers several record types)."""
        return getattr(row, self.name, None)


def columns(*types: type) -> list[Column]:
    """The shown values of one or more record types, in declaration order (`place`
    first); a name declared by two of the types is one column."""
    found: dict[str, Column] = {}
    for cls in types:
        if dataclasses.is_dataclass(cls):
            for f in dataclasses.fields(cls):
                if SHOWN in f.metadata and f.name not in found:
                    found[f.name] = Column(f.name, f.metadata[SHOWN])
        for klass in reversed(cls.__mro__):
            for name, attr in vars(klass).items():
                if isinstance(attr, ShownProperty) and name not in found:
                    found[name] = Column(name, attr.shown)
    return sorted(found.values(), key=lambda c: (c.shown.place, c.shown.order))


def column(cls: type, name: str) -> Column:
    """One declared value of `cls` (a summary's header names the value it summarises)."""
    for c in columns(cls):
        if c.name == name:
            return c
    raise KeyError(f"{cls.__name__} declares no shown {name!r}")


def rows_of(cls: type, records: Sequence[Any]) -> list[tuple[Any, Any]]:
    """Each record of a file with the row(s) it is shown as: the record itself, unless
    its type says otherwise (a classmethod `rows_of`: a record of several variants is
    a row each; a file's older lines get the sitting their neighbours imply)."""
    hook: Callable[[Sequence[Any]], Iterable[tuple[Any, Any]]] | None = getattr(
        cls, "rows_of", None
    )
    return list(hook(records)) if hook else [(r, r) for r in records]
