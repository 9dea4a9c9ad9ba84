"""Change files of a user's other types (issue 60): decimals of two scales, a date, a
timestamp without a zone and one with a zone, under the operators that take them, keyed
by an int64 and an int32 column. Two cases: whole-row upserts (every format's merge
takes them) and changes (deletes, a re-insert, files holding some of the columns).
Values are few per column so that keys repeat them; each file is written as a user's
writer would (pyarrow), its footer carrying the exact types."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data import operators as ops

KEY = ("order_id", "line")
OPERATORS = {
    "qty": ops.SUM_ALL,
    "price": ops.USE_LAST_NOT_NULL,
    "day": ops.MAX,
    "at": ops.USE_LAST_NOT_NULL,
    "at_utc": ops.FIRST_NOT_NULL,
}
# The contest's key, for the engines that take no other (the native libraries).
UUID_KEY = ("uuid",)
TYPES = {
    "uuid": pa.string(),
    "order_id": pa.int64(),
    "line": pa.int32(),
    "op": pa.string(),
    "qty": pa.decimal128(15, 2),
    "price": pa.decimal128(12, 3),
    "day": pa.date32(),
    "at": pa.timestamp("us"),
    "at_utc": pa.timestamp("us", tz="UTC"),
}
DECLARED = {"order_id": "int64", "line": "int32"} | {c: ops.type_name(TYPES[c]) for c in OPERATORS}


def _value(rnd: random.Random, col: str):
    if rnd.random() < 0.2:
        return None
    n = rnd.randint(-5, 9)
    return {
        "qty": Decimal(n * 125).scaleb(-2),
        "price": Decimal(n * 1001).scaleb(-3),
        "day": dt.date(1998, 1, 1) + dt.timedelta(days=n),
        "at": dt.datetime(2024, 3, 31, 1, 30) + dt.timedelta(hours=n),
        "at_utc": dt.datetime(2024, 10, 27, 0, 59, tzinfo=dt.UTC) + dt.timedelta(minutes=n),
    }[col]


def write_case(
    folder: Path,
    seed: int,
    changes: bool,
    omit: tuple[str, ...] = (),
    key: tuple[str, ...] = KEY,
) -> dict:
    """Three or four files into `folder`; the case's configuration keys. `changes`: an
    op column (deletes, re-inserts) and files lacking some payload columns; `omit`:
    payload columns left out (a type a format refuses); `key`: KEY or UUID_KEY."""
    operators = {c: op for c, op in OPERATORS.items() if c not in omit}
    rnd = random.Random(seed)
    folder.mkdir(parents=True)
    files = rnd.randint(3, 4)
    for i in range(files):
        cols = [c for c in operators if not changes or rnd.random() < 0.7]
        rows = []
        for _ in range(rnd.randint(2, 8)):
            r: dict = (
                {"uuid": f"key-{rnd.randint(1, 4)}"}
                if key == UUID_KEY
                else {"order_id": rnd.randint(1, 2), "line": rnd.randint(1, 2)}
            )
            if changes:
                r["op"] = rnd.choice(["insert", "update", "update", "delete"])
            rows.append(r | {c: _value(rnd, c) for c in cols})
        names = [*key, *(["op"] if changes else []), *cols]
        schema = pa.schema([(c, TYPES[c]) for c in names])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / f"base-{i}.parquet")
    return {
        "workload.payload": "own",
        "workload.batches": files,
        "workload.key": list(key),
        "workload.op_column": "op" if changes else "",
        "workload.columns": operators,
        "workload.types": {
            c: t for c, t in DECLARED.items() if c not in omit and (c not in KEY or key == KEY)
        },
    }
