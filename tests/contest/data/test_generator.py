"""The generator: exact counts, contest file properties, determinism."""

import hashlib

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from contest.data.batches import SCHEMA, discover
from contest.data.generator import generate


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen")
    return generate(out, 0.002, seed=7, progress=False)


def test_counts(small):
    assert small.rows == 60_000
    assert small.distinct_keys == 40_000
    uuids = pc.unique(
        pa.concat_arrays(
            [pq.read_table(f, columns=["uuid"]).column(0).combine_chunks() for f in small.files]
        )
    )
    assert len(uuids) == 40_000
    assert all(len(u) == 36 and u[14] == "4" for u in uuids.to_pylist()[:1000])


def test_contest_file_properties(small):
    batches = discover(small.files[0].parent)
    assert [b.rows for b in batches] == [20_000] + [4_000] * 10
    for f in small.files:
        meta = pq.ParquetFile(f).metadata
        assert meta.num_row_groups == 1
        assert {meta.row_group(0).column(i).compression for i in range(8)} == {"UNCOMPRESSED"}
        assert meta.schema.to_arrow_schema().equals(SCHEMA)


def test_updates_hit_every_earlier_batch_and_null_names_exist(small):
    tables = [pq.read_table(f) for f in small.files]
    first_seen = {}
    for i, t in enumerate(tables):
        for u in t.column("uuid").to_pylist():
            first_seen.setdefault(u, i)
    hit = {first_seen[u] for u in tables[10].column("uuid").to_pylist() if first_seen[u] < 10}
    assert hit == set(range(10))
    assert any("null" in t.column("name").to_pylist() for t in tables[1:])
    assert all(t.column(c).null_count == 0 for t in tables for c in SCHEMA.names)


def test_same_scale_and_seed_same_bytes(tmp_path, small):
    again = generate(tmp_path, 0.002, seed=7, progress=False)
    digest = [hashlib.sha256(p.read_bytes()).hexdigest() for p in again.files]
    assert digest == [hashlib.sha256(p.read_bytes()).hexdigest() for p in small.files]
    other = generate(tmp_path / "other", 0.002, seed=8, progress=False)
    assert other.files[0].read_bytes() != small.files[0].read_bytes()


def test_nulls_option(tmp_path):
    report = generate(tmp_path, 0.001, seed=1, nulls=True, progress=False)
    t = pq.read_table(report.files[1])
    assert t.column("uuid").null_count == 0
    assert all(t.column(c).null_count > 0 for c in SCHEMA.names[1:])
