"""LakeSoul's commit protocol in PostgreSQL, for real, under concurrent writers."""

from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest

from meta import catalog
from meta.commits import DataFile, bucket_of_path, commit_files, head_snapshot
from meta.errors import TableError

SCHEMA = pa.schema([("uuid", pa.string()), ("v", pa.int64())])


def test_create_and_find_by_name_and_path(pg, table_dir):
    t = catalog.create_table(pg, "cat_find", table_dir, SCHEMA, ["uuid"], 4, replace=True)
    assert t.primary_keys == ("uuid",)
    assert t.hash_buckets == 4
    assert catalog.find_table(pg, "cat_find").table_id == t.table_id
    assert catalog.find_table(pg, str(table_dir)).table_id == t.table_id
    with pytest.raises(TableError, match="no LakeSoul table named default.cat_missing"):
        catalog.get_table(pg, "cat_missing")


def test_concurrent_commits_are_all_kept(pg, table_dir):
    t = catalog.create_table(pg, "cat_conc", table_dir, SCHEMA, ["uuid"], 2, replace=True)

    def commit(i: int):
        f = DataFile(f"{t.path}/part-w{i:02d}xxxxxxxxxxxx_0000.parquet", 10 + i, ("uuid", "v"), 0)
        return commit_files(pg, t, [f], version=i, batch=f"b{i}")

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(commit, range(16)))
    version, commits = head_snapshot(pg, t)
    assert version == 15
    assert sorted(c.commit_id for c in commits) == sorted(r.commit_id for r in results)
    assert sorted(c.version for c in commits) == list(range(16))
    assert sum(r.retries for r in results) >= 0
    # every partition version is a prefix-extension of the previous one
    assert len({c.commit_id for c in commits}) == 16


def test_update_commit_replaces_the_snapshot(pg, table_dir):
    t = catalog.create_table(pg, "cat_upd", table_dir, SCHEMA, ["uuid"], 1, replace=True)
    a = DataFile(f"{t.path}/part-aaaaaaaaaaaaaaaa_0000.parquet", 1, ("uuid", "v"), 0)
    b = DataFile(f"{t.path}/part-bbbbbbbbbbbbbbbb_0000.parquet", 2, ("uuid", "v"), 0)
    commit_files(pg, t, [a])
    commit_files(pg, t, [b], commit_op="UpdateCommit")
    _, commits = head_snapshot(pg, t)
    assert [f.path for c in commits for f in c.files] == [b.path]


def test_bucket_of_path():
    assert bucket_of_path("file:///t/part-AbCdEfGhIjKlMnOp_0003.parquet") == 3
    with pytest.raises(TableError):
        bucket_of_path("file:///t/data.parquet")


def test_a_table_folder_inside_or_around_another_is_refused(pg, tmp_path):
    for name in ("nest_a", "nest_b", "nest_c", "nest_d"):  # left by an earlier run
        catalog.drop_table(pg, name)
    a = catalog.create_table(pg, "nest_a", tmp_path / "a", SCHEMA, ["uuid"], 1)
    with pytest.raises(TableError) as inside:
        catalog.create_table(pg, "nest_b", tmp_path / "a" / "b", SCHEMA, ["uuid"], 1)
    msg = str(inside.value)
    assert "default.nest_b" in msg and "is inside the folder of table default.nest_a" in msg
    assert a.path in msg and "\n" not in msg
    with pytest.raises(TableError, match="holds the folder of table default.nest_a"):
        catalog.create_table(pg, "nest_c", tmp_path, SCHEMA, ["uuid"], 1, replace=True)
    # A sibling whose name merely starts with the other's is not nested.
    d = catalog.create_table(pg, "nest_d", tmp_path / "ab", SCHEMA, ["uuid"], 1)
    assert d.path.endswith("/ab")
    assert [t.name for t in catalog.nested_tables(pg, catalog.table_uri(tmp_path))] == [
        "nest_a",
        "nest_d",
    ]


def test_a_name_over_128_characters_has_its_own_message(pg, tmp_path):
    with pytest.raises(TableError, match="is 129 characters long: at most 128"):
        catalog.create_table(pg, "n" * 129, tmp_path / "long", SCHEMA, ["uuid"], 1)
    assert catalog.check_name("n" * 128) == "n" * 128
