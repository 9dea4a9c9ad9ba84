"""A hand-made folder of a user's own change files: a composite key (tenant string +
item_id int64), payload columns of int64, float64 and string, Debezium's op column,
files holding only some columns, named part-1..part-12 (natural order: part-2 before
part-10). The expected result is written out by hand in the tests that use it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

TYPES = {
    "tenant": pa.string(),
    "item_id": pa.int64(),
    "op": pa.string(),
    "qty": pa.int64(),
    "price": pa.float64(),
    "label": pa.string(),
}


def row(tenant: str, item: int, op: str, **payload: object) -> dict[str, object]:
    return {"tenant": tenant, "item_id": item, "op": op, **payload}


# File i+1 (part-<i+1>.parquet) holds these rows; a file's columns are the union of its
# rows' keys (a row lacking one of them: NULL).
FILES: list[list[dict[str, object]]] = [
    [row("a", 1, "r", qty=1, price=1.5, label="x"), row("a", 2, "r", qty=2, price=2.5, label="y")],
    [row("b", 1, "c", qty=10, price=0.5, label="z")],
    [row("a", 1, "u", qty=3)],  # partial: price and label absent
    [row("a", 2, "d")],  # a delete: key and op only
    [row("b", 1, "u", qty=11, price=None, label="w")],  # a present NULL overwrites (UseLast)
    [row("a", 2, "c", qty=20, price=9.0, label="again")],  # re-created after its delete
    [row("c", 7, "c", qty=70, price=7.0, label="c7")],
    [row("c", 7, "u", label="c7b")],  # partial: label only
    [row("a", 1, "u", price=4.25)],  # partial: price only
    [row("c", 8, "c", qty=80, price=8.0, label="c8")],  # part-10: after part-9
    [row("c", 8, "d")],
    [row("b", 1, "u", qty=12, price=1.0, label="last")],  # part-12
]

# The result by hand (UseLast of every column over the rows after a key's last delete;
# a file without the column leaves it).
EXPECTED = [
    {"tenant": "a", "item_id": 1, "qty": 3, "price": 4.25, "label": "x"},
    {"tenant": "a", "item_id": 2, "qty": 20, "price": 9.0, "label": "again"},
    {"tenant": "b", "item_id": 1, "qty": 12, "price": 1.0, "label": "last"},
    {"tenant": "c", "item_id": 7, "qty": 70, "price": 7.0, "label": "c7b"},
]


def write_own_data(folder: Path, files: list[list[dict[str, object]]] = FILES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(files, start=1):
        names = [c for c in TYPES if any(c in r for r in rows)]
        schema = pa.schema([(c, TYPES[c]) for c in names])
        table = pa.Table.from_pylist([{c: r.get(c) for c in names} for r in rows], schema)
        pq.write_table(table, folder / f"part-{i}.parquet")
    return folder
