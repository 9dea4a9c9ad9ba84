"""Spark's hash computed in numpy equals Spark's own, so buckets match LakeSoul's."""

import random
import string
import uuid

import pyarrow as pa
import pytest

from contest.write.spark_hash import buckets, hash_columns, hash_strings, key_buckets


@pytest.mark.parametrize("block_rows", [1 << 16, 7])
def test_hash_equals_sparks_on_every_length_and_utf8(spark, block_rows, monkeypatch):
    from pyspark.sql import functions as F

    import contest.write.spark_hash as spark_hash

    monkeypatch.setattr(spark_hash, "HASH_ROWS", block_rows)  # 7: many blocks a length

    rng = random.Random(3)
    alphabet = string.printable + "éü中日本"
    values = ["", "a", "ab", "abc", "abcd", "abcde", "héllo", "日本語テキスト"] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 70))) for _ in range(3000)
    ]
    # Keys of one byte length take the matrix path: UUIDs (36, whole words), 7 bytes
    # (a 3-byte tail), and a slice of such an array (its data starts at an offset).
    uuids = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(500)]
    sevens = ["".join(rng.choice(string.ascii_letters) for _ in range(7)) for _ in range(300)]
    for batch in (values, uuids, sevens):
        rows = (
            spark.createDataFrame([(v,) for v in batch], "k string")
            .select(
                "k",
                F.hash("k").alias("h"),
                F.expr("pmod(hash(k), 8)").alias("b"),  # a power of two: the low bits
                F.expr("pmod(hash(k), 6)").alias("b6"),
            )
            .collect()
        )
        keys = pa.array([r["k"] for r in rows])
        assert hash_strings(keys).tolist() == [r["h"] for r in rows]
        assert buckets(keys, 8).tolist() == [r["b"] for r in rows]
        assert buckets(keys, 6).tolist() == [r["b6"] for r in rows]
        assert hash_strings(keys.slice(5)).tolist() == [r["h"] for r in rows][5:]


def test_chunked_and_sliced_arrays():
    arr = pa.chunked_array([["x", "yy"], ["zzz"]])
    assert hash_strings(arr).tolist() == hash_strings(pa.array(["x", "yy", "zzz"])).tolist()
    sliced = pa.array(["skip", "x", "yy"]).slice(1)
    assert hash_strings(sliced).tolist() == hash_strings(pa.array(["x", "yy"])).tolist()
    with pytest.raises(ValueError, match="NULL"):
        hash_strings(pa.array(["a", None]))


def test_composite_int_and_binary_keys_hash_and_bucket_as_spark_does(spark):
    """hash(c1, c2) of string, int32, int64 and binary key columns, and its pmod into
    buckets, equal Spark's own (LakeSoul's hash partitioning)."""
    from pyspark.sql import functions as F

    rng = random.Random(5)
    ints = [0, 1, -1, 2**31 - 1, -(2**31)] + [rng.randint(-(2**31), 2**31 - 1) for _ in range(300)]
    longs = [0, -1, 2**63 - 1, -(2**63)] + [rng.randint(-(2**63), 2**63 - 1) for _ in range(301)]
    texts = ["", "t", "tenant-é"] + [
        "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(0, 20)))
        for _ in range(302)
    ]
    blobs = [bytes(16), bytes(range(16))] + [rng.randbytes(16) for _ in range(303)]
    rows = list(zip(texts, ints, longs, blobs, strict=True))
    df = spark.createDataFrame(rows, "s string, i int, l bigint, b binary")
    pairs = {
        "i": ["i"],
        "l": ["l"],
        "b": ["b"],
        "s,i": ["s", "i"],
        "i,l": ["i", "l"],
        "b,s": ["b", "s"],
        "l,b": ["l", "b"],
    }
    exprs = [F.expr(f"hash({k})").alias(f"h_{n}") for n, k in enumerate(pairs)]
    exprs += [F.expr(f"pmod(hash({k}), 6)").alias(f"p_{n}") for n, k in enumerate(pairs)]
    got = df.select(*exprs).collect()
    arrow = pa.table(
        {
            "s": pa.array(texts),
            "i": pa.array(ints, pa.int32()),
            "l": pa.array(longs, pa.int64()),
            "b": pa.array(blobs, pa.binary(16)),
        }
    )
    for n, cols in enumerate(pairs.values()):
        columns = [arrow.column(c) for c in cols]
        assert hash_columns(columns).tolist() == [r[f"h_{n}"] for r in got], cols
        assert key_buckets(columns, 6).tolist() == [r[f"p_{n}"] for r in got], cols
    # One string column: the contest's buckets exactly.
    assert key_buckets([arrow.column("s")], 8).tolist() == buckets(arrow.column("s"), 8).tolist()
