"""The contest's contract through the operator registry gives byte-for-byte the result it
gave before the registry: the read's kernels and the oracle's SQL, against the
pre-registry code kept here as the reference (contest/read/operators.py and
contest/data/oracle.py before the registry)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from contest.data.oracle import _FROM, _ORDER, select_sql
from contest.read.operators import CONTEST_OPERATORS, _groups, merge_rows

# The pre-registry names, spelled as the old code did.
OLD = {"last": "Use" + "Last", "nn": "Use" + "LastNotNull", "sum": "Sum" + "All"}
OLD["ns"] = OLD["nn"] + "NorNullString"


def old_merge_rows(table: pa.Table, keys: list[str], ops: dict[str, str]) -> pa.Table:
    """merge_rows as it was: the if-chain over the four operators."""
    n = table.num_rows
    order, starts = _groups(table, keys)
    positions = np.arange(n, dtype=np.int64)
    columns = []
    for col in table.column_names:
        arr = table.column(col)
        if col in keys:
            columns.append(arr.take(pa.array(order[starts])))
            continue
        op = ops.get(col, OLD["last"])
        if op == OLD["sum"]:
            valid = np.asarray(pc.is_valid(arr).to_numpy(zero_copy_only=False), dtype=bool)[order]
            values = pc.fill_null(arr, 0).to_numpy()[order]
            sums = np.add.reduceat(np.where(valid, values, 0), starts)
            seen = np.add.reduceat(valid.astype(np.int64), starts)
            columns.append(pa.array(sums, mask=seen == 0))
            continue
        if op == OLD["last"]:
            valid = np.ones(n, dtype=bool)
        elif op == OLD["nn"]:
            valid = np.asarray(pc.is_valid(arr).to_numpy(zero_copy_only=False), dtype=bool)[order]
        else:
            real = pc.fill_null(pc.not_equal(arr, "null"), False)
            valid = np.asarray(real.to_numpy(zero_copy_only=False), dtype=bool)[order]
        last = np.maximum.reduceat(np.where(valid, positions, -1), starts)
        pick = pa.array(order[np.maximum(last, 0)], mask=last < 0)
        columns.append(arr.take(pick))
    out = pa.Table.from_arrays(columns, names=table.column_names)
    fields = [
        f.with_type(pa.int64())
        if ops.get(f.name) == OLD["sum"] and pa.types.is_integer(f.type)
        else f
        for f in table.schema
    ]
    return out.cast(pa.schema(fields))


def contest_rows(rng, rows: int, uuid_keys: bool) -> pa.Table:
    keys = rng.integers(0, rows // 3, rows)
    if uuid_keys:
        key = [f"{k:08x}-0000-4000-8000-{k:012x}" for k in keys]
    else:
        key = [f"key-{k}" for k in keys]

    def nulls(arr):
        return pc.if_else(pa.array(rng.random(rows) < 0.2), pa.nulls(rows, arr.type), arr)

    words = np.array(["a", "b", "null", "c", ""])
    cols = {"uuid": pa.array(key)}
    for c in ("ip", "hostname", "name", "city", "job", "phonenum"):
        cols[c] = nulls(pa.array(rng.choice(words, rows)))
    cols["requests"] = nulls(pa.array(rng.integers(0, 1000, rows), pa.int64()))
    return pa.table(cols)


@pytest.mark.parametrize("uuid_keys", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_the_contract_merges_byte_for_byte_as_before(seed, uuid_keys):
    table = contest_rows(np.random.default_rng(seed), 3000, uuid_keys)
    ops = dict(CONTEST_OPERATORS)
    new, old = merge_rows(table, ["uuid"], ops), old_merge_rows(table, ["uuid"], ops)
    assert new.schema == old.schema and new.equals(old)


def test_the_oracles_contract_sql_is_the_same_text():
    old = ["p.uuid AS uuid"]
    for col, op in CONTEST_OPERATORS.items():
        c = f'p."{col}"'
        if op == OLD["sum"]:
            agg = f"CAST(sum({c}) AS BIGINT)"
        elif op == OLD["nn"]:
            agg = f"arg_max({c}, {_ORDER}) FILTER (WHERE {c} IS NOT NULL)"
        else:
            agg = f"arg_max({c}, {_ORDER}) FILTER (WHERE {c} IS NOT NULL AND {c} <> 'null')"
        old.append(f'{agg} AS "{col}"')
    assert select_sql() == "SELECT " + ",\n  ".join(old) + _FROM
