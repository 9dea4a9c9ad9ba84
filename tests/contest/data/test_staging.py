"""A user's files made batches (contest/data/staging.py): consecutive files grouped
(`workload.files_per_batch`), files ordered by their ranges of `workload.order_column`
and each batch's rows by it (stably); overlapping ranges, a batch of files with
different columns and a NULL position refused in one line with nothing staged; staged
batches kept and never staged twice; the user's folder untouched."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.config import WorkloadConfig
from contest.config.validation import validate_workload
from contest.data.batches import discover
from contest.data.staging import MARKER, grouped, needed, ordered, sources, staged
from contest.data.workload import cache_label
from contest.errors import ConfigError, DataError

SCHEMA = pa.schema([("id", pa.int64()), ("lsn", pa.int64()), ("qty", pa.int64())])


def write(folder: Path, name: str, rows: list[tuple[int, int | None, int]], schema=SCHEMA):
    folder.mkdir(parents=True, exist_ok=True)
    cols = list(zip(*rows, strict=True))
    table = pa.table([pa.array(c, t.type) for c, t in zip(cols, schema, strict=False)], schema)
    pq.write_table(table, folder / name)


def rows_of(path: Path) -> list[tuple]:
    return [tuple(r.values()) for r in pq.read_table(path).to_pylist()]


def listing(folder: Path) -> list[tuple[str, int, int]]:
    return sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir())


def said() -> tuple[list[str], object]:
    lines: list[str] = []
    return lines, lines.append


def test_nothing_is_staged_at_the_defaults(tmp_path):
    write(tmp_path / "d", "part-1.parquet", [(1, 0, 1)])
    w = WorkloadConfig()
    assert not needed(w)
    assert staged(tmp_path / "d", w, tmp_path / "work", print) == tmp_path / "d"
    assert not (tmp_path / "work").exists()


def test_consecutive_files_in_natural_order_make_one_batch(tmp_path):
    data = tmp_path / "d"
    for i in (1, 2, 3, 10, 11):  # natural order: part-2 before part-10
        write(data, f"part-{i}.parquet", [(i, i, i), (i, i, i + 100)])
    before = listing(data)
    w = WorkloadConfig(files_per_batch=2)
    lines, say = said()
    out = Path(staged(data, w, tmp_path / "work", say))
    assert listing(data) == before  # the user's files only read
    assert sorted(p.name for p in out.glob("*.parquet")) == [
        "base-0.parquet",
        "base-1.parquet",
        "base-2.parquet",
    ]
    assert rows_of(out / "base-0.parquet") == [(1, 1, 1), (1, 1, 101), (2, 2, 2), (2, 2, 102)]
    assert rows_of(out / "base-1.parquet") == [(3, 3, 3), (3, 3, 103), (10, 10, 10), (10, 10, 110)]
    assert rows_of(out / "base-2.parquet") == [(11, 11, 11), (11, 11, 111)]  # the last: fewer
    assert [b.rows for b in discover(out, None, None)] == [4, 4, 2]
    assert lines and "5 file(s)" in lines[0] and "3 batch(es)" in lines[0]
    # Kept: asked again, nothing is written; handed its own batches, it stages nothing.
    stamp = listing(out)
    lines2, say2 = said()
    assert staged(data, w, tmp_path / "work", say2) == out and listing(out) == stamp
    assert staged(out, w, tmp_path / "work", say2) == out and not lines2
    assert (out / MARKER).is_file()


def test_an_order_column_orders_the_files_by_range_and_rows_stably(tmp_path):
    data = tmp_path / "d"
    # Names out of the log's order; rows out of order inside each file; two rows of key 5
    # share lsn 12 (the file's order between them is kept).
    write(data, "a.parquet", [(5, 12, 1), (4, 10, 0), (5, 12, 2), (6, 11, 0)])
    write(data, "b.parquet", [(1, 3, 0), (2, 1, 0), (3, 2, 0)])
    w = WorkloadConfig(order_column="lsn")
    out = Path(staged(data, w, tmp_path / "work", print))
    assert rows_of(out / "base-0.parquet") == [(2, 1, 0), (3, 2, 0), (1, 3, 0)]  # b: 1..3
    assert rows_of(out / "base-1.parquet") == [(4, 10, 0), (6, 11, 0), (5, 12, 1), (5, 12, 2)]


def test_overlapping_ranges_are_refused_in_one_line_and_nothing_staged(tmp_path):
    data = tmp_path / "d"
    write(data, "part-1.parquet", [(1, 0, 0), (2, 10, 0)])
    write(data, "part-2.parquet", [(3, 5, 0), (4, 20, 0)])
    with pytest.raises(DataError) as err:
        staged(data, WorkloadConfig(order_column="lsn"), tmp_path / "work", print)
    line = str(err.value)
    assert "\n" not in line and "part-2.parquet" in line and "overlaps part-1.parquet" in line
    assert "[5, 20]" in line and "[0, 10]" in line
    assert not (tmp_path / "work").exists()


def test_a_null_position_and_a_missing_order_column_are_refused(tmp_path):
    data = tmp_path / "d"
    write(data, "part-1.parquet", [(1, None, 0), (2, 3, 0)])
    with pytest.raises(DataError, match=r"part-1.parquet: 1 row\(s\) with a NULL lsn"):
        staged(data, WorkloadConfig(order_column="lsn"), tmp_path / "work", print)
    with pytest.raises(DataError, match=r"part-1.parquet: no column ts_ms"):
        staged(data, WorkloadConfig(order_column="ts_ms"), tmp_path / "work", print)
    assert not (tmp_path / "work").exists()


def test_files_of_one_batch_with_different_columns_are_refused(tmp_path):
    data = tmp_path / "d"
    write(data, "part-1.parquet", [(1, 0, 0)])
    narrow = pa.schema([("id", pa.int64()), ("lsn", pa.int64())])
    pq.write_table(pa.table({"id": [2], "lsn": [1]}, narrow), data / "part-2.parquet")
    found = sources(str(data), "")
    with pytest.raises(DataError) as err:
        grouped(found, 2)
    line = str(err.value)
    assert "part-2.parquet" in line and "differ from part-1.parquet's" in line
    assert "files_per_batch=2" in line and "\n" not in line
    assert len(grouped(found, 1)) == 2  # one file a batch: a partial batch is allowed


def test_files_without_statistics_are_ranged_by_reading_the_column(tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    table = pa.table({"id": [1, 2], "lsn": [7, 9], "qty": [0, 0]}, SCHEMA)
    pq.write_table(table, data / "part-1.parquet", write_statistics=False)
    (found,) = sources(str(data), "lsn")
    assert (found.low, found.high) == (7, 9)
    assert ordered([found], "lsn") == [found]


def test_the_settings_are_checked_and_kept_out_of_generated_data_keys():
    with pytest.raises(ConfigError, match="files_per_batch: must be at least 1"):
        validate_workload(WorkloadConfig(files_per_batch=0))
    with pytest.raises(ConfigError, match="order_column: 'uuid' is the key"):
        validate_workload(WorkloadConfig(order_column="uuid"))
    w = WorkloadConfig(name="mine", batch_rows=5)
    assert cache_label(dataclasses.replace(w, files_per_batch=3, order_column="x")) == (
        cache_label(w)
    )
