"""Vacuum removes exactly the orphans; compaction keeps the result and the versions."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from contest.errors import DataError, ReadError
from contest.maintenance.compact import compact, compact_buckets
from contest.maintenance.vacuum import vacuum
from contest.write.files import claim_tokens
from contest.write.job import WriteMode, run_write
from meta.commits import DataFile, SnapshotCommit, committed_versions, head_snapshot, live_files
from meta.merge import merge_table
from meta.versions import rollback
from tests.support.pipeline import generated, merge_and_read, oracle, read_rows, write


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return generated(tmp_path_factory, "mdata", 0.0003, 8)


def _files(root: Path) -> set[str]:
    return {str(p) for p in root.rglob("part-*.parquet")}


def test_vacuum_removes_exactly_the_orphans(spark, pg, cfg, data, tmp_path):
    root = tmp_path / "vac"
    _, table = write(spark, pg, cfg, data, root)
    rolled_back = {
        f.path.removeprefix("file://")
        for c in head_snapshot(pg, table)[1]
        if c.version is not None and c.version > 8
        for f in c.files
    }
    rollback(pg, table, 8)
    # A killed write's file: its token was registered before it wrote (claim_tokens).
    token = claim_tokens(pg, table, "upsert")[0]
    killed = root / f"part-{token}writeXYZ_0001.parquet"
    killed.write_bytes(b"PAR1 partial")
    (root / "notes.txt").write_text("not a data file: never touched")
    # A user's file named like a data file: no write of the table made it.
    users = root / "part-00000-mine.parquet"
    users.write_bytes(b"PAR1 a user's data")
    live = {p.removeprefix("file://") for p in live_files(pg, table)}
    assert _files(root) == live | rolled_back | {str(killed), str(users)}

    young = vacuum(pg, table, retain_hours=1, dry_run=True)
    assert young.orphans == [] and young.too_young == len(rolled_back) + 1
    dry = vacuum(pg, table, retain_hours=0, dry_run=True)
    assert {p for p in dry.orphans} == rolled_back | {str(killed)} and dry.not_ours == 1
    assert _files(root) == live | rolled_back | {str(killed), str(users)}  # dry run
    done = vacuum(pg, table, retain_hours=0)
    assert done.orphan_bytes > 0 and len(done.orphans) == len(rolled_back) + 1
    assert _files(root) == live | {str(users)} and (root / "notes.txt").exists()
    assert merge_and_read(spark, pg, cfg, table) == oracle(data, only=set(range(9)))


def test_compaction_keeps_result_and_versions(spark, pg, cfg, data, tmp_path):
    _, table = write(spark, pg, cfg, data, tmp_path / "cmp")
    merge_table(pg, table)
    before = merge_and_read(spark, pg, cfg, table)
    report = compact(spark, pg, cfg, table)
    _, commits = head_snapshot(pg, table)
    assert [c.commit_op for c in commits] == ["CompactionCommit"]
    assert report.files_after == len({f.bucket for f in commits[0].files})
    assert report.files_before > report.files_after and report.versions == 11
    assert sorted(committed_versions(pg, table)) == list(range(11))
    assert merge_and_read(spark, pg, cfg, table) == before == oracle(data)
    # The compacted versions stay taken; resume has nothing to do.
    with pytest.raises(DataError, match="version 3 .* is already committed"):
        write(spark, pg, cfg, data, tmp_path / "cmp", indices=[3], mode=WriteMode.APPEND)
    resumed, _ = write(spark, pg, cfg, data, tmp_path / "cmp", mode=WriteMode.RESUME)
    assert resumed.ok and all(b.skipped for b in resumed.batches)


def test_time_travel_across_compaction_until_vacuum(spark, pg, cfg, data, tmp_path):
    _, table = write(spark, pg, cfg, data, tmp_path / "tt", indices=[0, 1, 2, 3])
    merge_table(pg, table)
    compact(spark, pg, cfg, table)
    assert [c.commit_op for c in head_snapshot(pg, table)[1]] == ["CompactionCommit"]
    # Versions inside the compaction read from the commits it merged, as before it.
    assert read_rows(spark, pg, cfg, table, as_of=1) == oracle(data, only={0, 1})
    assert read_rows(spark, pg, cfg, table, from_version=1, to_version=2) == oracle(data, only={2})
    assert read_rows(spark, pg, cfg, table, as_of=3) == oracle(data, only={0, 1, 2, 3})
    # Files written long ago but compacted just now are inside the retention window:
    # it counts from the compaction, as Delta's from a file's removal.
    month_ago = time.time() - 30 * 24 * 3600
    for path in _files(tmp_path / "tt"):
        os.utime(path, (month_ago, month_ago))
    kept = vacuum(pg, table, retain_hours=168)
    assert kept.orphans == [] and kept.too_young > 0
    assert read_rows(spark, pg, cfg, table, as_of=1) == oracle(data, only={0, 1})
    done = vacuum(pg, table, retain_hours=0)
    assert len(done.orphans) == kept.too_young  # the merged commits' files
    with pytest.raises(ReadError) as info:
        read_rows(spark, pg, cfg, table, as_of=1)
    text = str(info.value)
    assert "versions v0-3 were compacted by commit" in text
    assert "`contest vacuum` has since removed the files" in text
    assert "read as of version 3 or later" in text
    # The compaction itself still stands for its newest version.
    assert read_rows(spark, pg, cfg, table, as_of=3) == oracle(data, only={0, 1, 2, 3})


def test_compacting_a_compact_table_commits_nothing(spark, pg, cfg, data, tmp_path):
    _, table = write(spark, pg, cfg, data, tmp_path / "twice", indices=[0, 1, 2])
    merge_table(pg, table)
    first = compact(spark, pg, cfg, table)
    head = head_snapshot(pg, table)
    again = compact(spark, pg, cfg, table)
    assert first.commit_id is not None and again.nothing_to_do
    assert again.files_after == again.files_before == first.files_after
    assert again.buckets_kept == first.files_after
    assert head_snapshot(pg, table) == head  # nothing committed


def test_compact_and_history_on_the_command_line(spark, pg, cfg, data, tmp_path, capsys):
    import json

    from contest.cli.main import main
    from tests.support.config import cli

    write(spark, pg, cfg, data, tmp_path / "cli_cmp", indices=[0, 1, 2])
    assert main(cli(cfg, "meta", "merge", "--table", "cli_cmp")) == 0
    capsys.readouterr()
    assert main(cli(cfg, "compact", "--table", "cli_cmp")) == 0
    first = capsys.readouterr()
    assert json.loads(first.out.splitlines()[-1])["commit_id"]
    assert main(cli(cfg, "compact", "--table", "cli_cmp")) == 0
    again = capsys.readouterr()
    assert json.loads(again.out.splitlines()[-1])["commit_id"] is None
    assert "already compact" in again.err and "nothing committed" in again.err
    assert main(cli(cfg, "history", "--table", "cli_cmp")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "CompactionCommit" in lines[2] and " v0-2 " in lines[2]  # newest first
    assert [ln.split()[0] for ln in lines[3:6]] == ["2", "1", "0"]


def test_compact_refuses_missing_versions_unless_allowed(spark, pg, cfg, data, tmp_path):
    _, table = write(spark, pg, cfg, data, tmp_path / "holes", indices=[0, 1, 3])
    merge_table(pg, table)
    head = head_snapshot(pg, table)
    with pytest.raises(ReadError, match=r"missing version\(s\) 2 below the newest.*--allow-gaps"):
        compact(spark, pg, cfg, table)
    assert head_snapshot(pg, table) == head
    report = compact(spark, pg, cfg, table, allow_gaps=True)
    assert report.commit_id is not None and report.versions == 3


def _commit(cid, op, *buckets):
    files = tuple(DataFile(f"t/part-{cid}_{b:04}.parquet", 1, ("uuid",), b) for b in buckets)
    return SnapshotCommit(cid, op, files, None if op == "CompactionCommit" else 11)


def test_compact_buckets_are_one_file_of_the_compaction_and_nothing_newer():
    comp = _commit("c", "CompactionCommit", 0, 1, 2, 3)
    assert sorted(compact_buckets([comp])) == [0, 1, 2, 3]
    newer = _commit("n", "MergeCommit", 1, 3)
    assert sorted(compact_buckets([comp, newer])) == [0, 2]
    assert compact_buckets([_commit("m", "MergeCommit", 0, 1)]) == {}


def _nested_pair(spark, pg, cfg, data, root: Path):
    """An outer table and one nested in its folder, made as a table created before the
    rule against nesting would be: the inner one through LakeSoul's own client."""
    from contest.data.batches import SCHEMA as BATCH_SCHEMA
    from meta import catalog
    from meta.errors import TableError

    for name in ("nest_out", "nest_in"):  # left by an earlier run
        catalog.drop_table(pg, name)
    _, outer = write(spark, pg, cfg, data, root / "nest_out", indices=[0, 1])
    inner_dir = root / "nest_out" / "nest_in"
    with pytest.raises(TableError, match="is inside the folder of table default.nest_out"):
        write(spark, pg, cfg, data, inner_dir, indices=[0, 1])
    catalog.native_catalog(pg).create_table(
        "nest_in",
        path=catalog.table_uri(inner_dir),
        schema=BATCH_SCHEMA,
        primary_keys=["uuid"],
        hash_bucket_num=cfg.table.hash_buckets,
    )
    report, inner = write(spark, pg, cfg, data, inner_dir, indices=[0, 1], mode=WriteMode.APPEND)
    assert report.ok
    return outer, inner, inner_dir


