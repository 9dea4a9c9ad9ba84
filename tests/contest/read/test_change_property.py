"""Random change batches (deletes, re-inserts, absent columns, NULLs; string, composite,
int64 and binary keys) through the harness's LakeSoul write and merge-on-read equal the
oracle's result. A few seeded examples, tiny data."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.data import operators as ops
from contest.data.batches import discover
from contest.data.changes import ROW_KINDS, Changes
from contest.data.oracle import expected_rows
from contest.read.job import merged
from meta.merge import merge_table
from tests.support.pipeline import with_write, write

PAYLOAD = {
    "ip": pa.string(),
    "hostname": pa.string(),
    "requests": pa.int64(),
    "name": pa.string(),
    "city": pa.string(),
    "job": pa.string(),
    "phonenum": pa.string(),
    "note": pa.string(),
}
OPERATORS = {**ops.CONTRACT, "note": ops.USE_LAST}
# seed -> (key columns and their types, op spelling)
SHAPES = {
    1: ({"uuid": pa.string()}, "lakesoul"),
    2: ({"tenant": pa.string(), "id": pa.int32()}, "debezium"),
    3: ({"bk": pa.binary(16)}, "lakesoul"),
    4: ({"seq": pa.int64(), "bk": pa.binary(16)}, "debezium"),
}


def _key(rnd: random.Random, types: dict[str, pa.DataType], pool: int) -> dict:
    n = rnd.randrange(pool)
    out: dict = {}
    for col, typ in types.items():
        if pa.types.is_string(typ):
            out[col] = f"k{n % 5}" if len(types) > 1 else f"key-{n}"
        elif pa.types.is_int32(typ):
            out[col] = n // 5
        elif pa.types.is_int64(typ):
            out[col] = (n % 3) * (2**40) - 7
        else:
            out[col] = bytes([n // 3]) * 16
    return out


def _value(rnd: random.Random, col: str):
    if rnd.random() < 0.2:
        return None
    if col == "requests":
        return rnd.randint(-5, 50)
    if col == "name" and rnd.random() < 0.3:
        return "null"
    return f"{col}{rnd.randint(0, 3)}"


def random_batches(seed: int, folder: Path) -> Changes:
    """Three batch files of random change rows: each holds the key, the op column and
    a random subset of the payload columns."""
    rnd = random.Random(seed)
    types, spelling = SHAPES[seed]
    values = list(ROW_KINDS[spelling])
    delete = [v for v, k in ROW_KINDS[spelling].items() if k == "delete"][0]
    folder.mkdir(parents=True)
    for i in range(3):
        cols = [c for c in PAYLOAD if rnd.random() < 0.6]
        rows = []
        for _ in range(rnd.randint(5, 25)):
            op = delete if rnd.random() < 0.25 else rnd.choice([v for v in values if v != delete])
            r = {**_key(rnd, types, 12), "op": op}
            for c in cols:
                r[c] = None if op == delete else _value(rnd, c)
            rows.append(r)
        schema = pa.schema([*types.items(), ("op", pa.string()), *((c, PAYLOAD[c]) for c in cols)])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / f"base-{i}.parquet")
    return Changes(tuple(types), "op", spelling)


def _plain(rows: list[dict], key: tuple[str, ...]) -> list[dict]:
    out = [{k: bytes(v) if isinstance(v, bytearray) else v for k, v in r.items()} for r in rows]
    return sorted(out, key=lambda r: tuple(r[k] for k in key))


@pytest.mark.parametrize("seed", sorted(SHAPES))
def test_random_changes_through_lakesoul_equal_the_oracle(seed, spark, pg, cfg, tmp_path):
    rules = random_batches(seed, tmp_path / "data")
    w = dataclasses.replace(
        cfg.workload,
        op_column=rules.op_column,
        op_values=rules.op_values,
        key=list(rules.key),
        columns={"note": ops.USE_LAST},
    )
    ccfg = with_write(dataclasses.replace(cfg, workload=w), threads=3)
    report, table = write(spark, pg, ccfg, tmp_path / "data", tmp_path / f"prop{seed}")
    assert all(b.error is None for b in report.batches), [b.error for b in report.batches]
    merge_table(pg, table)
    df, _, _ = merged(spark, pg, ccfg, table)
    got = _plain([r.asDict() for r in df.collect()], rules.key)
    want = _plain(
        expected_rows(discover(tmp_path / "data", schema=None), OPERATORS, rules), rules.key
    )
    assert got == want
    assert want  # the data leaves some key alive
