"""Change data (row kinds, partial columns, keys) through the harness's own LakeSoul
write and merge-on-read, against the hand-worked contract cases and the oracle."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.config import Config
from contest.config.loading import override
from contest.data import operators as ops
from contest.data.batches import discover
from contest.data.changes import Changes
from contest.data.oracle import expected_rows
from contest.errors import DataError
from contest.maintenance.compact import compact
from contest.peers.lakesoul import BASELINE_MOR
from contest.read.arrow import read_merged
from contest.read.files import write_merged
from contest.read.job import chosen_commits, merged
from contest.write.job import WriteMode
from meta import catalog
from meta.merge import merge_table
from tests.support.contract_cases import CHANGE_CASES, write_change_case
from tests.support.pipeline import with_write, write

RESULTS = sorted(n for n, c in CHANGE_CASES.items() if "expected" in c)
REFUSALS = sorted(n for n, c in CHANGE_CASES.items() if "refused" in c)


def change_config(cfg: Config, case: dict) -> Config:
    """The session's configuration with a case's change rules and extra columns."""
    rules = Changes(**case.get("changes", {}))
    extra = {c: op for c, op in case.get("operators", {}).items() if c not in ops.CONTRACT}
    workload = dataclasses.replace(
        cfg.workload,
        op_column=rules.op_column,
        op_values=rules.op_values,
        key=list(rules.key),
        columns=extra,
    )
    cfg = dataclasses.replace(cfg, workload=workload)
    return with_write(cfg, drop_null_keys=rules.drop_null_keys)


def plain(rows: list[dict], key: tuple[str, ...]) -> list[dict]:
    """Rows as comparable dicts (Spark's bytearray as bytes), sorted by key."""
    out = [{k: bytes(v) if isinstance(v, bytearray) else v for k, v in r.items()} for r in rows]
    return sorted(out, key=lambda r: tuple(r[k] for k in key))


def oracle_rows(data: Path, case: dict) -> list[dict]:
    rules = Changes(**case.get("changes", {}))
    operators = {**ops.CONTRACT, **case.get("operators", {})}
    return plain(expected_rows(discover(data, schema=None), operators, rules), rules.key)


def write_and_read(spark, pg, cfg, case: dict, root: Path, name: str):
    data = write_change_case(case, root / "data")
    ccfg = change_config(cfg, case)
    report, table = write(spark, pg, ccfg, data, root / f"ch_{name.lower()}"[:60])
    assert all(b.error is None for b in report.batches), [b.error for b in report.batches]
    merge_table(pg, table)
    key = tuple(ccfg.workload.key)
    df, _, _ = merged(spark, pg, ccfg, table)
    rows = plain([r.asDict() for r in df.collect()], key)
    return data, ccfg, report, table, rows


@pytest.mark.parametrize("name", RESULTS)
def test_change_cases_through_the_optimized_write_and_read(name, spark, pg, cfg, tmp_path):
    case = CHANGE_CASES[name]
    data, _, report, _, rows = write_and_read(spark, pg, cfg, case, tmp_path, name)
    key = tuple(Changes(**case.get("changes", {})).key)
    assert rows == plain(case["expected"], key)
    assert rows == oracle_rows(data, case)
    assert sum(b.null_keys_dropped for b in report.batches) == case.get("dropped", 0)


@pytest.mark.parametrize("name", REFUSALS)
def test_change_refusals_in_one_line_before_anything_is_written(name, spark, pg, cfg, tmp_path):
    case = CHANGE_CASES[name]
    data = write_change_case(case, tmp_path / "data")
    table_dir = tmp_path / f"rf_{name.lower()}"[:60]
    with pytest.raises(DataError) as err:
        write(spark, pg, change_config(cfg, case), data, table_dir)
    assert case["refused"] in str(err.value)
    assert "\n" not in str(err.value)
    assert not table_dir.exists() or not list(table_dir.rglob("*.parquet"))


def test_baseline_mor_takes_change_data_through_the_same_change_write(spark, pg, cfg, tmp_path):
    """baseline-mor's settings (one thread, zstd, Spark's reader, 4 parts, the result
    through Spark): its change data goes through the change write, read the same."""
    case = CHANGE_CASES["insert_update_delete_of_one_key_inside_one_batch"]
    mor = override(cfg, BASELINE_MOR)
    data, _, _, _, rows = write_and_read(spark, pg, mor, case, tmp_path, "mor")
    assert rows == plain(case["expected"], ("uuid",)) == oracle_rows(data, case)


def test_the_cdc_column_and_partial_files_as_lakesoul_keeps_them(spark, pg, cfg, tmp_path):
    """The table names its CDC column; delete rows stay in the files as tombstones in
    LakeSoul's spelling; a file holds only its batch's columns, as its commit says."""
    case = CHANGE_CASES["composite_int_and_string_key_in_debeziums_spelling"]
    _, _, _, table, _ = write_and_read(spark, pg, cfg, case, tmp_path, "cdc")
    assert table.cdc_column == "op"
    assert table.primary_keys == ("tenant", "id")
    commits, _, _ = chosen_commits(pg, change_config(cfg, case), table, {})
    kinds: set[str] = set()
    for commit in commits:
        for f in commit.files:
            t = pq.read_table(f.path.removeprefix("file://"))
            assert set(t.column_names) == set(f.columns)
            assert "ip" not in t.column_names
            kinds |= set(t.column("op").to_pylist())
    assert kinds == {"insert", "update", "delete"}


def test_the_result_files_written_by_the_merge_tasks(spark, pg, cfg, tmp_path):
    """The optimized read's own writer (write_merged): binary keys stay binary, the CDC
    column is not in the result."""
    case = CHANGE_CASES["binary_key_kept_as_binary"]
    data, ccfg, _, table, _ = write_and_read(spark, pg, cfg, case, tmp_path, "out")
    commits, _, operators = chosen_commits(pg, ccfg, table, {})
    out = tmp_path / "result"
    assert write_merged(spark, table, commits, operators, str(out)) == 1
    got = pq.read_table(out)
    assert "op" not in got.column_names
    assert plain(got.to_pylist(), ("bk",)) == oracle_rows(data, case)


def test_compaction_keeps_change_data_and_later_deletes_apply(spark, pg, cfg, tmp_path):
    """A compacted change table holds its live keys only (each row an insert); a batch
    written after the compaction deletes and re-inserts on top of it. The in-process
    read (read_merged) merges it as the Spark read does."""
    case = CHANGE_CASES["delete_then_reinsert_starts_the_key_afresh"]
    data = write_change_case(case, tmp_path / "data")
    ccfg = change_config(cfg, case)
    table_dir = tmp_path / "compacted"
    write(spark, pg, ccfg, data, table_dir, indices=[0, 1])
    table = catalog.get_table(pg, table_dir.name)
    merge_table(pg, table)
    compact(spark, pg, ccfg, table)
    commits, _, _ = chosen_commits(pg, ccfg, table, {})
    assert [c.commit_op for c in commits] == ["CompactionCommit"]
    kept = pa.concat_tables(
        [pq.read_table(f.path.removeprefix("file://")) for f in commits[0].files]
    )
    assert kept.column("uuid").to_pylist() == ["b"]  # a was deleted
    assert kept.column("op").to_pylist() == ["insert"]
    write(spark, pg, ccfg, data, table_dir, indices=[2], mode=WriteMode.APPEND)
    merge_table(pg, table)
    df, _, _ = merged(spark, pg, ccfg, table)
    want = plain(case["expected"], ("uuid",))
    assert plain([r.asDict() for r in df.collect()], ("uuid",)) == want
    assert plain(read_merged(pg, ccfg, table).to_pylist(), ("uuid",)) == want