def test_a_nested_tables_files_survive_vacuum_compact_and_replace(spark, pg, cfg, data, tmp_path):
    from meta import catalog
    from meta.commits import DataFile, commit_files

    outer, inner, inner_dir = _nested_pair(spark, pg, cfg, data, tmp_path)
    inner_files = _files(inner_dir)
    assert len(inner_files) >= 2 and inner_files == {
        p.removeprefix("file://") for p in live_files(pg, inner)
    }
    # A file in the outer folder that another table's commit names (a shallow copy).
    shared = tmp_path / "nest_out" / "part-sharedByOtherTab_0000.parquet"
    shutil.copy(sorted(inner_files)[0], shared)
    other = catalog.create_table(
        pg,
        "nest_other",
        tmp_path / "other",
        outer.schema,
        ["uuid"],
        outer.hash_buckets,
        replace=True,
    )
    commit_files(pg, other, [DataFile(f"{outer.path}/{shared.name}", 1, outer.schema.names, 0)])
    merge_table(pg, outer)
    compact(spark, pg, cfg, outer)  # its old files are orphans now
    done = vacuum(pg, outer, retain_hours=0)
    assert done.orphans and not any(p.startswith(str(inner_dir)) for p in done.orphans)
    assert str(shared) not in done.orphans and shared.exists()
    assert _files(inner_dir) == inner_files
    assert merge_and_read(spark, pg, cfg, inner) == oracle(data, only={0, 1})
    # Replacing the outer table (by name, at a new path) deletes its files, not the
    # others, nor a user's file that is named like a data file.
    users = tmp_path / "nest_out" / "part-00000-users-own.parquet"
    users.write_bytes(b"PAR1 a user's data")
    report = run_write(
        spark, pg, cfg, data, str(tmp_path / "moved"), "nest_out", WriteMode.REPLACE, indices=[0]
    )
    assert report.ok and catalog.get_table(pg, "nest_out").path.endswith("/moved")
    left = {Path(p) for p in (tmp_path / "nest_out").rglob("part-*")}
    assert left == {Path(p) for p in inner_files} | {shared, users}
    assert merge_and_read(spark, pg, cfg, inner) == oracle(data, only={0, 1})
    catalog.drop_table(pg, "nest_other")
