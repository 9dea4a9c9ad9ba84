"""The bounded-memory bucket merge: the same rows as merging the whole bucket, whatever
the chunk size (keys running across chunks, NULL values, one file ending early)."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.errors import RunError
from contest.read.files import merge_bucket, read_bucket
from contest.read.operators import CONTEST_OPERATORS, merge_rows
from contest.read.stream import (
    MIN_READ_BUFFER_BYTES,
    READ_BUFFER_BYTES,
    chunk_rows,
    declares_sorted,
    read_buffer_bytes,
)

SCHEMA = pa.schema(
    [
        ("uuid", pa.string()),
        ("ip", pa.string()),
        ("requests", pa.int64()),
        ("name", pa.string()),
    ]
)
OPS = {k: v for k, v in CONTEST_OPERATORS.items() if k in SCHEMA.names}


def _sorted_file(path, rows, sort=True):
    t = pa.Table.from_pylist(rows, schema=SCHEMA)
    if sort:
        t = t.take(pa.compute.sort_indices(t, [("uuid", "ascending")]))  # stable
    pq.write_table(t, path, sorting_columns=[pq.SortingColumn(0)] if sort else None)
    return str(path)


def _bucket(tmp_path, seed=7, files=5):
    """Files of keys drawn from a small pool: many keys repeat inside a file and
    across files, so runs of one key cross chunk boundaries."""
    rnd = random.Random(seed)
    keys = [f"k{i:03d}" for i in range(40)]
    out = []
    for f in range(files):
        n = rnd.choice([0, 3, 60, 200])
        rows = [
            {
                "uuid": rnd.choice(keys[: 40 if f else 10]),
                "ip": rnd.choice(["a", "b", None]),
                "requests": rnd.choice([1, 5, None]),
                "name": rnd.choice(["n", "null", None, "NULL", ""]),
            }
            for _ in range(n)
        ]
        out.append((_sorted_file(tmp_path / f"f{f}.parquet", rows), f))
    return out


def _by_key(tables):
    rows = pa.concat_tables(list(tables)).to_pylist()
    return sorted(rows, key=lambda r: r["uuid"])


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("budget", [1, 5_000, 1 << 30])
def test_streamed_merge_equals_the_whole_bucket(tmp_path, seed, budget, monkeypatch):
    import contest.read.stream as stream

    monkeypatch.setattr(stream, "MIN_CHUNK_ROWS", 2)  # tiny chunks: keys span many
    files = _bucket(tmp_path, seed)
    whole = merge_rows(read_bucket(files, SCHEMA), ["uuid"], OPS)
    pieces = list(merge_bucket(files, SCHEMA, ["uuid"], OPS, None, budget))
    if budget == 1:
        assert len(pieces) > 1  # it really went window by window
    assert _by_key(pieces) == _by_key([whole])
    keys = [r["uuid"] for r in _by_key(pieces)]
    assert len(keys) == len(set(keys))


def test_files_without_a_sort_order_merge_whole(tmp_path):
    rows = [{"uuid": k, "ip": "x", "requests": 1, "name": "n"} for k in "cab"]
    files = [(_sorted_file(tmp_path / "u.parquet", rows, sort=False), 0)]
    assert not declares_sorted(pq.ParquetFile(files[0][0]).metadata, 0)
    pieces = list(merge_bucket(files, SCHEMA, ["uuid"], OPS, None, 1))
    assert len(pieces) == 1 and sorted(pieces[0].column("uuid").to_pylist()) == ["a", "b", "c"]


def test_a_file_whose_footer_lies_is_an_error(tmp_path):
    t = pa.Table.from_pylist(
        [{"uuid": k, "ip": "x", "requests": 1, "name": "n"} for k in "cab"], schema=SCHEMA
    )
    path = tmp_path / "lie.parquet"
    pq.write_table(t, path, sorting_columns=[pq.SortingColumn(0)])
    with pytest.raises(RunError, match="lie.parquet.*not"):
        list(merge_bucket([(str(path), 0)], SCHEMA, ["uuid"], OPS, None, 1))


def test_chunk_rows_from_the_budget():
    assert chunk_rows(1 << 30, [100.0] * 10) == (1 << 30) // 4000
    assert chunk_rows(1, [100.0]) == 1024
    assert chunk_rows(1 << 40, [1.0]) == 1 << 20


def test_read_buffers_share_the_merge_budget():
    # Few runs: the full buffer. Many runs (100 x 9 columns): the budget's share, so
    # 1 GiB of buffers rather than 100 x 9 x 8 MiB = 7 GiB; never below a page's size.
    assert read_buffer_bytes(1 << 30, 12, 9) == READ_BUFFER_BYTES
    share = read_buffer_bytes(1 << 30, 100, 9)
    assert share == (1 << 30) // (100 * 9)
    assert 100 * 9 * share <= 1 << 30
    assert read_buffer_bytes(1 << 30, 130, 9) == MIN_READ_BUFFER_BYTES
    assert read_buffer_bytes(1 << 30, 130, 9, fixed=4 << 20) == 4 << 20  # read.buffer_bytes


_MEMORY_PROBE = """
import sys
import pyarrow.parquet as pq
from contest.read.files import merge_bucket
from contest.read.operators import CONTEST_OPERATORS
from contest.infra.proc import own_peak_rss as peak
files = [(p, i) for i, p in enumerate(sys.argv[1:])]
schema = pq.ParquetFile(files[0][0]).schema_arrow
ops = {k: v for k, v in CONTEST_OPERATORS.items() if k in schema.names}
before = peak()
# Buffers of 1 MiB per file and column: small beside the files.
merged = merge_bucket(files, schema, ["uuid"], ops, None, 4 << 20, "numpy", 1 << 20)
rows = sum(t.num_rows for t in merged)
print(rows, before, peak())
"""


def test_a_streamed_merge_does_not_hold_whole_files(tmp_path):
    """Files of one row group each, as the write makes them: the merge's memory follows
    its budget, not the files' size (pyarrow unbuffered would read whole column chunks)."""
    import subprocess
    import sys

    n, paths = 400_000, []
    for f in range(8):
        keys = pa.array([f"{f}-{i:034d}" for i in range(n)])  # sorted, 36 characters
        t = pa.table(
            {
                "uuid": keys,
                "ip": pa.array(["10.0.0.1"] * n),
                "requests": pa.array(range(n), pa.int64()),
                "name": keys,
            }
        )
        path = tmp_path / f"g{f}.parquet"
        pq.write_table(
            t, path, compression="NONE", row_group_size=n, sorting_columns=[pq.SortingColumn(0)]
        )
        paths.append(str(path))
    file_bytes = sum((tmp_path / p).stat().st_size for p in paths)
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, *paths], capture_output=True, text=True, check=True
    )
    rows, before, after = map(int, out.stdout.split())
    grown = after - before
    assert rows == 8 * n
    assert grown < file_bytes / 2, f"merge grew by {grown:,} bytes for {file_bytes:,} of files"


