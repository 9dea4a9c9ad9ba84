"""TPC-H's lineitem as change batches (contest/data/tpch.py): the batches' rules on a
hand-made lineitem, checked line by line (no generator program needed here)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from contest.data import tpch

# Three orders of 3, 2 and 4 lines; quantities 1..9, a unit price of 10.50 a piece.
ORDERS = [1, 1, 1, 2, 2, 3, 3, 3, 3]
LINES = [1, 2, 3, 1, 2, 1, 2, 3, 4]


def lineitem() -> pa.Table:
    n = len(ORDERS)
    qty = [Decimal(i + 1) for i in range(n)]
    return pa.table(
        {
            "l_orderkey": pa.array(ORDERS, pa.int64()),
            "l_partkey": pa.array(range(n), pa.int64()),
            "l_linenumber": pa.array(LINES, pa.int32()),
            "l_quantity": pa.array(qty, pa.decimal128(15, 2)),
            "l_extendedprice": pa.array([q * Decimal("10.50") for q in qty], pa.decimal128(15, 2)),
            "l_linestatus": pa.array(["O"] * n),
            "l_shipdate": pa.array([dt.date(1995, 1, 1 + i) for i in range(n)], pa.date32()),
        }
    )


def test_the_snapshot_is_every_line_read_with_the_key_first():
    base = tpch.snapshot(lineitem())
    assert base.column_names[:3] == ["l_orderkey", "l_linenumber", "op"]
    assert base.num_rows == len(ORDERS) and set(base.column("op").to_pylist()) == {"r"}
    assert base.schema.field("l_shipdate").type == pa.date32()


def test_updates_keep_the_unit_price_and_deletes_take_whole_orders():
    table = lineitem()
    shape = tpch.ChangeShape(batches=3, update_share=0.4, delete_share=0.34, seed=5)
    batches = list(tpch.change_batches(table, shape))
    assert len(batches) == 3
    deleted: set[int] = set()
    for batch in batches:
        assert batch.column_names == ["l_orderkey", "l_linenumber", "op", *tpch.UPDATED]
        assert batch.schema.field("l_quantity").type == pa.decimal128(15, 2)
        rows = batch.to_pylist()
        updates = [r for r in rows if r["op"] == "u"]
        deletes = [r for r in rows if r["op"] == "d"]
        assert updates and deletes and len(updates) + len(deletes) == len(rows)
        for r in updates:
            assert r["l_orderkey"] not in deleted  # a deleted order's lines are gone
            assert r["l_extendedprice"] == r["l_quantity"] * Decimal("10.50")
            assert 1 <= r["l_quantity"] <= 50 and r["l_linestatus"] == "F"
        for order in {r["l_orderkey"] for r in deletes}:
            lines = sorted(r["l_linenumber"] for r in deletes if r["l_orderkey"] == order)
            assert lines == [ln for o, ln in zip(ORDERS, LINES, strict=True) if o == order]
            assert order not in deleted
            deleted.add(order)
        assert all(r["l_quantity"] is None for r in deletes)
    assert deleted == {1, 2, 3}  # one order a batch


@pytest.mark.parametrize("seed", [1, 2])
def test_the_batches_are_the_seeds(seed):
    shape = tpch.ChangeShape(batches=2, update_share=0.5, delete_share=0.3, seed=seed)
    first = list(tpch.change_batches(lineitem(), shape))
    again = list(tpch.change_batches(lineitem(), shape))
    assert all(a.equals(b) for a, b in zip(first, again, strict=True))
