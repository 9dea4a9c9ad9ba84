"""Which files a read opens per bucket: the order it applies them, and how many."""

from __future__ import annotations

from contest.read.files import files_by_bucket, mean_files_per_bucket
from meta.commits import DataFile, SnapshotCommit


def _commit(version: int, buckets: list[int]) -> SnapshotCommit:
    files = tuple(DataFile(f"v{version}-b{b}.parquet", 1, ("uuid",), b) for b in buckets)
    return SnapshotCommit(f"c{version}", "MergeCommit", files, version)


def test_files_by_bucket_keeps_commit_order_and_versions():
    commits = [_commit(0, [0, 1]), _commit(1, [1]), _commit(2, [0, 1])]
    out = files_by_bucket(commits)
    assert out[0] == [("v0-b0.parquet", 0), ("v2-b0.parquet", 2)]
    assert [v for _, v in out[1]] == [0, 1, 2]


def test_mean_files_per_bucket():
    assert mean_files_per_bucket([]) is None
    assert mean_files_per_bucket([_commit(0, [0, 1]), _commit(1, [1])]) == 1.5
    assert mean_files_per_bucket([_commit(0, [0, 1, 2])]) == 1.0