@pytest.mark.parametrize(
    "name_op", ["UseLast", "UseLastNotNull", "UseLastNotNullNorNullString", "FirstNotNull"]
)
def test_dictionary_reads_merge_as_the_strings_they_stand_for(tmp_path, name_op):
    """With `dictionaries`, columns stored as small dictionaries and picked by their
    operator are read, merged and handed on as dictionaries: the same rows as a merge
    of strings. One file holds `name` with many values (read as strings): its windows
    decode the others' dictionaries."""
    from contest.data.dictionaries import dictionary_columns

    rnd = random.Random(11)
    keys = [f"k{i:05d}" for i in range(3000)]
    files = []
    for f in range(4):
        names = ["n", "null", None, "NULL", "", "m"] if f != 2 else None
        rows = [
            {
                "uuid": rnd.choice(keys),
                "ip": f"10.{rnd.randrange(256)}.{rnd.randrange(256)}.{i}",
                "requests": rnd.choice([1, 5, None]),
                "name": rnd.choice(names) if names else f"name-{f}-{i}",
            }
            for i in range(4000)
        ]
        files.append((_sorted_file(tmp_path / f"f{f}.parquet", rows), f))
    stored = [dictionary_columns(pq.read_metadata(p), SCHEMA.names) for p, _ in files]
    assert stored == [["name"], ["name"], [], ["name"]]
    ops = {**OPS, "name": name_op}
    plain = list(merge_bucket(files, SCHEMA, ["uuid"], ops, None, 50_000))
    kept = list(merge_bucket(files, SCHEMA, ["uuid"], ops, None, 50_000, dictionaries=True))
    assert all(p.schema == merge_rows(SCHEMA.empty_table(), ["uuid"], ops).schema for p in plain)
    assert {str(p.schema.field("name").type) for p in kept} >= {"string"}  # mixed windows
    windows_of_two = merge_bucket(files[:2], SCHEMA, ["uuid"], ops, None, 50_000, dictionaries=True)
    assert {p.schema.field("name").type for p in windows_of_two} == {
        pa.dictionary(pa.int32(), pa.string())
    }
    want = plain[0].schema
    assert _by_key(p.cast(want) for p in kept) == _by_key(plain)


@pytest.mark.parametrize("chunks", [1, 3])
def test_count_below_is_the_count_of_smaller_keys(chunks):
    """The binary search against a comparison of every key: repeats, the ends, keys
    absent, strings of other lengths and beyond ASCII (UTF-8's byte order)."""
    from contest.read.stream import count_below

    rnd = random.Random(chunks)
    keys = sorted(rnd.choice(["a", "ab", "b", "bb", "é", "z", "\u4e2d", "k"]) for _ in range(60))
    step = len(keys) // chunks
    arr = pa.chunked_array([keys[i : i + step] for i in range(0, len(keys), step)], pa.string())
    for cutoff in ["", "a", "aa", "ab", "b", "c", "é", "zz", "\u4e2d", "\uffff"]:
        want = pc_less_count(arr, cutoff)
        assert count_below(arr, cutoff) == want == sum(k < cutoff for k in keys)
    ints = pa.array([1, 1, 2, 5, 5, 5, 9])
    assert [count_below(ints, c) for c in (0, 1, 2, 5, 6, 10)] == [0, 0, 2, 3, 6, 7]


def pc_less_count(arr, cutoff):
    return int(pa.compute.sum(pa.compute.less(arr, pa.scalar(cutoff, arr.type))).as_py() or 0)
