"""write.sort: the uuid128 order is the arrow order, row for row, on UUID keys (with
repeated keys, shared 64-bit prefixes and shuffle positions), and falls back to it on
anything else; the bucket files written either way are the same bytes' worth of rows."""

from __future__ import annotations

import random
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.write.files import BUCKET_COL, POS_COL, write_bucket_files
from contest.write.order import bucket_key_order, uuid_words


def _uuids(rnd: random.Random, n: int) -> list[str]:
    return [str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(n)]


def test_uuid_words_order_is_the_string_order():
    rnd = random.Random(5)
    keys = _uuids(rnd, 500) + ["00000000-0000-0000-0000-000000000000"]
    keys += ["ffffffff-ffff-ffff-ffff-ffffffffffff", "0f000000-0000-0000-0000-00000000000a"]
    words = uuid_words(pa.array(keys))
    assert words is not None
    as_ints = [(int(h) << 64) | int(lo) for h, lo in zip(*words, strict=True)]
    assert as_ints == [uuid.UUID(k).int for k in keys]
    assert sorted(range(len(keys)), key=lambda i: keys[i]) == sorted(
        range(len(keys)), key=lambda i: as_ints[i]
    )


@pytest.mark.parametrize(
    "keys",
    [
        ["0f000000-0000-0000-0000-00000000000A"],  # upper case: another byte order
        ["0f000000-0000-0000-0000-00000000000"],  # 35 characters
        ["0f000000-0000-0000-0000-00000000000g"],  # not hex
        ["0f000000_0000-0000-0000-000000000000"],  # no dash
        ["0f000000-0000-0000-0000-000000000000", None],
        ["k1"],
    ],
)
def test_anything_but_canonical_uuids_has_no_words(keys):
    assert uuid_words(pa.array(keys, pa.string())) is None


def test_a_bad_key_in_a_later_parse_block_has_no_words(monkeypatch):
    import contest.write.order as order

    monkeypatch.setattr(order, "PARSE_ROWS", 4)
    keys = _uuids(random.Random(2), 9)
    assert uuid_words(pa.array(keys)) is not None
    keys[7] = keys[7].upper()
    assert uuid_words(pa.array(keys)) is None


def test_a_sliced_large_string_array_parses_from_its_offset():
    keys = _uuids(random.Random(1), 10)
    words = uuid_words(pa.array(keys, pa.large_string()).slice(3, 4))
    assert words is not None
    assert [(int(h) << 64) | int(lo) for h, lo in zip(*words, strict=True)] == [
        uuid.UUID(k).int for k in keys[3:7]
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("shuffled", [False, True])
def test_uuid128_order_equals_the_arrow_order(seed, shuffled, monkeypatch):
    import contest.write.order as order

    monkeypatch.setattr(order, "PARSE_ROWS", 7)  # many parse blocks
    rnd = random.Random(seed)
    pool = _uuids(rnd, 300)
    # keys sharing their first 64 bits (or all but the bucket's bits of them)
    twin = pool[0][:19] + "0000-000000000000"
    pool += [twin, pool[0][:19] + "ffff-ffffffffffff", pool[1][:17] + "00-000000000000"]
    keys = [rnd.choice(pool) for _ in range(3000)]  # many repeats
    table = pa.table({"uuid": keys})
    bucket_ids = np.array([rnd.randrange(1000) for _ in keys], dtype=np.int32)
    pos = np.array(rnd.sample(range(10**6), len(keys)), dtype=np.int64) if shuffled else None
    want = bucket_key_order(table, ["uuid"], bucket_ids, pos, "arrow")
    got = bucket_key_order(table, ["uuid"], bucket_ids, pos, "uuid128")
    assert got.tolist() == want.tolist()


def test_other_keys_fall_back_to_the_arrow_order():
    table = pa.table({"uuid": ["b", "a", "b", "c", "a"]})
    bucket_ids = np.array([1, 0, 1, 0, 0], dtype=np.int32)
    got = bucket_key_order(table, ["uuid"], bucket_ids, None, "uuid128")
    assert got.tolist() == [1, 4, 3, 0, 2]
    compound = pa.table({"a": ["x", "x", "w"], "b": [2, 1, 5]})
    got = bucket_key_order(compound, ["a", "b"], np.zeros(3, np.int32), None, "uuid128")
    assert got.tolist() == [2, 1, 0]


def test_bucket_files_are_the_same_rows_either_way(tmp_path):
    rnd = random.Random(9)
    pool = _uuids(rnd, 50)
    n = 400
    table = pa.table(
        {
            "uuid": [rnd.choice(pool) for _ in range(n)],
            "requests": pa.array(range(n), pa.int64()),
            BUCKET_COL: pa.array([rnd.randrange(4) for _ in range(n)], pa.int32()),
            POS_COL: pa.array(rnd.sample(range(n), n), pa.int64()),
        }
    )
    schema = pa.schema([("uuid", pa.string()), ("requests", pa.int64())])
    out = {}
    for sort in ("arrow", "uuid128"):
        files = write_bucket_files(table, str(tmp_path / sort), ["uuid"], schema, sort=sort)
        out[sort] = {f["bucket"]: pq.read_table(f["path"]).to_pylist() for f in files}
    assert out["arrow"] == out["uuid128"] and len(out["arrow"]) == 4
