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
