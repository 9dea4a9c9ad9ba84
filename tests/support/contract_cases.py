"""Hand-written batches and the rows the contract says they merge to.

Shared by the oracle's tests and the pipeline's: one case per rule of the contract
(../shared/contest.md, "Merge semantics"). Each case: batches (file index -> rows),
optional versions, expected rows sorted by uuid.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

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
