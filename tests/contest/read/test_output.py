"""Result folders: never destroy what the tool did not make; publish only when complete."""

from __future__ import annotations

import pytest

from contest.errors import UsageError
from contest.read import output


def test_fresh_target_is_published_with_markers(tmp_path):
    out = output.prepare(str(tmp_path / "res"), [])
    out.staging.mkdir()
    (out.staging / "part-0.parquet").write_bytes(b"x")
    output.publish(out, {"rows": 1})
    assert (tmp_path / "res" / "_SUCCESS").exists()
    assert output.is_previous_result(tmp_path / "res")
    assert [p.name for p in tmp_path.iterdir()] == ["res"]


def test_foreign_folder_is_refused_unless_overwrite(tmp_path):
    target = tmp_path / "mine"
    target.mkdir()
    (target / "thesis.tex").write_text("precious")
    with pytest.raises(UsageError, match="not a previous result"):
        output.prepare(str(target), [])
    out = output.prepare(str(target), [], overwrite=True)
    out.staging.mkdir()
    output.publish(out, {})
    assert not (target / "thesis.tex").exists()


def test_previous_result_is_replaced_and_failed_staging_discarded(tmp_path):
    first = output.prepare(str(tmp_path / "res"), [])
    first.staging.mkdir()
    (first.staging / "old.parquet").write_bytes(b"1")
    output.publish(first, {})
    second = output.prepare(str(tmp_path / "res"), [])
    second.staging.mkdir()
    output.discard(second)  # a failed read: the old result stays
    assert (tmp_path / "res" / "old.parquet").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["res"]


@pytest.mark.parametrize("out", ["table", "table/sub", "."])
def test_target_overlapping_a_table_is_refused(tmp_path, out):
    table = tmp_path / "table"
    with pytest.raises(UsageError, match="overlaps the folder of a table"):
        output.prepare(str(tmp_path / out), [f"file://{table}"])


def test_recovery_removes_only_its_own_marked_folders(tmp_path):
    import os

    target = tmp_path / "mis"
    users = [tmp_path / ".mis.backup-2024", tmp_path / ".mis.old-mine"]
    # Named as the tool names its folders, but without its marker: the user's too.
    users.append(tmp_path / ".mis.staging-deadbeef")
    users.append(tmp_path / ".mis.old-0badcafe")
    for u in users:
        u.mkdir()
        (u / "data.bin").write_bytes(b"precious")
        os.utime(u, (0, 0))  # old enough to look stale
    killed = output.prepare(str(target), [])  # a read killed while writing
    killed.staging.mkdir()
    (killed.staging / "part-0.parquet").write_bytes(b"partial")
    os.utime(killed.holder / output.STAGING_MARKER, (0, 0))
    out = output.prepare(str(target), [])
    assert not killed.holder.exists()  # stale and the tool's own: removed
    out.staging.mkdir()
    output.publish(out, {})
    out = output.prepare(str(target), [])
    output.discard(out)
    assert all((u / "data.bin").read_bytes() == b"precious" for u in users)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["mis", *(u.name for u in users)])


def test_a_previous_result_moved_aside_is_put_back(tmp_path):
    target = tmp_path / "res"
    first = output.prepare(str(target), [])
    first.staging.mkdir()
    output.publish(first, {"rows": 1})
    aside = tmp_path / ".res.old-0123abcd"  # killed between the two renames
    target.rename(aside)
    output.prepare(str(target), [])
    assert output.is_previous_result(target) and not aside.exists()
