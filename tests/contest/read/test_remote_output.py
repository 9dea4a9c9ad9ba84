"""Result folders in the object store (the embedded S3 server): the local rules (never
destroy what the tool did not make, publish only when complete) without a rename, and
a publish cut short never leaves `_SUCCESS` beside partial data."""

from __future__ import annotations

import json

import pytest

from contest.data.batches import DataError
from contest.data.checker import result_files
from contest.errors import UsageError
from contest.infra.folders import list_files, remove_tree
from contest.read import output, remote_output
from tests.support.s3 import BUCKET, configured, fresh_prefix, names, put


@pytest.fixture(scope="module")
def store(s3):
    with configured(s3):
        yield s3


@pytest.fixture
def parent(store):
    uri = fresh_prefix("out")
    yield uri
    remove_tree(uri)


def stage(out, files: dict[str, bytes]) -> None:
    """What the read's tasks do: write parts into the staging prefix."""
    for name, data in files.items():
        put(f"{out.staging}/{name}", data)


def test_fresh_target_is_published_with_markers(parent):
    out = output.prepare(f"{parent}/res/", [])
    assert isinstance(out, remote_output.RemoteOutput)
    assert out.target == f"{parent}/res" and out.staging.startswith(f"{parent}/.res.staging-")
    stage(out, {"part-00000.parquet": b"a", "part-00001.parquet": b"b"})
    output.publish(out, {"rows": 2})
    assert names(parent) == [
        "res/_CONTEST_RESULT",
        "res/_SUCCESS",
        "res/part-00000.parquet",
        "res/part-00001.parquet",
    ]
    assert remote_output.is_previous_result(out.target)
    fs_marker = [e for e in list_files(out.target) if e.name == "_CONTEST_RESULT"][0]
    from contest.infra.storage import filesystem

    fs, path = filesystem(fs_marker.uri)
    with fs.open_input_stream(path) as fh:
        assert json.loads(fh.read())["rows"] == 2


def test_foreign_prefix_is_refused_unless_overwrite(parent):
    target = f"{parent}/mine"
    put(f"{target}/thesis.tex", b"precious")
    with pytest.raises(UsageError, match="holds files that are not a previous result"):
        output.prepare(target, [])
    assert names(target) == ["thesis.tex"]
    out = output.prepare(target, [], overwrite=True)
    stage(out, {"part-00000.parquet": b"new"})
    output.publish(out, {})
    assert names(target) == ["_CONTEST_RESULT", "_SUCCESS", "part-00000.parquet"]


def test_previous_result_is_replaced_and_failed_staging_discarded(parent):
    target = f"{parent}/res"
    first = output.prepare(target, [])
    stage(first, {"old-0.parquet": b"1", "old-1.parquet": b"1"})
    output.publish(first, {})
    second = output.prepare(target, [])
    stage(second, {"x.parquet": b"2"})
    output.discard(second)  # a failed read: the old result stays
    assert names(parent) == [
        "res/_CONTEST_RESULT",
        "res/_SUCCESS",
        "res/old-0.parquet",
        "res/old-1.parquet",
    ]
    third = output.prepare(target, [])
    stage(third, {"new.parquet": b"3"})
    output.publish(third, {})
    assert names(parent) == ["res/_CONTEST_RESULT", "res/_SUCCESS", "res/new.parquet"]


@pytest.mark.parametrize("out", ["table", "table/sub", ""])
@pytest.mark.parametrize("scheme", ["s3", "s3a"])
def test_target_overlapping_an_s3_table_is_refused(parent, out, scheme):
    table = f"{scheme}://{parent.split('://', 1)[1]}/table"
    target = f"{parent}/{out}".rstrip("/")
    with pytest.raises(UsageError, match="overlaps the folder of a table"):
        output.prepare(target, ["file:///elsewhere/t", table])


def test_bucket_root_and_missing_bucket_are_refused(store):
    with pytest.raises(UsageError, match="name a folder inside a bucket"):
        output.prepare(f"s3://{BUCKET}/", [])
    with pytest.raises(UsageError, match="the object store has no bucket no-such-bucket-here"):
        output.prepare("s3://no-such-bucket-here/res", [])


def test_a_publish_cut_short_never_leaves_success_beside_partial_data(parent, monkeypatch):
    target = f"{parent}/res"
    old = output.prepare(target, [])
    stage(old, {f"part-{i:05d}.parquet": b"old" for i in range(3)})
    output.publish(old, {})
    new = output.prepare(target, [])
    assert isinstance(new, remote_output.RemoteOutput)
    parts = {f"part-{i:05d}.parquet": b"new" for i in range(4)}
    stage(new, parts)

    def complete() -> bool:
        try:
            result_files(target)
        except DataError as exc:
            assert "no _SUCCESS marker" in str(exc)
            return False
        return True

    def target_data() -> dict[str, bytes]:
        from contest.infra.storage import filesystem

        out = {}
        for e in list_files(target, recursive=True):
            if not e.name.startswith("_"):
                fs, path = filesystem(e.uri)
                with fs.open_input_stream(path) as fh:
                    out[e.name] = fh.read()
        return out

    # Killed after each step: either the old result, complete, or an incomplete target.
    text = remote_output.mark_staged(new, {"rows": 4})
    assert complete() and set(target_data().values()) == {b"old"}
    remote_output.clear_target(new)
    assert not complete() and target_data() == {}
    # Killed half-way through the copies (the third copy fails).
    real = remote_output.filesystem
    copied: list[str] = []

    class Flaky:
        def __init__(self, fs):
            self.fs = fs

        def __getattr__(self, name):
            return getattr(self.fs, name)

        def copy_file(self, src, dst):
            if len(copied) == 2:
                raise OSError("killed")
            copied.append(dst)
            self.fs.copy_file(src, dst)

    def flaky(uri):
        fs, path = real(uri)
        return Flaky(fs), path

    monkeypatch.setattr(remote_output, "filesystem", flaky)
    with pytest.raises(OSError, match="killed"):
        remote_output.copy_staged(new)
    monkeypatch.setattr(remote_output, "filesystem", real)
    assert not complete() and len(target_data()) < len(parts)
    # The interrupted target is this tool's: the next read replaces it without --overwrite.
    assert remote_output.is_previous_result(target)
    remote_output.copy_staged(new)
    assert not complete() and target_data() == parts
    remote_output.mark_complete(new, text)
    assert complete() and target_data() == parts
    # The staging prefix left behind is removed once stale, by the next read of the target.
    assert any(n.startswith(".res.staging-") for n in names(parent))
    remote_output.recover(target, stale_s=0)
    assert not any(".staging-" in n for n in names(parent))
    again = output.prepare(target, [])
    stage(again, {"only.parquet": b"x"})
    output.publish(again, {})
    assert names(target) == ["_CONTEST_RESULT", "_SUCCESS", "only.parquet"]
