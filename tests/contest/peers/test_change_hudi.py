"""Change data through Hudi (contest/peers/hudi/changes.py): deletes (Hudi's
`_hoodie_is_deleted`, the record merger's tombstones), composite and int keys as Hudi's
record key (a binary one refused), batches holding some payload columns; hudi-mor
(merged in Spark, Hudi's default merge by ordering field) and hudi-merger (the
contract's record merger, jvm/), each on real Spark against the oracle, a case its
declaration refuses asserting the one line."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from contest.data import operators as ops
from contest.peers.hudi.changes import key_options
from tests.support import peer_changes

PARTIAL_USE_LAST = "absent_column_keeps_the_value_a_present_NULL_follows_the_operator"


@pytest.mark.spark
@pytest.mark.slow  # some 30 Hudi commits a strategy on 2 cores
@pytest.mark.parametrize("strategy", ["hudi-mor", "hudi-merger"])
def test_change_data_through_hudi_equals_the_oracle(strategy, tmp_path):
    # The record merger cannot tell an absent column from a NULL: the random batches'
    # UseLast column becomes UseLastNotNull for it (its refusal is asserted below).
    merger = strategy == "hudi-merger"
    over = {"workload.columns": {"note": ops.USE_LAST_NOT_NULL}} if merger else None
    root = tmp_path / "cases"
    cases = peer_changes.change_cases(root, range(2), over)
    refused = peer_changes.refusals(strategy, cases)
    binary = {
        "binary_key_kept_as_binary": (
            f"{strategy}: cannot key by a 16-byte binary column (bk): it keys by string, "
            "int32, int64"
        )
    }
    if merger:
        assert refused == binary | {
            PARTIAL_USE_LAST: (
                "hudi-merger: cannot tell a NULL from an absent column, which the "
                "NULL-overwriting operator of note needs with partial columns (its partial "
                "updates: a lacking column upserted NULL, which the record merger's rules skip)"
            )
        }
    else:
        assert refused == binary
    todo = {n: c for n, c in cases.items() if n not in refused}
    results = peer_changes.run(strategy, todo, tmp_path / "run")
    wrong = peer_changes.wrong_answers(results, todo)
    assert not wrong, "\n".join(wrong)
    replaced = pq.read_table(results["reinsert_of_a_live_key"]["out"]).to_pylist()
    assert (
        sorted(replaced, key=lambda r: r["uuid"]) == peer_changes.REINSERT_OF_A_LIVE_KEY["expected"]
    )
    # One write a batch, the collapse's delete rule named (a key deleted and inserted again
    # inside base-0: replaced by the batch's row, marked afresh for the merger).
    ops_ = results["insert_update_delete_of_one_key_inside_one_batch"]["operations"]
    assert ops_[0].startswith("bulk_insert change merge"), ops_
    assert ops_[1].startswith("upsert change merge"), ops_


def test_the_record_key_is_the_workloads_key_one_column_or_two():
    one = key_options(("uuid",))
    assert one["hoodie.datasource.write.recordkey.field"] == "uuid"
    assert one["hoodie.datasource.write.keygenerator.class"].endswith("NonpartitionedKeyGenerator")
    two = key_options(("tenant", "id"))
    assert two["hoodie.datasource.write.recordkey.field"] == "tenant,id"
    assert two["hoodie.datasource.write.keygenerator.class"].endswith("ComplexKeyGenerator")
    assert two["hoodie.datasource.write.partitionpath.field"] == ""
