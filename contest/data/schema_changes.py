"""Which schema change a batch brings to a table (a workload that evolves its
schema): the columns a batch adds and the integers it widens, as (name, Spark simple
type) pairs, pure. Every engine that evolves a table asks it: the peer formats
(contest/peers/schema.py, before their own `evolve`) and stock LakeSoul's writer
(contest/write/stock.py, before DBManager's `updateTableSchema`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Fields = dict[str, str]  # column -> Spark simple type ("int", "bigint", "string")

INTEGERS = ("tinyint", "smallint", "int", "bigint")


@dataclass(frozen=True)
class Change:
    """One column a batch brings: `added` (the table lacks it), `widened` (an integer
    the table holds narrower), `narrowed` (the table's is wider: never applied, the
    batch's values are cast up on write) or `retyped` (no widening: refused)."""

    kind: str
    column: str
    old: str  # the table's type ("" for an added column)
    new: str  # the batch's type

    def __str__(self) -> str:
        if self.kind == "added":
            return f"added {self.column} {self.new}"
        return f"{self.kind} {self.column} {self.old}->{self.new}"


def schema_changes(
    table: Sequence[tuple[str, str]], batch: Sequence[tuple[str, str]]
) -> list[Change]:
    """Every difference that brings a table of columns `table` ((name, Spark simple
    type)) to the batch's, in the batch's column order, narrowed ones included; [] when
    the batch fits the table as it is. A column the table has and the batch lacks is no
    change (it reads NULL for the batch's rows)."""
    have = dict(table)
    out = []
    for name, typ in batch:
        old = have.get(name)
        if old is None:
            out.append(Change("added", name, "", typ))
        elif old != typ:
            if old in INTEGERS and typ in INTEGERS:
                kind = "widened" if INTEGERS.index(typ) > INTEGERS.index(old) else "narrowed"
            else:
                kind = "retyped"
            out.append(Change(kind, name, old, typ))
    return out


def changes(table: Fields, batch: Fields) -> list[Change]:
    """What a batch brings that the table must change for, in the batch's column order;
    [] when the batch fits the table as it is (a column the batch lacks reads NULL for
    its rows; an integer the batch holds narrower is cast up by the merge)."""
    return [
        c for c in schema_changes(list(table.items()), list(batch.items())) if c.kind != "narrowed"
    ]
