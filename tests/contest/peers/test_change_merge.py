"""Change data through Delta's and Iceberg's own MERGE (contest/peers/change_merge.py):
the hand contract cases of change data (tests/support/contract_cases.py) and random
change batches (deletes, re-inserts, files lacking columns, NULLs and "null" strings, a
composite int32 + string key, versions out of file order) written by delta-merge and
iceberg-mor and read back, each against the oracle. Real Spark, the format's own library,
one child JVM per format (every case in one session)."""

from __future__ import annotations

import pytest

from contest.data import operators as ops
from contest.data.changes import Changes
from contest.peers.change_merge import ChangeBatch, merge_clauses, merge_sql
from tests.support import peer_changes

STRATEGIES = ["delta-merge", "iceberg-mor"]
# Few examples (the suite's time): the hand cases hold every rule; the random ones mix them.
RANDOM_SEEDS = range(2)


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict[str, dict]:
    """Every case: its data, configuration and the oracle's answer."""
    return peer_changes.change_cases(tmp_path_factory.mktemp("changes"), RANDOM_SEEDS)


@pytest.mark.spark
@pytest.mark.slow  # about 3 minutes a format: some 40 MERGEs on 2 cores
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_change_data_through_the_formats_merge_equals_the_oracle(strategy, cases, tmp_path):
    results = peer_changes.run(strategy, cases, tmp_path)
    # The batches' reports say the collapse applied the delete rule.
    partial = peer_changes.assert_changes_applied(results, cases)
    # Its first batch holds every column: the upsert's create.
    assert all("partial columns" in o for o in partial["operations"][1:]), partial


def _sql(rules: Changes, held: tuple[str, ...]) -> str:
    batch = ChangeBatch(rows=None, rules=rules, columns=held)  # type: ignore[arg-type]
    return merge_sql(
        "t_",
        "s_",
        batch,
        ["ip", "requests", "note"],
        {"ip": ops.USE_LAST_NOT_NULL, "requests": ops.SUM_ALL, "note": ops.USE_LAST},
    )


def test_the_merge_deletes_replaces_and_sets_only_the_columns_the_batch_holds():
    sql = _sql(Changes(("tenant", "id"), "op", "debezium"), ("requests",))
    assert "ON t.`tenant` = s.`tenant` AND t.`id` = s.`id`" in sql
    assert "WHEN MATCHED AND s.`op` IN ('d') THEN DELETE" in sql
    # A re-inserted key: every column the batch's value, NULL where it has none.
    assert (
        "WHEN MATCHED AND s.`__contest_replace` THEN UPDATE SET t.`ip` = NULL, "
        "t.`requests` = s.`requests`, t.`note` = NULL"
    ) in sql
    # A live key: only requests, summed; ip and note keep the table's values.
    combine = "WHEN MATCHED THEN UPDATE SET t.`requests` = CASE WHEN t.`requests` IS NULL"
    assert combine in sql and "t.`ip` = coalesce" not in sql
    assert "WHEN NOT MATCHED AND NOT s.`op` IN ('d') THEN INSERT (`tenant`, `id`, `ip`, " in sql
    assert sql.endswith("VALUES (s.`tenant`, s.`id`, NULL, s.`requests`, NULL)")


def test_without_row_kinds_nothing_is_deleted_and_a_batch_of_no_column_updates_nothing():
    sql = _sql(Changes(), ())
    assert "DELETE" not in sql and "UPDATE" not in sql
    assert "WHEN NOT MATCHED THEN INSERT (`uuid`, `ip`, `requests`, `note`)" in sql


def test_the_clauses_take_the_engines_quoting_for_delta_rs():
    """delta-rs's MERGE (DataFusion SQL) gets the same clauses, names double-quoted."""
    m = merge_clauses(
        Changes(("tenant", "id"), "op", "debezium"),
        ("requests",),
        ["ip", "requests"],
        {"ip": ops.USE_LAST_NOT_NULL, "requests": ops.SUM_ALL},
        quote=lambda name: f'"{name}"',
    )
    assert m.on == 't."tenant" = s."tenant" AND t."id" = s."id"'
    assert m.delete_if == """s."op" IN ('d')""" and m.insert_if == f"NOT {m.delete_if}"
    assert m.replace_if == 's."__contest_replace"'
    assert m.replace == {"ip": "NULL", "requests": 's."requests"'}
    assert list(m.combine) == ["requests"]  # ip: the batch lacks it, the table's kept
    assert m.insert == {"tenant": 's."tenant"', "id": 's."id"', **m.replace}
