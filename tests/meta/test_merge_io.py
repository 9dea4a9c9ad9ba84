"""The merge's set-based statements: when they join by hashing, and the array literals
they send."""

import pyarrow as pa
import pytest

from tests.support.pg import pg_cursor


def test_hash_join_only_for_long_snapshots_of_short_histories():
    from meta.merge_io import HASH_JOIN_MIN_LIVE, hash_join_pays

    big = HASH_JOIN_MIN_LIVE * 50
    assert hash_join_pays(big, big)  # a history of live commits only
    assert hash_join_pays(big, 3 * big)
    assert not hash_join_pays(big, 100 * big)  # mostly compacted-away commits: lookups
    assert not hash_join_pays(HASH_JOIN_MIN_LIVE - 1, HASH_JOIN_MIN_LIVE - 1)


@pytest.mark.pg
def test_array_literals_round_trip_through_postgresql(pg):
    from meta.merge_io import array_literal

    texts = ["MergeCommit", 'a"b', "c\\d", "", "x,y", "{z}", None, "NULL"]
    numbers = [1, None, -(2**63), 2**63 - 1]
    with pg_cursor(pg) as cur:
        cur.execute(
            "SELECT %s::text[], %s::bigint[], %s::text[]",
            (
                array_literal(pa.array(texts), quote=True),
                array_literal(pa.chunked_array([numbers[:2], numbers[2:]])),
                array_literal(pa.array([], pa.string()), quote=True),
            ),
        )
        assert cur.fetchone() == (texts, numbers, [])
