"""`contest meta merge` against real PostgreSQL: ordering, resets, idempotence,
incremental replay, concurrent writers and merges."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pytest

from contest.cli.main import main
from meta import catalog
from meta.commits import DataFile, commit_files, head_snapshot
from meta.errors import CommitError
from meta.merge import merge_table
from tests.support.config import cli
from tests.support.pg import pg_cursor

SCHEMA = pa.schema([("uuid", pa.string()), ("v", pa.int64())])


def _file(t, tag: str) -> DataFile:
    return DataFile(f"{t.path}/part-{tag:x<16}_0000.parquet", 1, ("uuid", "v"), 0)


def _commit(pg, t, version, op="MergeCommit"):
    return commit_files(pg, t, [_file(t, f"v{version}")], version=version, commit_op=op).commit_id


@pytest.fixture
def table(pg, table_dir):
    return catalog.create_table(pg, "meta_t", table_dir, SCHEMA, ["uuid"], 1, replace=True)


def head(pg, t):
    return [c.version for c in head_snapshot(pg, t)[1]]


def test_out_of_order_commits_are_merged_then_nothing_to_do(pg, table):
    for v in (3, 0, 2, 1):
        _commit(pg, table, v)
    first = merge_table(pg, table)
    assert first.changed and first.partitions[0].replayed == 4
    assert head(pg, table) == [0, 1, 2, 3]
    again = merge_table(pg, table)
    assert not again.changed and again.partitions[0].replayed == 0
    assert "nothing to write" in again.render()


def test_meta_merge_prints_no_stray_line(pg, cfg, table, capsys):
    """Every stdout line of `contest meta merge` says what it is (a bare `0.017s` line
    followed the report)."""
    import re

    from contest.cli.main import main
    from tests.support.config import cli

    for v in (1, 0):
        _commit(pg, table, v)
    capsys.readouterr()
    assert main(cli(cfg, "meta", "merge", "--table", "meta_t")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("default.meta_t") for line in lines), lines
    assert re.search(r"wrote version \d+; commits in order: v0-1 \(\d+\.\d{3} s\)$", lines[-1])


def test_incremental_replays_only_new_commits(pg, table):
    for v in (1, 0):
        _commit(pg, table, v)
    merge_table(pg, table)
    for v in (5, 2):
        _commit(pg, table, v)
    report = merge_table(pg, table)
    assert report.partitions[0].replayed == 2
    assert head(pg, table) == [0, 1, 2, 5]


def test_compaction_resets_what_came_before(pg, table):
    _commit(pg, table, 1)
    _commit(pg, table, 0)
    commit_files(pg, table, [_file(table, "cmp")], commit_op="CompactionCommit")
    _commit(pg, table, 9)
    _commit(pg, table, 4)
    merge_table(pg, table)
    _, commits = head_snapshot(pg, table)
    assert [c.commit_op for c in commits][0] == "CompactionCommit"
    assert [c.version for c in commits][1:] == [4, 9]


def test_duplicate_versions_are_refused_at_commit(pg, cfg, table, capsys):
    _commit(pg, table, 7)
    with pytest.raises(CommitError, match="version 7 is already committed"):
        _commit(pg, table, 7)
    assert main(cli(cfg, "meta", "merge", "--table", "meta_t")) == 0
    assert head(pg, table) == [7]


def test_dry_run_writes_nothing(pg, cfg, table, capsys):
    _commit(pg, table, 1)
    _commit(pg, table, 0)
    assert main(cli(cfg, "meta", "merge", "--table", "meta_t", "--dry-run")) == 0
    assert "would write version 2" in capsys.readouterr().out
    assert head(pg, table) == [1, 0]
    assert main(cli(cfg, "meta", "merge", "--table", "meta_t", "--json")) == 0
    assert '"changed": true' in capsys.readouterr().out


def test_writer_during_merges_loses_nothing(pg, table):
    stop = threading.Event()
    written = []

    def writer():
        v = 1000
        while not stop.is_set() and v < 1200:
            written.append(_commit(pg, table, v))
            v += 1

    with ThreadPoolExecutor(3) as pool:
        w = pool.submit(writer)
        merges = [pool.submit(merge_table, pg, table) for _ in range(20)]
        for m in merges:
            m.result()
        stop.set()
        w.result()
    merge_table(pg, table)
    _, commits = head_snapshot(pg, table)
    assert sorted(c.commit_id for c in commits) == sorted(written)
    assert [c.version for c in commits] == sorted(c.version for c in commits)


def test_two_merges_at_once_both_finish(pg, table):
    for v in range(30, 0, -1):
        _commit(pg, table, v)
    with ThreadPoolExecutor(2) as pool:
        reports = list(pool.map(lambda _: merge_table(pg, table), range(2)))
    assert sum(r.changed for r in reports) == 1  # the second waited, then had nothing to do
    assert head(pg, table) == list(range(1, 31))


@pytest.mark.spark
@pytest.mark.parametrize("every", [0, 7])
def test_driver_and_distributed_paths_agree(pg, spark, tmp_path, every):
    from meta.synthetic import generate_history, reset_history

    hist = generate_history(
        pg,
        f"hist_{every}",
        tmp_path / "h",
        3000,
        seed=every + 1,
        jitter=200,
        unversioned_every=every,
    )
    driver = merge_table(pg, hist.table, force_path="driver")
    assert driver.changed
    reset_history(pg, hist.table.table_id)
    dist = merge_table(pg, hist.table, spark=spark, force_path="distributed")
    assert dist.partitions[0].path == "distributed"
    assert dist.partitions[0].order == driver.partitions[0].order
    # The adaptive choice: under the threshold the driver replays.
    reset_history(pg, hist.table.table_id)
    auto = merge_table(pg, hist.table, spark=spark, distributed_threshold=10**9)
    assert auto.partitions[0].path == "driver"


@pytest.mark.spark
def test_distributed_path_keeps_resets_and_refuses_duplicates(pg, spark, table):
    _commit(pg, table, 5)
    commit_files(pg, table, [_file(table, "cmp")], commit_op="CompactionCommit")
    _commit(pg, table, 9)
    _commit(pg, table, 2)
    dist = merge_table(pg, table, spark=spark, force_path="distributed")
    _, commits = head_snapshot(pg, table)
    assert [c.commit_op for c in commits][0] == "CompactionCommit"
    assert [c.version for c in commits][1:] == [2, 9]
    assert dist.partitions[0].path == "distributed"
    with pytest.raises(CommitError, match="version 9 is already committed"):
        _commit(pg, table, 9)


@pytest.mark.parametrize("join", ["lookups", "hash"])
def test_driver_merge_follows_the_replay_rules(pg, tmp_path, monkeypatch, join):
    """A long history with unversioned commits: the set-based driver path writes what
    `order_commits` (the pure rules) gives, whichever join reads the commits, then has
    nothing to do, and a head put back in arrival order without a checkpoint merges to
    the same snapshot."""
    from meta import merge_io
    from meta.replay import Commit, order_commits
    from meta.synthetic import generate_history, head_commit_ids, unmerge

    if join == "hash":
        monkeypatch.setattr(merge_io, "HASH_JOIN_MIN_LIVE", 1)

    hist = generate_history(pg, "rules_t", tmp_path / "h", 2000, jitter=100, unversioned_every=5)
    _, arrival = head_snapshot(pg, hist.table)
    expected = [
        c.commit_id
        for c in order_commits([Commit(c.commit_id, c.commit_op, c.version) for c in arrival])
    ]
    first = merge_table(pg, hist.table, force_path="driver")
    assert first.changed and first.partitions[0].replayed == 2000
    assert first.partitions[0].order == expected
    assert head_commit_ids(pg, hist.table) == (1, expected)
    again = merge_table(pg, hist.table, force_path="driver")
    assert not again.changed and again.partitions[0].replayed == 0
    assert again.partitions[0].order == expected
    assert again.partitions[0].versions == first.partitions[0].versions
    unmerge(pg, hist.table, [c.commit_id for c in arrival])
    third = merge_table(pg, hist.table, force_path="driver")
    assert third.partitions[0].replayed == 2000
    assert head_commit_ids(pg, hist.table) == (3, expected)
    catalog.drop_table(pg, "rules_t")


def test_a_checkpoint_that_is_no_longer_a_prefix_is_not_used(pg, table):
    from meta.queries import insert_partition_version
    from meta.synthetic import head_commit_ids

    ids = [_commit(pg, table, v) for v in (4, 1, 3, 2)]
    merge_table(pg, table)
    version, merged = head_commit_ids(pg, table)
    with pg_cursor(pg) as cur:  # a writer's snapshot in another order, same commits
        insert_partition_version(cur, table.table_id, "-5", version + 1, "MergeCommit", ids)
    report = merge_table(pg, table)
    assert report.changed and report.partitions[0].replayed == 4
    assert head_commit_ids(pg, table) == (version + 2, merged)


def test_a_snapshot_naming_a_commit_without_data_is_refused(pg, table):
    from meta.errors import MetaError
    from meta.synthetic import head_commit_ids

    _commit(pg, table, 2)
    lost = _commit(pg, table, 1)
    with pg_cursor(pg) as cur:
        cur.execute("DELETE FROM data_commit_info WHERE commit_id = %s", (lost,))
    with pytest.raises(MetaError, match=f"no data_commit_info row: \\['{lost}'\\]"):
        merge_table(pg, table)
    assert head_commit_ids(pg, table)[0] == 1  # nothing written


def test_versions_are_described_as_runs_for_a_person():
    from meta.merge import describe_versions, partition_label

    assert describe_versions([0, 1, 2, 3, 5, None, 7, 8]) == "v0-3, v5, unversioned, v7-8"
    assert describe_versions([]) == "none"
    assert describe_versions([None]) == "unversioned"
    assert describe_versions(list(range(0, 40, 2)), shown=3) == "v0, v2, v4 and 17 more"
    assert partition_label("-5") == ""
    assert partition_label("date=2022-01-01") == " partition date=2022-01-01"
