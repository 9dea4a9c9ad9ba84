"""The big batch written without Spark's row shuffle (write.shuffle = "arrow"): tasks read
row ranges with pyarrow and write sorted bucket files. Against real Spark, PostgreSQL
and the oracle, next to the Spark shuffle, on one and several row groups, keys repeated
across the ranges, and NULL keys."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.data.batches import SCHEMA
from contest.write.job import WriteMode
from meta.commits import head_snapshot
from tests.support.pipeline import generated, merge_and_read, oracle, with_write, write

# 5,000-row base-0 at this scale: 1,000 rows a part makes five parts.
SPLIT = {"task_rows": 1000, "big_file_bytes": 0}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return generated(tmp_path_factory, "splitdata", 0.0005, 5)


def _regroup(data: Path, dest: Path, sizes: list[int] | None, n: int = 3) -> Path:
    """The first `n` batches, base-0 rewritten in row groups of `sizes` rows."""
    dest.mkdir()
    for i in range(n):
        shutil.copy(data / f"base-{i}.parquet", dest / f"base-{i}.parquet")
    if sizes:
        rows = pq.read_table(data / "base-0.parquet")
        assert sum(sizes) == rows.num_rows
        with pq.ParquetWriter(dest / "base-0.parquet", rows.schema) as writer:
            pos = 0
            for size in sizes:
                writer.write_table(rows.slice(pos, size), row_group_size=size)
                pos += size
    return dest


def _base0_files(pg, table) -> list:
    _, commits = head_snapshot(pg, table)
    return next(c for c in commits if c.version == 0).files


@pytest.mark.parametrize(
    "groups",
    [None, [300] * 16 + [200], [4000, 1000], [1700, 1700, 1600]],
    ids=["one-group", "small-groups", "unequal-groups", "three-groups"],
)
@pytest.mark.parametrize("file_dictionaries", [False, True], ids=["plain", "file-dicts"])
def test_arrow_split_equals_the_oracle(spark, pg, cfg, data, tmp_path, groups, file_dictionaries):
    d = _regroup(data, tmp_path / "d", groups)
    settings = {"shuffle": "arrow", "file_dictionaries": file_dictionaries, **SPLIT}
    report, table = write(spark, pg, with_write(cfg, **settings), d, tmp_path / "t")
    assert report.ok
    assert not any(b.shuffled for b in report.batches)  # no Exchange anywhere
    base0 = _base0_files(pg, table)
    assert next(b.rows for b in report.batches if b.batch == "base-0.parquet") == 5000
    # Written in parts: a bucket has a file from several of them in base-0's commit.
    per_bucket = max(sum(1 for f in base0 if f.bucket == b) for b in {f.bucket for f in base0})
    assert per_bucket >= 2
    for f in base0:
        keys = pq.read_table(f.path.removeprefix("file://"), columns=["uuid"])["uuid"]
        assert keys.to_pylist() == sorted(keys.to_pylist())
    assert merge_and_read(spark, pg, cfg, table) == oracle(d)


@pytest.mark.parametrize("groups", [None, [1700, 1700, 1600]], ids=["one-group", "three-groups"])
def test_row_groups_read_once_and_decoded_on_threads_equal_the_oracle(
    spark, pg, cfg, data, tmp_path, groups
):
    """write.cut_row_groups off (a row group bigger than a part read once by one task,
    written in the same pieces) and write.decode_threads on (row groups decoded together
    on pyarrow's threads): the same bucket files' worth of pieces, the same result."""
    d = _regroup(data, tmp_path / "d", groups)
    settings = {"shuffle": "arrow", "cut_row_groups": False, "decode_threads": True, **SPLIT}
    report, table = write(spark, pg, with_write(cfg, **settings), d, tmp_path / "t")
    assert report.ok
    base0 = _base0_files(pg, table)
    per_bucket = max(sum(1 for f in base0 if f.bucket == b) for b in {f.bucket for f in base0})
    assert per_bucket >= 2  # still written in pieces
    assert merge_and_read(spark, pg, cfg, table) == oracle(d)


def test_the_spark_shuffle_follows_the_rows_too(spark, pg, cfg, data, tmp_path):
    d = _regroup(data, tmp_path / "d", None)
    report, table = write(spark, pg, with_write(cfg, shuffle="spark", **SPLIT), d, tmp_path / "t")
    assert report.ok
    assert {b.batch for b in report.batches if b.shuffled} == {"base-0.parquet"}
    # Five parts of ~1,000 rows (not write.repartition's 8): at most 5 files a bucket.
    base0 = _base0_files(pg, table)
    assert max(sum(1 for f in base0 if f.bucket == b) for b in range(4)) <= 5
    assert merge_and_read(spark, pg, cfg, table) == oracle(d)


def _repeated_keys(folder: Path, rows: int, keys: int) -> Path:
    """base-0: `keys` keys, each in every round of `keys` rows through the whole file,
    the values telling the row (ip: the last non-NULL wins, NULL in some rounds; name:
    the last neither NULL nor "null"; city: NULL in the last round; requests: summed);
    base-1 and base-2: small updates of keys 30 to 44."""
    folder.mkdir()

    def name(i: int) -> str | None:
        return {4: "null", 3: None}.get((i // keys) % 5, f"n-{i}")

    big = {
        "uuid": [f"key-{i % keys:04d}" for i in range(rows)],
        "ip": [None if (i // keys) % 4 == 3 else f"ip-{i}" for i in range(rows)],
        "hostname": [f"h-{i}" for i in range(rows)],
        "requests": list(range(rows)),
        "name": [name(i) for i in range(rows)],
        "city": [None if i >= rows - keys else f"c-{i}" for i in range(rows)],
        "job": [f"j-{i}" for i in range(rows)],
        "phonenum": [f"p-{i}" for i in range(rows)],
    }
    pq.write_table(pa.table(big, schema=SCHEMA), folder / "base-0.parquet")
    for b in (1, 2):
        small = {c: v[30 + b * 1000 : 45 + b * 1000] for c, v in big.items()}
        pq.write_table(pa.table(small, schema=SCHEMA), folder / f"base-{b}.parquet")
    return folder


@pytest.mark.parametrize("shuffle", ["arrow", "spark", "pieces"])
def test_a_keys_rows_across_parts_apply_in_file_order(spark, pg, cfg, tmp_path, shuffle):
    """ "pieces": base-0 is not big (no part split) but its one row group holds more
    than write.batch_piece_rows rows, so its task writes it in pieces (scale 10's
    later batches), with the same order to keep."""
    d = _repeated_keys(tmp_path / "d", 6000, 50)
    if shuffle == "pieces":
        cfg = with_write(cfg, batch_piece_rows=700, big_file_bytes=1 << 40)
    else:
        cfg = with_write(cfg, shuffle=shuffle, task_rows=700, big_file_bytes=1 << 16)
    report, table = write(spark, pg, cfg, d, tmp_path / "t")
    assert report.ok
    assert {b.batch for b in report.batches if b.shuffled} == (
        {"base-0.parquet"} if shuffle == "spark" else set()
    )
    # Each key's rows are in every part: base-0's commit holds a bucket's key in
    # several files, and only their order gives the last ip, city and name.
    base0 = _base0_files(pg, table)
    assert len(base0) > 4
    if shuffle == "pieces":  # 6000 rows in 9 pieces of at most 700, 4 buckets each
        assert next(b.parts for b in report.batches if b.batch == "base-0.parquet") == 9
        assert len(base0) == 36
    got = merge_and_read(spark, pg, cfg, table)
    assert got == oracle(d)
    last = {r["uuid"]: r for r in got}["key-0001"]  # rows 1, 51, ..., 5951 of base-0
    assert (last["ip"], last["city"], last["name"]) == ("ip-5901", "c-5901", "n-5851")
    assert last["requests"] == sum(range(1, 6000, 50))


def test_small_row_groups_are_packed_into_tasks_of_piece_rows(spark, pg, cfg, tmp_path):
    """pyarrow's defaults write 1Mi-row groups: one task (a file per bucket) each made
    scale 10's buckets 280 sorted runs for the read. Consecutive row groups are packed
    up to write.batch_piece_rows, in file order, and the result is still exact."""
    d = _repeated_keys(tmp_path / "d", 6000, 50)
    rows = pq.read_table(d / "base-0.parquet")
    pq.write_table(rows, d / "base-0.parquet", row_group_size=500)  # 12 row groups
    cfg = with_write(cfg, batch_piece_rows=2000, big_file_bytes=1 << 40)
    report, table = write(spark, pg, cfg, d, tmp_path / "t")
    assert report.ok
    # 3 tasks of 4 row groups, a file per bucket each (not 12 tasks, 48 files).
    assert len(_base0_files(pg, table)) == 3 * 4
    got = merge_and_read(spark, pg, cfg, table)
    assert got == oracle(d)
    last = {r["uuid"]: r for r in got}["key-0001"]  # rows 1, 51, ..., 5951 of base-0
    assert (last["ip"], last["city"], last["name"]) == ("ip-5901", "c-5901", "n-5851")


@pytest.mark.parametrize("shuffle", ["arrow", "spark"])
def test_null_uuids_in_the_big_batch_as_today(spark, pg, cfg, data, tmp_path, shuffle):
    d = _regroup(data, tmp_path / "d", [2500, 2500])
    rows = pq.read_table(d / "base-0.parquet")
    keys = rows.column("uuid").to_pylist()
    for i in (0, 2499, 2500, 4999):  # one in each row group's first and last rows
        keys[i] = None
    pq.write_table(
        rows.set_column(0, "uuid", pa.array(keys, pa.string())),
        d / "base-0.parquet",
        row_group_size=2500,
    )
    cfg = with_write(cfg, shuffle=shuffle, **SPLIT)
    report, table = write(spark, pg, cfg, d, tmp_path / "t")
    err = next(b.error for b in report.batches if b.batch == "base-0.parquet")
    assert "base-0.parquet: 4 row(s) with a NULL uuid" in err
    _, commits = head_snapshot(pg, table)
    assert sorted(c.version for c in commits) == [1, 2]
    live = {f.path.removeprefix("file://") for c in commits for f in c.files}
    assert {str(p) for p in (tmp_path / "t").glob("*.parquet")} == live  # none left behind
    report, table = write(spark, pg, with_write(cfg, drop_null_keys=True), d, tmp_path / "t")
    assert report.ok and sum(b.null_keys_dropped for b in report.batches) == 4
    clean = tmp_path / "clean"
    shutil.copytree(d, clean)
    pq.write_table(rows.filter(pa.array([k is not None for k in keys])), clean / "base-0.parquet")
    assert merge_and_read(spark, pg, cfg, table) == oracle(clean)


def test_stored_key_words_read_back_exact_alone_and_mixed(spark, pg, cfg, data, tmp_path):
    """write.key_words: every bucket file carries its keys' 128 bits beside them (the
    read groups by those), pieces and parts alike; a table whose later batch was written
    without them (a bucket of mixed files: parsed as before) reads back exact too."""
    import numpy as np

    from contest.data.uuid_keys import WORD_COLUMNS, uuid_words

    d = _regroup(data, tmp_path / "d", None)
    on = with_write(cfg, key_words=True, batch_piece_rows=300, **SPLIT)
    report, table = write(spark, pg, on, d, tmp_path / "t")
    assert report.ok
    _, commits = head_snapshot(pg, table)
    for f in (f for c in commits for f in c.files):
        got = pq.read_table(f.path.removeprefix("file://"))
        assert got.column_names[-2:] == list(WORD_COLUMNS)
        hi, lo = uuid_words(got.column("uuid"))
        assert np.array_equal(got.column(WORD_COLUMNS[0]).to_numpy().view(np.uint64), hi)
        assert np.array_equal(got.column(WORD_COLUMNS[1]).to_numpy().view(np.uint64), lo)
    assert merge_and_read(spark, pg, cfg, table) == oracle(d)
    # base-2 again without words, as version 3: every bucket mixes both kinds of file.
    shutil.copy(d / "base-2.parquet", d / "base-3.parquet")
    off = with_write(cfg, key_words=False, **SPLIT)
    report, table = write(spark, pg, off, d, tmp_path / "t", mode=WriteMode.APPEND, indices=[3])
    assert report.ok
    assert merge_and_read(spark, pg, cfg, table) == oracle(d)
