"""The Write job against real Spark, PostgreSQL and the oracle."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.errors import DataError
from contest.read.job import ReadError
from contest.write.job import WriteMode
from meta.commits import head_snapshot
from meta.versions import gaps_of
from tests.support.pipeline import generated, merge_and_read, oracle, read_rows, with_write, write


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return generated(tmp_path_factory, "wdata", 0.0005, 11)


def test_forced_inversion_is_merged_back_into_version_order(spark, pg, cfg, data, tmp_path):
    cfg = with_write(cfg, threads=3)
    # base-1 waits before committing, so base-2 commits first.
    report, table = write(
        spark, pg, cfg, data, tmp_path / "inv", delays={1: 3.0}, indices=[0, 1, 2]
    )
    assert report.ok
    _, commits = head_snapshot(pg, table)
    order = [c.version for c in commits]
    assert order.index(2) < order.index(1)
    with pytest.raises(ReadError, match="contest meta merge"):
        read_rows(spark, pg, cfg, table)
    assert merge_and_read(spark, pg, cfg, table) == oracle(data, only={0, 1, 2})


def test_backfill_missing_versions_later(spark, pg, cfg, data, tmp_path):
    first = {0, 1, 2, 3, 6, 7}
    _, table = write(spark, pg, cfg, data, tmp_path / "backfill", indices=sorted(first))
    assert merge_and_read(spark, pg, cfg, table) == oracle(data, only=first)
    report, table = write(
        spark, pg, cfg, data, tmp_path / "backfill", indices=[4, 5], mode=WriteMode.APPEND
    )
    assert report.ok
    assert merge_and_read(spark, pg, cfg, table) == oracle(data, only=first | {4, 5})


@pytest.mark.parametrize("reader", ["arrow", "spark"])
def test_eight_writers_all_commits_kept_and_big_file_rule(spark, pg, cfg, data, tmp_path, reader):
    cfg = with_write(cfg, threads=8, reader=reader)
    report, table = write(spark, pg, cfg, data, tmp_path / f"conc_{reader}")
    assert report.ok
    _, commits = head_snapshot(pg, table)
    assert sorted(c.commit_id for c in commits) == sorted(b.commit_id for b in report.batches)
    assert sorted(c.version for c in commits) == list(range(11))
    # Only the big file (base-0) is written in parts, by row range: no plan has a shuffle.
    assert {b.batch for b in report.batches if b.parts} == {"base-0.parquet"}
    assert not any(b.shuffled for b in report.batches)
    assert merge_and_read(spark, pg, cfg, table) == oracle(data)
    # Data files are uncompressed unless asked otherwise.
    one = next(f for c in commits for f in c.files)
    meta = pq.ParquetFile(one.path.removeprefix("file://")).metadata
    assert meta.row_group(0).column(0).compression == "UNCOMPRESSED"


@pytest.mark.parametrize("reader", ["arrow", "spark"])
def test_versions_mapping_changes_the_result(spark, pg, cfg, data, tmp_path, reader):
    cfg = with_write(cfg, versions="0=2,2=0", reader=reader)
    _, table = write(spark, pg, cfg, data, tmp_path / f"vmap_{reader}", indices=[0, 1, 2])
    assert merge_and_read(spark, pg, cfg, table) == oracle(data, "0=2,2=0", only={0, 1, 2})


def _copy(data: Path, dest: Path, n: int) -> Path:
    dest.mkdir()
    for i in range(n):
        (dest / f"base-{i}.parquet").write_bytes((data / f"base-{i}.parquet").read_bytes())
    return dest


def test_bad_batch_commits_nothing_others_commit(spark, pg, cfg, data, tmp_path):
    d = _copy(data, tmp_path / "bad", 3)
    t = pq.read_table(d / "base-1.parquet")
    pq.write_table(
        t.set_column(3, "requests", t.column("requests").cast(pa.string())), d / "base-1.parquet"
    )
    report, table = write(spark, pg, cfg, d, tmp_path / "badt")
    failed = {b.batch: b.error for b in report.batches if b.error}
    assert list(failed) == ["base-1.parquet"]
    assert "column requests is string, expected int64" in failed["base-1.parquet"]
    _, commits = head_snapshot(pg, table)
    assert sorted(c.version for c in commits) == [0, 2]


@pytest.mark.parametrize("reader", ["arrow", "spark"])
def test_null_uuid_is_an_error_or_dropped(spark, pg, cfg, data, tmp_path, reader):
    cfg = with_write(cfg, reader=reader)
    d = _copy(data, tmp_path / "nulls", 2)
    t = pq.read_table(d / "base-1.parquet")
    keys = t.column("uuid").to_pylist()
    keys[0] = keys[5] = None
    pq.write_table(t.set_column(0, "uuid", pa.array(keys, pa.string())), d / "base-1.parquet")
    report, table = write(spark, pg, cfg, d, tmp_path / f"nullt_{reader}")
    err = next(b.error for b in report.batches if b.batch == "base-1.parquet")
    assert "base-1.parquet: 2 row(s) with a NULL uuid" in err
    _, commits = head_snapshot(pg, table)
    assert [c.version for c in commits] == [0]
    files = list((tmp_path / f"nullt_{reader}").glob("*.parquet"))
    assert len(files) == len(commits[0].files)  # the refused batch left no files behind
    report, _ = write(
        spark, pg, with_write(cfg, drop_null_keys=True), d, tmp_path / f"nullt_{reader}"
    )
    assert report.ok
    assert sum(b.null_keys_dropped for b in report.batches) == 2


def test_duplicate_versions_fail_before_writing(spark, pg, cfg, data, tmp_path):
    with pytest.raises(DataError, match="both have version 1"):
        write(spark, pg, with_write(cfg, versions="0=1"), data, tmp_path / "dup")
    assert not (tmp_path / "dup").exists()


def test_copy_on_write_baseline_equals_the_oracle(spark, pg, cfg, data, tmp_path):
    report, table = write(
        spark, pg, with_write(cfg, mode="cow"), data, tmp_path / "cow", indices=[0, 1, 2, 3]
    )
    assert report.ok
    _, commits = head_snapshot(pg, table)
    assert [c.commit_op for c in commits] == ["UpdateCommit"]  # the last overwrite holds all
    assert gaps_of(pg, table).describe() == ""  # ... and the versions of every batch
    assert merge_and_read(spark, pg, cfg, table) == oracle(data, only={0, 1, 2, 3})


def test_copy_on_write_keeps_the_contract_on_hand_written_cases(spark, pg, cfg, tmp_path):
    from tests.support.contract_cases import CASES, versions_spec, write_case

    for name in (
        "duplicate_keys_inside_one_batch",
        "null_string_names",
        "sql_nulls_in_each_column_kind",
        "versions_out_of_file_order",
    ):
        case = CASES[name]
        d = write_case(case, tmp_path / name)
        c = with_write(cfg, mode="cow", versions=versions_spec(case) or "")
        _, table = write(spark, pg, c, d, tmp_path / f"cow_{name.lower()}")
        assert merge_and_read(spark, pg, cfg, table) == case["expected"], name


def test_expected_versions_are_the_datas_up_to_the_newest_chosen():
    from contest.data.batches import Batch
    from contest.write.job import expected_versions

    def b(i: int, v: int) -> Batch:
        return Batch(index=i, path=f"/d/base-{i}.parquet", rows=1, bytes=1, version=v)

    found = [b(0, 2), b(1, 0), b(2, 1), b(3, 3)]
    assert expected_versions(found, [b(0, 2)]) == {
        0: "base-1.parquet",
        1: "base-2.parquet",
        2: "base-0.parquet",
    }
    assert expected_versions(found, []) == {}
