"""Schema evolution on the harness's LakeSoul tables, real Spark and
PostgreSQL: batches written each with its own schema (a column added, an int32 column
widened to int64), read as of versions and as changes under the newest schema, equal
to the oracle's; and the vacuumed start: once `contest vacuum` removed the files of the
commits a compaction merged, a change read from inside it is refused naming the
oldest version it can start from (never answered from what remains, which would be
wrong for a summed column)."""

from __future__ import annotations

import pytest

from contest.config import override
from contest.data.batches import discover, upto
from contest.data.generator import generate
from contest.data.oracle import expected_rows
from contest.data.workload import contract_operators, schema_of_batch
from contest.errors import ReadError
from contest.maintenance.compact import compact
from contest.maintenance.vacuum import vacuum
from meta.merge import merge_table
from tests.support.pipeline import read_rows, with_write, write

EVOLVING = {
    "workload.name": "evolving-test",
    "workload.batches": 4,
    "workload.columns": {"tag": "UseLastNotNull", "hits": "SumAll"},
    "workload.added": {"tag": 1},
    "workload.widened": {"hits": 3},
}


@pytest.fixture(scope="module")
def evolving(cfg, tmp_path_factory):
    wcfg = override(cfg, EVOLVING)
    data = tmp_path_factory.mktemp("evolving")
    generate(data, 0.0003, seed=5, progress=False, workload=wcfg.workload)
    return wcfg, data


def expected(wcfg, data, low: int | None, high: int) -> list[dict]:
    batches = upto(discover(data, None, schema_of_batch(wcfg.workload)), high)
    if low is not None:
        batches = [b for b in batches if b.version > low]
    return expected_rows(batches, contract_operators(wcfg.workload))


def test_added_and_widened_columns_read_under_the_newest_schema_then_vacuumed_start(
    spark, pg, evolving, tmp_path
):
    wcfg, data = evolving
    _, table = write(spark, pg, wcfg, data, tmp_path / "evolving_t", indices=[0, 1, 2, 3])
    merge_table(pg, table)
    # The added column: NULL before batch 1 (as of 0), a value after it.
    before = read_rows(spark, pg, wcfg, table, as_of=0)
    assert before == expected(wcfg, data, None, 0)
    assert {r["tag"] for r in before} == {None}
    after = read_rows(spark, pg, wcfg, table, as_of=1)
    assert after == expected(wcfg, data, None, 1) and any(r["tag"] for r in after)
    # The changes across the addition and across the widening (int32 files summed with
    # int64 ones, as int64).
    assert read_rows(spark, pg, wcfg, table, from_version=0, to_version=1) == expected(
        wcfg, data, 0, 1
    )
    assert read_rows(spark, pg, wcfg, table, from_version=2, to_version=3) == expected(
        wcfg, data, 2, 3
    )
    assert read_rows(spark, pg, wcfg, table) == expected(wcfg, data, None, 3)
    # The vacuumed start: compacted, then the merged commits' files removed.
    compact(spark, pg, wcfg, table)
    assert vacuum(pg, table, retain_hours=0).orphans
    with pytest.raises(ReadError) as info:
        read_rows(spark, pg, wcfg, table, from_version=1, to_version=3)
    text = str(info.value)
    assert "versions v0-3 were compacted by commit" in text and "\n" not in text
    assert "read the changes from version 3 on" in text
    # The head still reads exactly under the newest schema.
    assert read_rows(spark, pg, wcfg, table) == expected(wcfg, data, None, 3)


def test_copy_on_write_reads_each_batch_under_the_newest_schema(spark, pg, evolving, tmp_path):
    """baseline-cow's full outer join takes an older batch with the columns added later
    as NULL and the narrow column as int64 (it failed before: the batch lacked them)."""
    wcfg, data = evolving
    cow = with_write(wcfg, mode="cow")
    _, table = write(spark, pg, cow, data, tmp_path / "evolving_cow", indices=[0, 1, 2, 3])
    assert read_rows(spark, pg, cow, table) == expected(wcfg, data, None, 3)
