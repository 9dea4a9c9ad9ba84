"""A big batch cut into row ranges and pieces: the plan covers every row once, in file
order, and the reader hands back exactly the rows of a range, one piece at a time."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.errors import DataError
from contest.write.batch_reader import read_pieces
from contest.write.files import row_group_rows
from contest.write.split import groups_of, part_count, pieces, plan_ranges


def test_part_count_follows_the_rows_with_at_least_one_part_a_core():
    assert part_count(10_000_000, 1_250_000, fixed=8, cores=2) == 8
    assert part_count(100_000_000, 1_250_000, fixed=8, cores=2) == 80
    assert part_count(1_000_000, 1_250_000, fixed=8, cores=2) == 2  # the cores
    assert part_count(1_000_001, 500_000, fixed=8, cores=2) == 3  # rounded up
    assert part_count(10_000_000, 0, fixed=4, cores=2) == 4  # task_rows off: fixed
    assert part_count(0, 1000, fixed=8, cores=1) == 1


def _covers(ranges: list[tuple[int, int]], total: int) -> None:
    assert ranges[0][0] == 0 and ranges[-1][1] == total
    assert all(a < b for a, b in ranges)
    assert all(b == c for (_, b), (c, _) in zip(ranges, ranges[1:], strict=False))


def test_one_row_group_is_cut_only_to_give_each_core_a_range():
    assert plan_ranges([10_000_000], 1_250_000, 2) == [(0, 5_000_000), (5_000_000, 10_000_000)]
    assert plan_ranges([10], 0, 3) == [(0, 3), (3, 6), (6, 10)]
    assert plan_ranges([2], 1, 5) == [(0, 1), (1, 2)]  # never an empty range


def test_row_groups_are_ranges_of_their_own_when_there_are_enough():
    groups = [10_000_000] * 10
    ranges = plan_ranges(groups, 1_250_000, 2)
    assert ranges == [(i * 10_000_000, (i + 1) * 10_000_000) for i in range(10)]


def test_small_row_groups_are_packed_up_to_a_piece():
    assert plan_ranges([100] * 10, 300, 2) == [(0, 300), (300, 600), (600, 900), (900, 1000)]
    assert plan_ranges([100, 0, 100], 1000, 1) == [(0, 200)]
    assert plan_ranges([0, 0], 10, 2) == []


def test_a_plan_covers_every_row_once_in_order():
    rng = random.Random(7)
    for _ in range(300):
        groups = [rng.choice([0, 1, 5, 100, 1000]) for _ in range(rng.randint(1, 8))]
        if not sum(groups):
            continue
        ranges = plan_ranges(groups, rng.choice([0, 1, 50, 700, 5000]), rng.randint(1, 6))
        _covers(ranges, sum(groups))


def test_pieces_are_equal_and_within_the_bound():
    assert pieces(0, 10, 0) == [(0, 10)]
    assert pieces(5, 15, 4) == [(5, 8), (8, 11), (11, 15)]
    assert pieces(3, 3, 4) == []
    assert list(groups_of([10, 10, 10], 5, 21)) == [(0, 0), (1, 10), (2, 20)]
    assert list(groups_of([10, 10, 10], 10, 20)) == [(1, 10)]


@pytest.fixture(scope="module")
def batch_file(tmp_path_factory):
    """300 rows in row groups of 7, 100, 0 (an empty one), 93 and 100 rows."""
    path = tmp_path_factory.mktemp("split") / "b.parquet"
    rows = pa.table({"uuid": [f"k{i % 37:03d}" for i in range(300)], "v": list(range(300))})
    with pq.ParquetWriter(path, rows.schema) as writer:
        pos = 0
        for size in (7, 100, 0, 93, 100):
            writer.write_table(rows.slice(pos, size), row_group_size=max(size, 1))
            pos += size
    assert row_group_rows(str(path)) == [7, 100, 0, 93, 100]
    return path, rows


@pytest.mark.parametrize(
    ("start", "stop", "piece_rows"),
    [(0, 300, 0), (0, 300, 64), (7, 107, 0), (3, 250, 40), (150, 151, 10), (290, 300, 3)],
)
@pytest.mark.parametrize("threads", [False, True], ids=["one-thread", "decode-threads"])
def test_read_pieces_gives_the_ranges_rows_in_order(
    batch_file, monkeypatch, start, stop, piece_rows, threads
):
    import contest.write.batch_reader as files

    path, rows = batch_file
    monkeypatch.setattr(files, "STREAM_BATCH_ROWS", 16)  # batches across row groups
    groups = row_group_rows(str(path))
    got = list(
        read_pieces(str(path), groups, start, stop, piece_rows, ["uuid", "v"], threads=threads)
    )
    assert [p.num_rows for p in got] == [b - a for a, b in pieces(start, stop, piece_rows)]
    assert pa.concat_tables(got).to_pydict() == rows.slice(start, stop - start).to_pydict()


def test_a_damaged_row_group_is_a_data_error_naming_it(tmp_path, monkeypatch):
    import contest.write.batch_reader as files

    path = tmp_path / "bad.parquet"
    rows = pa.table({"uuid": [f"key-{i:06d}" for i in range(4000)]})
    pq.write_table(rows, path, row_group_size=2000, use_dictionary=False)
    meta = pq.ParquetFile(path).metadata
    col = meta.row_group(1).column(0)
    raw = bytearray(path.read_bytes())
    start = col.data_page_offset
    raw[start : start + 64] = b"\xff" * 64
    path.write_bytes(bytes(raw))
    # A batch decoded across both row groups names both; one inside the group names it.
    with pytest.raises(DataError, match=r"bad.parquet: row groups 0-1 cannot be read"):
        list(read_pieces(str(path), [2000, 2000], 0, 4000, 1500, ["uuid"]))
    monkeypatch.setattr(files, "STREAM_BATCH_ROWS", 500)
    with pytest.raises(DataError, match=r"bad.parquet: row group 1 cannot be read"):
        list(read_pieces(str(path), [2000, 2000], 0, 4000, 1500, ["uuid"]))
    with pytest.raises(DataError, match=r"bad.parquet: row group 1 cannot be read"):
        list(read_pieces(str(path), [2000, 2000], 2000, 4000, 0, ["uuid"]))  # read whole


@pytest.mark.parametrize(("start", "stop", "piece_rows"), [(0, 300, 0), (3, 250, 40), (0, 300, 64)])
def test_columns_stored_as_small_dictionaries_come_back_as_dictionaries(
    tmp_path, monkeypatch, start, stop, piece_rows
):
    """Asked for, a column the file stores as a small dictionary in every row group is
    read as one (whole row groups and streamed ranges alike), with the same values; a
    column of distinct values, whose dictionary is most of the column, stays plain."""
    import contest.write.batch_reader as files

    monkeypatch.setattr(files, "STREAM_BATCH_ROWS", 16)
    path = tmp_path / "d.parquet"
    rows = pa.table(
        {
            "uuid": [f"key-{i:06d}" for i in range(300)],
            "city": [("Oslo", "Lima", "Pune")[i % 3] for i in range(300)],
            "v": list(range(300)),
        }
    )
    pq.write_table(rows, path, row_group_size=100)
    groups = row_group_rows(str(path))
    got = list(
        read_pieces(
            str(path), groups, start, stop, piece_rows, ["uuid", "city", "v"], ["uuid", "city", "v"]
        )
    )
    assert [p.num_rows for p in got] == [b - a for a, b in pieces(start, stop, piece_rows)]
    for part in got:
        assert pa.types.is_dictionary(part.schema.field("city").type)
        assert part.schema.field("uuid").type == pa.string()  # its dictionary is the column
        assert part.schema.field("v").type == pa.int64()  # not a string
    table = pa.concat_tables(got)
    assert (
        table.column("city").cast(pa.string()).to_pylist()
        == rows.column("city").to_pylist()[start:stop]
    )
    assert table.column("uuid").to_pylist() == rows.column("uuid").to_pylist()[start:stop]
    # Not asked for: plain, as before.
    plain = list(read_pieces(str(path), groups, start, stop, piece_rows, ["city"]))
    assert all(p.schema.field("city").type == pa.string() for p in plain)
