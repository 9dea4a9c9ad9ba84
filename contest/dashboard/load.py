"""Every results file, published and local, read into typed rows and merged into one
DuckDB in-memory database.

Each file is read through its typed record (`contest.results.registry`: the one place
that knows which file holds which record and every older shape of it); a line that is
no record (an interrupted run's half-written last line) is counted and skipped. Each
record becomes the row(s) it is shown as (`contest.results.shown.rows_of`), with the
labels it is filtered by (`contest.results.labels.labels_of`): the page's sections
read those typed rows. The database holds the same rows for ad-hoc SQL, a table per
kind of record (`ResultsFile.table`, a streaming kind's own), its columns the row's
fields and properties of plain values, and the whole record in a `raw` JSON column.

Every row carries the filter dimensions: `origin` (published: the results folder;
local: this machine's own store under the work folder), `strategy`, `scale`,
`machine`, `commit`; and `source` (the file), `seq` (its line among the file's
rows) and what the file's pattern names (`sweep`, `cluster`).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from contest.results import registry
from contest.results.labels import UNKNOWN, Labels, labels_of
from contest.results.shown import rows_of

DIMENSIONS = ("origin", "strategy", "scale", "machine", "commit")
PUBLISHED, LOCAL = "published", "local"
_PLAIN = (str, int, float, bool)


@dataclass(frozen=True)
class Item:
    """One shown row: the record it comes from, the row itself (the record, or one of
    its parts), where it was read and the labels it is filtered by."""

    kind: str  # the registry's name of its file
    table: str
    origin: str
    source: str  # the file, relative to its results folder
    part: str | None  # what the file pattern's `*` matched
    seq: int
    record: Any
    row: Any
    labels: Labels

    @property
    def dims(self) -> tuple[str, ...]:
        """The filter dimensions, in `DIMENSIONS` order."""
        la = self.labels
        return (self.origin, la.strategy, la.scale, la.machine, la.commit)


@dataclass
class Loaded:
    """The merged database, the typed rows in it, and what went into them."""

    con: duckdb.DuckDBPyConnection
    root: Path
    local: Path | None = None
    files: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)
    items: dict[str, list[Item]] = field(default_factory=dict)

    def table(self, name: str) -> list[Item]:
        """The rows of one table, in file order (published first)."""
        return self.items.get(name, [])


def table_of(kind: registry.ResultsFile, row: Any) -> str:
    """The table a row goes to: its record type's own (a streaming kind's), or its
    file's."""
    own = getattr(type(row), "table", None)
    return own if isinstance(own, str) and own else kind.shown_in


def _items(kind: registry.ResultsFile, records: list[Any], origin: str, rel: str) -> list[Item]:
    types = kind.types
    pairs = rows_of(types[0], records) if len(types) == 1 else [(r, r) for r in records]
    part = kind.part_of(rel)
    return [
        Item(kind.name, table_of(kind, row), origin, rel, part, seq, rec, row, labels_of(row))
        for seq, (rec, row) in enumerate(pairs)
    ]


def _values(item: Item, part_name: str) -> dict[str, Any]:
    """A row's columns in the database: the dimensions, where it came from, every field
    and property of a plain value, and the whole record."""
    out: dict[str, Any] = dict(zip(DIMENSIONS, item.dims, strict=True))
    out["source"] = item.source
    if part_name:
        out[part_name] = item.part
    out["seq"] = item.seq
    row = item.row
    names = [f.name for f in dataclasses.fields(row)] if dataclasses.is_dataclass(row) else []
    names += [
        n
        for klass in type(row).__mro__
        for n, attr in vars(klass).items()
        if isinstance(attr, property) and n != "labels"
    ]
    for name in names:
        if name in out or name == "extra":
            continue
        try:
            value = getattr(row, name)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue  # a property an older shape cannot answer
        if value is None or isinstance(value, _PLAIN):
            out[name] = value
    out["raw"] = json.dumps(item.record.to_dict(), sort_keys=True, default=str)
    return out


def _arrow(rows: list[dict[str, Any]]) -> pa.Table:
    names = list(dict.fromkeys(n for r in rows for n in r))
    for base in (*DIMENSIONS, "source", "seq", "raw"):
        if base not in names:
            names.append(base)
    arrays = []
    for name in names:
        values = [r.get(name) for r in rows]
        try:
            arrays.append(pa.array(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed types: as text
            arrays.append(pa.array([None if v is None else str(v) for v in values]))
    return pa.Table.from_arrays(arrays, names=names)


def load(root: Path, local: Path | None = None, database: str = ":memory:") -> Loaded:
    """Read every results file under `root` (published) and under `local` (this
    machine's own store, same layout) into typed rows and one DuckDB database (in
    memory unless `database` names a file), one table per kind of record."""
    loaded = Loaded(con=duckdb.connect(database), root=root, local=local)
    part_names: dict[str, str] = {}
    for kind in registry.FILES.values():
        for t in kind.types:
            own = getattr(t, "table", None)
            name = own if isinstance(own, str) and own else kind.shown_in
            loaded.items.setdefault(name, [])
            if kind.part:
                part_names[name] = kind.part
    folders = [(PUBLISHED, root)] + ([(LOCAL, local)] if local and local.is_dir() else [])
    for origin, folder in folders:
        for kind, path in registry.every_file(folder):
            records, bad = kind.read_lenient(path)
            rel = path.relative_to(folder).as_posix()
            name = rel if origin == PUBLISHED else f"local: {rel}"
            loaded.files.append(name)
            if bad:
                loaded.skipped[name] = bad
            for item in _items(kind, records, origin, rel):
                loaded.items.setdefault(item.table, []).append(item)
    for name, items in loaded.items.items():
        part = part_names.get(name, "")
        loaded.con.register("incoming", _arrow([_values(i, part) for i in items]))
        loaded.con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM incoming')
        loaded.con.unregister("incoming")
    return loaded


__all__ = ["DIMENSIONS", "LOCAL", "PUBLISHED", "UNKNOWN", "Item", "Loaded", "load"]
