"""Hand-written batches and the rows the contract says they merge to.

Shared by the oracle's tests and the pipeline's: one case per rule of the contract
(../shared/contest.md, "Merge semantics"). Each case: batches (file index -> rows),
optional versions, expected rows sorted by uuid.

`CHANGE_CASES` are the change-data rules (row kinds, partial columns, keys; README, "The
data and the contract"), apart so that the engines' tests of `CASES` take them up only
once they honour them. Each: batches whose files hold exactly the columns their rows
name (a column a row leaves out is NULL when another row of the file has it), the
change rules (`contest.data.changes.Changes`' fields), the operators when not the
contest's, and either the expected rows sorted by key, worked out by hand, or the start
of the one-line refusal.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data import operators as ops
from contest.data.batches import COLUMNS, SCHEMA


def row(uuid, ip="ip", host="h", req=1, name="n", city="c", job="j", phone="p"):
    return dict(zip(COLUMNS, (uuid, ip, host, req, name, city, job, phone), strict=True))


CASES: dict[str, dict] = {
    "key_only_in_a_later_batch": {
        "batches": [[row("a", req=1)], [row("b", req=2)]],
        "expected": [row("a", req=1), row("b", req=2)],
    },
    "null_string_names": {
        "batches": [
            [row("a", name="x"), row("b", name="null")],
            [row("a", name="null"), row("b", name="null")],
        ],
        # a keeps its last real name; b never had one: NULL.
        "expected": [row("a", req=2, name="x"), row("b", req=2, name=None)],
    },
    "NULL_and_empty_strings_are_values": {
        "batches": [[row("a", name="x", city="c1")], [row("a", name="NULL", city="")]],
        "expected": [row("a", req=2, name="NULL", city="")],
    },
    "duplicate_keys_inside_one_batch": {
        "batches": [
            [
                row("a", req=1, ip="i1", name="x"),
                row("a", req=2, ip="i2", name="null"),
                row("a", req=4, ip=None, name="y"),
            ]
        ],
        "expected": [row("a", req=7, ip="i2", name="y")],
    },
    "sql_nulls_in_each_column_kind": {
        "batches": [
            [
                row("a", ip="i1", host="h1", req=5, name="x", city="c1", job="j1", phone="p1"),
                row("b", req=None),
            ],
            [
                row("a", ip=None, host=None, req=None, name=None, city=None, job=None, phone=None),
                row("b", req=None, name=None),
            ],
        ],
        "expected": [
            row("a", ip="i1", host="h1", req=5, name="x", city="c1", job="j1", phone="p1"),
            row("b", req=None, name="n"),
        ],
    },
    "versions_out_of_file_order": {
        # base-0 carries version 2, so its rows come last.
        "batches": [
            [row("a", ip="from-file-0", name="zero")],
            [row("a", ip="from-file-1", name="one")],
            [row("a", ip="from-file-2", name="null")],
        ],
        "versions": {0: 2, 1: 0, 2: 1},
        "expected": [row("a", ip="from-file-0", req=3, name="zero")],
    },
    "sums_past_int32": {
        "batches": [[row("a", req=2**31 - 1)], [row("a", req=2**31 - 1)], [row("a", req=5)]],
        "expected": [row("a", req=2 * (2**31 - 1) + 5)],
    },
}


def write_case(case: dict, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(case["batches"]):
        pq.write_table(
            pa.Table.from_pylist(rows, schema=SCHEMA),
            folder / f"base-{i}.parquet",
            compression="NONE",
        )
    return folder


def versions_spec(case: dict) -> str | None:
    v = case.get("versions")
    return ",".join(f"{k}={x}" for k, x in v.items()) if v else None


# The type of every column a change case's file may hold.
CHANGE_TYPES: dict[str, pa.DataType] = {
    **{f.name: f.type for f in SCHEMA},
    "op": pa.string(),
    "tenant": pa.string(),
    "id": pa.int32(),
    "bk": pa.binary(16),
    "note": pa.string(),
}


def change(op, uuid, **cols):
    """One row of a change file: its kind, its key and the columns it names."""
    return {"uuid": uuid, "op": op, **cols}


def full(op, uuid, **cols):
    """A change row naming every contest column (`row`'s defaults)."""
    return {"op": op, **row(uuid, **cols)}


def result(keys: dict, **cols):
    """An expected row: the key's columns, then the contest's payload columns (NULL
    unless named)."""
    return {**keys, **{c: cols.get(c) for c in COLUMNS[1:]}}


ONE, TWO, BAD = bytes(16), bytes(range(1, 17)), bytes(15)

CHANGE_CASES: dict[str, dict] = {
    "delete_then_reinsert_starts_the_key_afresh": {
        "batches": [
            [full("insert", "a", ip="i1", req=5, name="x", city="c1"), full("insert", "b")],
            [full("delete", "a"), full("update", "b", req=2, host="h2")],
            [full("insert", "a", ip="i2", req=7, name="null", city=None)],
        ],
        "changes": {"op_column": "op"},
        # a: only the re-insert folds (its "null" name is no name, its NULL city no city);
        # b: an update of a live key folds as an upsert.
        "expected": [row("a", ip="i2", req=7, name=None, city=None), row("b", req=3, host="h2")],
    },
    "delete_of_an_unknown_key_and_a_key_left_deleted": {
        # A delete row needs only the key: base-1 holds uuid and op alone.
        "batches": [
            [full("insert", "a"), full("insert", "b", req=4)],
            [change("delete", "zz"), change("delete", "b")],
        ],
        "changes": {"op_column": "op"},
        "expected": [row("a")],
    },
    "absent_column_keeps_the_value_a_present_NULL_follows_the_operator": {
        # base-1 lacks city and note; base-2 holds only uuid, city, note.
        "batches": [
            [{**row("a"), "note": "n0"}, {**row("b"), "note": "n0"}],
            [{k: v for k, v in row("a", ip="i1", req=2).items() if k != "city"}],
            [{"uuid": "b", "city": None, "note": None}],
        ],
        "changes": {},
        "operators": {**ops.CONTRACT, "note": ops.USE_LAST},
        # a: city and note as base-0 left them (absent), requests 1 + 2; b: the NULL city
        # is skipped by UseLastNotNull, the NULL note overwrites under UseLast.
        "expected": [
            {**row("a", ip="i1", req=3), "note": "n0"},
            {**row("b"), "note": None},
        ],
    },
    "insert_update_delete_of_one_key_inside_one_batch": {
        "batches": [
            [
                full("insert", "a", req=1),
                full("update", "a", req=2, ip="i2"),
                full("delete", "a"),
                full("insert", "b", req=3),
                full("delete", "b"),
                full("insert", "b", req=10, name="y"),
                full("update", "b", req=None, name="null", ip="i3"),
            ],
            [full("update", "a", req=4, ip=None)],
        ],
        "changes": {"op_column": "op"},
        # a starts afresh from base-1's update (its NULL ip: no ip); b from its second
        # insert (the update's NULL requests and "null" name leave them).
        "expected": [row("a", req=4, ip=None), row("b", req=10, name="y", ip="i3")],
    },
    "composite_int_and_string_key_in_debeziums_spelling": {
        "batches": [
            [
                {"tenant": "t1", "id": 2, "op": "c", "requests": 1, "name": "x"},
                {"tenant": "t1", "id": 1, "op": "r", "requests": 1, "name": "y"},
                {"tenant": "t0", "id": 2, "op": "c", "requests": 1, "name": "z"},
            ],
            [
                {"tenant": "t1", "id": 1, "op": "u", "requests": 5, "name": "null"},
                {"tenant": "t1", "id": 2, "op": "d"},
                {"tenant": "t1", "id": 2, "op": "c", "requests": 7},
                {"tenant": "t0", "id": 2, "op": "d"},
            ],
        ],
        "changes": {"key": ("tenant", "id"), "op_column": "op", "op_values": "debezium"},
        # No file holds ip, hostname, ...: NULL. (t1, 2) re-created without a name.
        "expected": [
            result({"tenant": "t1", "id": 1}, requests=6, name="y"),
            result({"tenant": "t1", "id": 2}, requests=7),
        ],
    },
    "binary_key_kept_as_binary": {
        "batches": [
            [{"bk": TWO, "op": "insert", "requests": 1}, {"bk": ONE, "op": "insert"}],
            [{"bk": ONE, "op": "delete"}, {"bk": TWO, "op": "update", "requests": 2}],
        ],
        "changes": {"key": ("bk",), "op_column": "op"},
        "expected": [result({"bk": TWO}, requests=3)],
    },
    "composite_key_with_a_NULL_part_dropped_and_counted": {
        "batches": [
            [
                {"tenant": "t1", "id": 1, "requests": 1},
                {"tenant": "t1", "id": None, "requests": 2},
                {"tenant": None, "id": None, "requests": 4},
            ]
        ],
        "changes": {"key": ("tenant", "id"), "drop_null_keys": True},
        "expected": [result({"tenant": "t1", "id": 1}, requests=1)],
        "dropped": 2,
    },
    "composite_key_with_a_NULL_part_refused": {
        "batches": [
            [{"tenant": "t1", "id": 1, "requests": 1}, {"tenant": "t1", "id": None}],
        ],
        "changes": {"key": ("tenant", "id")},
        "refused": "base-0.parquet: 1 row(s) with a NULL key column 'id' (set write.drop_null_keys",
    },
    "an_unknown_op_value_refused": {
        "batches": [[full("insert", "a")], [full("insert", "b"), full("upsert", "a")]],
        "changes": {"op_column": "op"},
        "refused": "base-1.parquet: op column 'op' holds 'upsert' (1 row(s)), not one of insert",
    },
    "a_NULL_op_value_refused": {
        "batches": [[full("c", "a"), full(None, "b")]],
        "changes": {"op_column": "op", "op_values": "debezium"},
        "refused": "base-0.parquet: op column 'op' holds NULL (1 row(s)), not one of c, r, u, d",
    },
    "a_key_column_missing_from_a_file_refused": {
        "batches": [[{"tenant": "t", "id": 1}], [{"tenant": "t", "requests": 1}]],
        "changes": {"key": ("tenant", "id")},
        "refused": "base-1.parquet: no key column 'id' (workload.key = ['tenant', 'id'])",
    },
    "a_binary_key_of_another_length_refused": {
        "batches": [[{"bk": ONE}, {"bk": BAD}, {"bk": BAD}]],
        "changes": {"key": ("bk",)},
        "types": {"bk": pa.binary()},
        "refused": "base-0.parquet: key column 'bk' holds 2 value(s) not 16 bytes",
    },
}


def change_schema(rows: list[dict], types: dict[str, pa.DataType] | None = None) -> pa.Schema:
    """A change file's schema: the columns its rows name, in the order they first do."""
    types = {**CHANGE_TYPES, **(types or {})}
    names = list(dict.fromkeys(name for r in rows for name in r))
    return pa.schema([(name, types[name]) for name in names])


def write_change_case(case: dict, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i, rows in enumerate(case["batches"]):
        schema = change_schema(rows, case.get("types"))
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / f"base-{i}.parquet")
    return folder
