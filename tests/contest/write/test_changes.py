"""The change write's pieces: LakeSoul's spelling of row kinds, key columns' stored
types, when the change path is taken, baseline-cow's refusal."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.data.batches import SCHEMA, discover
from contest.data.changes import ROW_KINDS
from contest.errors import DataError
from contest.write.changes import file_schema, lakesoul_kinds, needs_changes, stored_key_type
from contest.write.job import WriteMode, run_write
from tests.support.contract_cases import CHANGE_CASES, row, write_case, write_change_case


def test_debeziums_kinds_in_lakesoul_spelling():
    got = lakesoul_kinds(pa.array(["c", "r", "u", "d", "c"]), ROW_KINDS["debezium"])
    assert got.to_pylist() == ["insert", "insert", "update", "delete", "insert"]
    same = pa.array(["delete", "insert", "update"])
    assert lakesoul_kinds(same, ROW_KINDS["lakesoul"]).to_pylist() == same.to_pylist()


def test_key_columns_stored_as_lakesoul_types():
    assert stored_key_type(pa.binary(16)) == pa.binary()
    assert stored_key_type(pa.large_string()) == pa.string()
    assert stored_key_type(pa.int32()) == pa.int32()


def test_the_contests_data_never_takes_the_change_path(cfg, tmp_path):
    data = write_case({"batches": [[row("a")], [row("b")]]}, tmp_path / "plain")
    batches = discover(data)
    assert not needs_changes(cfg, batches, [file_schema(b) for b in batches])
    # A file lacking a payload column does; so do row kinds.
    pq.write_table(pa.table({"uuid": ["c"], "requests": [1]}), data / "base-2.parquet")
    batches = discover(data, schema=None)
    assert needs_changes(cfg, batches, [file_schema(b) for b in batches])
    w = dataclasses.replace(cfg.workload, op_column="op")
    kinds = dataclasses.replace(cfg, workload=w)
    assert needs_changes(kinds, batches[:2], [SCHEMA, SCHEMA])


def test_baseline_cow_refuses_change_data_in_one_line(spark, pg, cfg, tmp_path):
    case = CHANGE_CASES["delete_then_reinsert_starts_the_key_afresh"]
    data = write_change_case(case, tmp_path / "data")
    w = dataclasses.replace(cfg.workload, op_column="op")
    cow = dataclasses.replace(
        cfg, workload=w, write=dataclasses.replace(cfg.write, mode="cow", threads=1)
    )
    with pytest.raises(DataError, match=r"^write.mode = cow \(baseline-cow\): cannot take"):
        run_write(spark, pg, cow, data, str(tmp_path / "cow"), "cow", WriteMode.REPLACE)
    assert not (tmp_path / "cow").exists()
