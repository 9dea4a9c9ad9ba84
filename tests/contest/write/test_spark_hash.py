"""Spark's hash computed in numpy equals Spark's own, so buckets match LakeSoul's."""

import random
import string
import uuid

import pyarrow as pa
import pytest

from contest.write.spark_hash import buckets, hash_strings


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
