"""Bucket files: one sorted file per bucket, LakeSoul's names, and deleting a dropped
table's data files without touching anything else."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.write.cleanup import delete_table_files, is_data_file
from contest.write.files import BUCKET_COL, POS_COL, write_bucket_files
from meta.commits import bucket_of_path

SCHEMA = pa.schema([("uuid", pa.string()), ("v", pa.int64())])


def test_one_sorted_file_per_bucket_keeping_arrival_order_of_a_key(tmp_path):
    rows = pa.table(
        {
            "uuid": ["b", "a", "c", "a", "b"],
            "v": [1, 2, 3, 4, 5],
            BUCKET_COL: pa.array([1, 0, 1, 0, 1], pa.int32()),
            POS_COL: [0, 1, 2, 3, 4],
        }
    )
    files = write_bucket_files(rows, str(tmp_path), ["uuid"], SCHEMA)
    by_bucket = {f["bucket"]: f for f in files}
    assert sorted(by_bucket) == [0, 1] and sum(f["rows"] for f in files) == 5
    b1 = pq.read_table(by_bucket[1]["path"])
    assert b1.column_names == ["uuid", "v"]
    assert list(zip(b1["uuid"].to_pylist(), b1["v"].to_pylist(), strict=True)) == [
        ("b", 1),
        ("b", 5),
        ("c", 3),
    ]  # sorted by key; a key's rows in arrival order
    for f in files:
        name = f["path"].rsplit("/", 1)[-1]
        assert is_data_file(name) and bucket_of_path(f["path"]) == f["bucket"]
        assert f["size"] == (tmp_path / name).stat().st_size


@pytest.mark.parametrize("job_type", [pa.string(), pa.large_string()])
def test_columns_of_few_values_are_written_as_the_strings_they_were(tmp_path, job_type):
    """The write gathers such columns as dictionary indices; its files hold the table's
    own types and the same rows, NULLs too, as a plain gather would write. Of plain
    types, the dictionaries are written as they are and the files carry no ARROW:schema
    (a large_string needs it: then they are cast back first)."""
    import random

    from contest.data.dictionaries import dictionary_columns, few_values_as_dictionaries

    rnd = random.Random(4)
    n = 3000
    keys = [f"{rnd.getrandbits(40):010x}" for _ in range(n)]
    cities = [rnd.choice(["oslo", "lima", None, "pune"]) for _ in range(n)]
    jobs = [rnd.choice(["a", "b"]) for _ in range(n)]
    notes = [f"note-{i}" for i in range(n)]  # every value distinct: stays as it is
    schema = pa.schema(
        [
            ("uuid", pa.string()),
            ("city", pa.string()),
            ("job", job_type),
            ("note", pa.string()),
        ]
    )
    table = pa.table([keys, cities, jobs, notes], schema=schema)
    encoded = few_values_as_dictionaries(table, {"city", "job", "note"})
    assert [pa.types.is_dictionary(t) for t in encoded.schema.types] == [
        False,
        True,
        True,
        False,
    ]
    rows = table.append_column(
        BUCKET_COL, pa.array([rnd.randrange(3) for _ in range(n)], pa.int32())
    )
    files = write_bucket_files(rows, str(tmp_path), ["uuid"], schema)
    back = pa.concat_tables(
        pq.read_table(f["path"]) for f in sorted(files, key=lambda f: f["bucket"])
    )
    assert back.schema == schema
    for f in files:
        meta = pq.read_metadata(f["path"])
        assert (b"ARROW:schema" in (meta.metadata or {})) == (job_type == pa.large_string())
        if f["rows"] > 500:  # the dictionaries are small beside the column
            assert dictionary_columns(meta, ["uuid", "city", "job", "note"]) == ["city", "job"]
    want = sorted(zip(rows[BUCKET_COL].to_pylist(), keys, cities, jobs, notes, strict=True))
    assert [tuple(r.values()) for r in back.to_pylist()] == [w[1:] for w in want]


def test_empty_input_writes_nothing(tmp_path):
    empty = pa.table(
        {
            "uuid": pa.array([], pa.string()),
            "v": pa.array([], pa.int64()),
            BUCKET_COL: pa.array([], pa.int32()),
        }
    )
    assert write_bucket_files(empty, str(tmp_path), ["uuid"], SCHEMA) == []


def test_deleting_a_dropped_tables_files_keeps_other_files(tmp_path):
    from meta.tokens import Ownership

    table = tmp_path / "t"
    (table / "sub").mkdir(parents=True)
    for name in ("part-AbCdEfGhxyz_0000.parquet", "sub/part-XyZwVuTsabc_0001.parquet"):
        (table / name).write_bytes(b"x")
    # A user's file that looks like a data file: no token of the table, no commit names it.
    users = table / "part-mine-keep_0000.parquet"
    users.write_bytes(b"x")
    (table / "README.txt").write_text("mine")
    owned = Ownership(
        frozenset({"AbCdEfGh"}), frozenset({str(table / "sub/part-XyZwVuTsabc_0001.parquet")})
    )
    removed, kept = delete_table_files(str(table), owned)
    assert removed == 2
    assert sorted(k.rsplit("/", 1)[-1] for k in kept) == ["README.txt", users.name]
    assert (table / "README.txt").exists() and users.exists() and table.exists()
    (table / "README.txt").unlink()
    users.unlink()
    (table / "part-AbCdEfGhQQQ_0002.parquet").write_bytes(b"x")
    assert delete_table_files(str(table), owned) == (1, []) and not table.exists()
    assert delete_table_files(str(tmp_path / "never"), owned) == (0, [])


def test_deleting_a_tables_files_spares_other_tables(tmp_path):
    from meta.catalog import Neighbours, table_uri
    from meta.tokens import Ownership

    table = tmp_path / "t"
    (table / "inner" / "deeper").mkdir(parents=True)
    mine = table / "part-MineMineabc_0000.parquet"
    theirs = [table / "inner" / "part-In_0000.parquet", table / "inner/deeper/part-D_0000.parquet"]
    shared = table / "part-SharedXXabc_0001.parquet"
    for f in (mine, shared, *theirs):
        f.write_bytes(b"x")
    others = Neighbours((table_uri(table / "inner"),), frozenset({table_uri(shared)}))
    # Even a file the dropped table claims is spared when another table's commits name it.
    owned = Ownership(frozenset({"MineMine", "SharedXX"}), frozenset())
    removed, kept = delete_table_files(table_uri(table), owned, others)
    assert removed == 1 and sorted(kept) == sorted(map(str, [shared, *theirs]))
    assert not mine.exists() and shared.exists() and all(f.exists() for f in theirs)
