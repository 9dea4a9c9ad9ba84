"""Vacuum removes exactly the orphans; compaction keeps the result and the versions."""

from __future__ import annotations

from pathlib import Path

import pytest

from contest.data.generator import generate
from contest.maintenance.compact import compact
from contest.maintenance.vacuum import vacuum
from contest.write.job import WriteMode
from meta.commits import committed_versions, head_snapshot, live_files
from meta.merge import merge_table
from meta.versions import rollback
from tests.support.pipeline import merge_and_read, oracle, write


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mdata")
    generate(out, 0.0003, seed=8, progress=False)
    return out


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
    killed = root / "part-killedwriteXYZ_0001.parquet"  # a killed write's file
    killed.write_bytes(b"PAR1 partial")
    (root / "notes.txt").write_text("not a data file: never touched")
    live = {p.removeprefix("file://") for p in live_files(pg, table)}
    assert _files(root) == live | rolled_back | {str(killed)}

    young = vacuum(pg, table, retain_hours=1, dry_run=True)
    assert young.orphans == [] and young.too_young == len(rolled_back) + 1
    dry = vacuum(pg, table, retain_hours=0, dry_run=True)
    assert {p for p in dry.orphans} == rolled_back | {str(killed)}
    assert _files(root) == live | rolled_back | {str(killed)}  # dry run deletes nothing
    done = vacuum(pg, table, retain_hours=0)
    assert done.orphan_bytes > 0 and len(done.orphans) == len(rolled_back) + 1
    assert _files(root) == live and (root / "notes.txt").exists()
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
    again, _ = write(spark, pg, cfg, data, tmp_path / "cmp", indices=[3], mode=WriteMode.APPEND)
    assert "version 3 is already committed" in again.batches[0].error
    resumed, _ = write(spark, pg, cfg, data, tmp_path / "cmp", mode=WriteMode.RESUME)
    assert resumed.ok and all(b.skipped for b in resumed.batches)
