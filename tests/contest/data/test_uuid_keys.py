"""Canonical UUID keys as two uint64 words: exactly the strings' order, and None for
anything else (the callers then take their string path)."""

from __future__ import annotations

import random
import uuid

import numpy as np
import pyarrow as pa
import pytest

from contest.data.uuid_keys import uuid_order, uuid_words


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
        # Each side of the digit and letter ranges ('/' ':' '`' 'g'), a dash where a
        # digit goes, a byte with bit 6 set that is not a letter ('A' - 1 + 64 = DEL).
        *[[f"0f000000-0000-0000-0000-00000000000{c}"] for c in "/:`-\x7f"],
        ["0f00000/-0000-0000-0000-000000000000"],
        ["0f000000_0000-0000-0000-000000000000"],  # no dash
        ["0f000000-0000-0000-0000-000000000000", None],
        ["k1"],
    ],
)
def test_anything_but_canonical_uuids_has_no_words(keys):
    assert uuid_words(pa.array(keys, pa.string())) is None


def test_a_bad_key_in_a_later_parse_block_has_no_words(monkeypatch):
    import contest.data.uuid_keys as uuid_keys

    monkeypatch.setattr(uuid_keys, "PARSE_ROWS", 4)
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


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("shuffled", [False, True])
def test_uuid_order_is_a_stable_sort_on_bucket_high_low_pos(seed, shuffled):
    """Against numpy's lexsort on every word: few distinct high words (many groups of
    equal prefixes, some of one key, some not), repeats, buckets, shuffle positions."""
    rng = np.random.default_rng(seed)
    n = 5000
    high = rng.choice(rng.integers(0, 2**64 - 1, 40, dtype=np.uint64), n)
    high[::3] = rng.integers(0, 2**64 - 1, len(high[::3]), dtype=np.uint64)
    low = rng.integers(0, 4, n).astype(np.uint64) << np.uint64(60)
    buckets = rng.integers(0, 8, n).astype(np.int32)
    pos = rng.integers(0, 50, n).astype(np.int64) if shuffled else None
    rows = np.arange(n)
    keys = [rows, low, high, buckets] if pos is None else [rows, pos, low, high, buckets]
    want = np.lexsort(keys)
    assert uuid_order(buckets, high, low, pos).tolist() == want.tolist()
