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
from contest.write.order import bucket_key_order


def _uuids(rnd: random.Random, n: int) -> list[str]:
    return [str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(n)]


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("shuffled", [False, True])
def test_uuid128_order_equals_the_arrow_order(seed, shuffled, monkeypatch):
    import contest.data.uuid_keys as uuid_keys

    monkeypatch.setattr(uuid_keys, "PARSE_ROWS", 7)  # many parse blocks
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
