"""Every per-bucket merge engine (read.merge) is exact: the contract's cases, and random
buckets of real sorted files against the numpy reference, whole and window by window."""

from __future__ import annotations

import random
import uuid

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from contest.config import READ_MERGES, load_config
from contest.data.batches import SCHEMA as BATCH_SCHEMA
from contest.errors import ConfigError
from contest.read.files import merge_bucket
from contest.read.merges import merge_parts
from contest.read.operators import CONTEST_OPERATORS, MergeOperatorError
from tests.support.contract_cases import CASES

SCHEMA = pa.schema(
    [
        ("uuid", pa.string()),
        ("ip", pa.string()),
        ("requests", pa.int32()),
        ("name", pa.string()),
        ("city", pa.string()),
    ]
)
OPS = {k: v for k, v in CONTEST_OPERATORS.items() if k in SCHEMA.names}


def _bucket_file(path, table: pa.Table) -> tuple[str, bool]:
    """A bucket file as the write makes it: stably sorted by key, the footer says so."""
    table = table.take(pc.sort_indices(table, [("uuid", "ascending")]))
    pq.write_table(table, path, sorting_columns=[pq.SortingColumn(0)])
    return str(path)


def _by_key(tables) -> list[dict]:
    rows = pa.concat_tables(list(tables)).to_pylist()
    return sorted(rows, key=lambda r: r["uuid"])


@pytest.mark.parametrize("method", READ_MERGES)
@pytest.mark.parametrize("memory", [0, 1 << 30])
@pytest.mark.parametrize("name", sorted(CASES))
def test_contract_cases_for_every_engine(tmp_path, name, memory, method):
    case = CASES[name]
    versions = case.get("versions") or {i: i for i in range(len(case["batches"]))}
    order = sorted(range(len(case["batches"])), key=lambda i: versions[i])
    files = [
        (
            _bucket_file(
                tmp_path / f"b{i}.parquet",
                pa.Table.from_pylist(case["batches"][i], schema=BATCH_SCHEMA),
            ),
            versions[i],
        )
        for i in order
    ]
    schema = pa.schema([f.with_nullable(True) for f in BATCH_SCHEMA])
    pieces = list(merge_bucket(files, schema, ["uuid"], CONTEST_OPERATORS, None, memory, method))
    assert _by_key(pieces) == case["expected"]


def _random_files(
    tmp_path, seed: int, files: int = 6, uuids: bool = False
) -> list[tuple[str, int]]:
    """Keys from a small pool, repeated inside and across files; every kind of NULL and
    null-like string; int32 requests near the top (the sum is int64). `uuids`: canonical
    UUID keys (the numpy merge groups them as integers), some sharing their first 64 or
    127 bits."""
    rnd = random.Random(seed)
    pool = [f"{rnd.getrandbits(64):016x}" for _ in range(60)]
    if uuids:
        pool = [str(uuid.UUID(int=rnd.getrandbits(128))) for _ in range(57)]
        pool += [pool[0][:19] + "0000-000000000000", pool[0][:19] + "0000-000000000001"]
        pool += [pool[0][:35] + ("0" if pool[0][35] != "0" else "1")]
    out = []
    for f in range(files):
        n = rnd.choice([0, 1, 40, 300])
        rows = [
            {
                "uuid": rnd.choice(pool[: 60 if f else 15]),
                "ip": rnd.choice(["a", "b", None]),
                "requests": rnd.choice([1, 2**31 - 1, None]),
                "name": rnd.choice(["n", "m", "null", None, "NULL", ""]),
                "city": rnd.choice([None, "c", "d"]),
            }
            for _ in range(n)
        ]
        table = pa.Table.from_pylist(rows, schema=SCHEMA)
        out.append((_bucket_file(tmp_path / f"r{f}.parquet", table), f))
    return out


@pytest.mark.parametrize("method", [m for m in READ_MERGES if m != "numpy"])
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
@pytest.mark.parametrize("memory", [0, 1, 1 << 30])
@pytest.mark.parametrize("uuids", [False, True])
def test_random_buckets_equal_the_numpy_merge(tmp_path, monkeypatch, method, seed, memory, uuids):
    import contest.read.stream as stream

    monkeypatch.setattr(stream, "MIN_CHUNK_ROWS", 3)  # memory 1: many small windows
    files = _random_files(tmp_path, seed, uuids=uuids)
    reference = _by_key(merge_bucket(files, SCHEMA, ["uuid"], OPS, None, memory, "numpy"))
    pieces = list(merge_bucket(files, SCHEMA, ["uuid"], OPS, None, memory, method))
    assert all(p.schema == pieces[0].schema for p in pieces)
    assert pieces[0].schema.field("requests").type == pa.int64()
    got = _by_key(pieces)
    assert got == reference
    assert len({r["uuid"] for r in got}) == len(got) > 0


@pytest.mark.parametrize("method", READ_MERGES)
def test_every_operator_and_a_compound_key(method):
    parts = [
        pa.table(
            {
                "k1": ["a", "a", "b"],
                "k2": [1, 1, 2],
                "s": pa.array([1.5, None, None]),
                "last": ["x", None, "y"],
                "nn": ["x", "y", None],
            }
        ),
        pa.table(
            {
                "k1": ["a", "b"],
                "k2": [1, 2],
                "s": pa.array([2.0, None]),
                "last": [None, "z"],
                "nn": pa.array([None, None], pa.string()),
            }
        ),
    ]
    ops = {"s": "SumAll", "nn": "UseLastNotNull"}
    out = merge_parts(method, parts, ["k1", "k2"], ops)
    assert sorted(out.to_pylist(), key=lambda r: r["k1"]) == [
        {"k1": "a", "k2": 1, "s": 3.5, "last": None, "nn": "y"},
        {"k1": "b", "k2": 2, "s": None, "last": "z", "nn": None},
    ]


@pytest.mark.parametrize("method", READ_MERGES)
def test_an_empty_bucket_and_bad_operators(method):
    empty = SCHEMA.empty_table()
    out = merge_parts(method, [empty], ["uuid"], OPS)
    assert out.num_rows == 0 and out.schema.field("requests").type == pa.int64()
    with pytest.raises(MergeOperatorError, match="'ip'.*numeric"):
        merge_parts(method, [empty], ["uuid"], {"ip": "SumAll"})


def test_an_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="read.merge 'pandas'"):
        merge_parts("pandas", [SCHEMA.empty_table()], ["uuid"], OPS)
    with pytest.raises(ConfigError, match="read.merge: 'pandas'"):
        load_config(env={}, overrides={"read.merge": "pandas"})
