"""Change data through Paimon (paimon-agg, contest/peers/paimon/format.py `change_rows`):
keys of one or two columns of every key type as the primary key, batches holding some
payload columns; on real Spark against the oracle. What Paimon 0.9's aggregation engine
cannot express (deletes; UseLast with partial batches) is refused in one line, asserted."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.data import operators as ops
from tests.contest.data.test_change_reference import KEY, TYPES, random_files
from tests.support import peer_changes
from tests.support.contract_cases import CHANGE_CASES, ONE, TWO, result

STRATEGY = "paimon-agg"
NO_DELETES = (
    "paimon-agg: cannot delete rows (op column 'op'): Paimon 0.9's aggregation engine "
    "retracts a -D row field by field and keeps the key (remove-record-on-delete is the "
    "partial-update engine's, which 0.9 refuses beside aggregate functions)"
)

# Keys of the other types, no row kinds, batches lacking columns.
KEY_CASES = {
    "binary_key_with_partial_batches": {
        "batches": [
            [{"bk": TWO, "requests": 1, "name": "x"}, {"bk": ONE, "requests": 2}],
            [{"bk": ONE, "name": "y"}, {"bk": TWO, "requests": 4, "name": "null"}],
        ],
        "changes": {"key": ("bk",)},
        "expected": [
            result({"bk": ONE}, requests=2, name="y"),
            result({"bk": TWO}, requests=5, name="x"),
        ],
    },
    "int32_key_kept_in_its_type": {
        "batches": [[{"id": 2, "requests": 1}, {"id": 1, "requests": 3}], [{"id": 2, "ip": "i"}]],
        "changes": {"key": ("id",)},
        "expected": [result({"id": 1}, requests=3), result({"id": 2}, requests=1, ip="i")],
    },
}


def random_upserts(seed: int, root) -> dict[str, dict]:
    """Random batches as test_change_merge's, without row kinds (every row an upsert):
    a composite int32 + string key, files lacking columns, versions out of file order."""
    rnd = random.Random(seed)
    folder = root / f"upserts-{seed}" / "data"
    folder.mkdir(parents=True)
    files = random_files(rnd, "lakesoul")
    for i, (cols, rows) in enumerate(files):
        schema = pa.schema([(c, TYPES[c]) for c in (*KEY, *cols)])
        plain = [{k: v for k, v in r.items() if k != "op"} for r in rows]
        pq.write_table(pa.Table.from_pylist(plain, schema=schema), folder / f"base-{i}.parquet")
    versions = list(range(len(files)))
    rnd.shuffle(versions)
    overrides = {
        "workload.key": list(KEY),
        "workload.columns": {"note": ops.USE_LAST_NOT_NULL},
        "write.versions": ",".join(f"{i}={v}" for i, v in enumerate(versions)),
    }
    return {f"upserts-{seed}": {"data": folder, "overrides": overrides}}


def test_paimon_refuses_deletes_and_use_last_with_partial_batches(tmp_path):
    cases = peer_changes.hand_cases(tmp_path)
    refused = peer_changes.refusals(STRATEGY, cases)
    deleting = {n for n, c in CHANGE_CASES.items() if c.get("changes", {}).get("op_column")}
    assert {n for n, why in refused.items() if why == NO_DELETES} == deleting & set(cases)
    assert refused["absent_column_keeps_the_value_a_present_NULL_follows_the_operator"] == (
        "paimon-agg: cannot tell a NULL from an absent column, which the NULL-overwriting "
        "operator of note needs with partial columns (its partial updates: the aggregation "
        "merge engine: a lacking column written NULL, which its aggregates but last_value skip)"
    )
    assert set(refused) == deleting & set(cases) | {
        "absent_column_keeps_the_value_a_present_NULL_follows_the_operator"
    }


@pytest.mark.spark
@pytest.mark.slow  # five Spark sessions, some 15 Paimon commits
def test_keys_and_partial_batches_through_paimon_equal_the_oracle(tmp_path):
    root = tmp_path / "cases"
    made = peer_changes.hand_cases(root) | peer_changes.hand_cases(root, KEY_CASES)
    for seed in range(2):
        made |= random_upserts(seed, root)
    cases = peer_changes.with_answers(root, made)
    refused = peer_changes.refusals(STRATEGY, cases)
    todo = {n: c for n, c in cases.items() if n not in refused}
    assert set(todo) == {
        "composite_key_with_a_NULL_part_dropped_and_counted",
        *KEY_CASES,
        "upserts-0",
        "upserts-1",
    }
    results = peer_changes.run(STRATEGY, todo, tmp_path / "run", one_session=False)
    wrong = peer_changes.wrong_answers(results, todo)
    assert not wrong, "\n".join(wrong)
