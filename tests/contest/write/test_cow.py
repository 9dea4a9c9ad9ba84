"""The copy-on-write baseline's pure DataFrame steps against the contract."""

from __future__ import annotations

from contest.data.batches import COLUMNS
from contest.write.cow import collapse_batch, upsert_cow

DDL = ", ".join(f"{c} {'bigint' if c == 'requests' else 'string'}" for c in COLUMNS)


def row(uuid, req, name, city):
    return (uuid, "ip", "h", req, name, city, "j", "p")


def test_collapse_and_upsert_follow_the_contract(spark):
    first = spark.createDataFrame([row("a", 1, "ann", "x"), row("b", None, "null", None)], DDL)
    batch = spark.createDataFrame(
        [
            row("a", 2, "null", None),
            row("a", None, None, "y"),
            row("b", 5, None, "z"),
            row("c", None, "null", "w"),
        ],
        DDL,
    ).coalesce(1)
    collapsed = {r.uuid: r for r in collapse_batch(batch).collect()}
    assert collapsed["a"].requests == 2 and collapsed["a"].name is None
    assert collapsed["a"].city == "y"
    table = upsert_cow(upsert_cow(None, first.coalesce(1)), batch)
    got = {r.uuid: (r.requests, r.name, r.city) for r in table.collect()}
    assert got == {"a": (3, "ann", "y"), "b": (5, None, "z"), "c": (None, None, "w")}
    assert table.columns == list(COLUMNS)
