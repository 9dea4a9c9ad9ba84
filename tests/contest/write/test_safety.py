"""Nothing lost, nothing silently wrong: versions committed once, commits only to live
tables, concurrent creators, resume and rollback to the oracle's result, gaps refused."""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

import pyarrow as pa
import pytest

from contest.cli.main import main
from contest.errors import DataError
from contest.write.job import WriteMode
from meta import catalog
from meta.commits import DataFile, commit_files, committed_versions, head_snapshot, live_files
from meta.errors import CommitError, TableError
from meta.versions import rollback
from tests.support.config import cli
from tests.support.pipeline import generated, merge_and_read, oracle, with_write, write

SCHEMA = pa.schema([("uuid", pa.string()), ("v", pa.int64())])


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return generated(tmp_path_factory, "sdata", 0.0003, 5)


def test_a_version_is_committed_once_across_runs(spark, pg, cfg, data, tmp_path):
    report, table = write(spark, pg, cfg, data, tmp_path / "once", indices=[0, 1, 2, 3])
    assert report.ok
    parts = set((tmp_path / "once").glob("part-*"))
    with pytest.raises(DataError, match=r"version 3 \(base-3.parquet\) is already committed"):
        write(spark, pg, cfg, data, tmp_path / "once", indices=[3], mode=WriteMode.APPEND)
    assert set((tmp_path / "once").glob("part-*")) == parts  # refused before writing
    assert sorted(committed_versions(pg, table)) == [0, 1, 2, 3]
    files = [f.path for c in head_snapshot(pg, table)[1] for f in c.files]
    assert all(Path(p.removeprefix("file://")).exists() for p in files)


def test_resume_finishes_an_interrupted_write(spark, pg, cfg, data, tmp_path):
    _, table = write(spark, pg, cfg, data, tmp_path / "res", indices=[0, 1, 2, 5])
    report, table = write(spark, pg, cfg, data, tmp_path / "res", mode=WriteMode.RESUME)
    assert report.ok
    assert sorted(b.batch for b in report.batches if b.skipped) == [
        "base-0.parquet",
        "base-1.parquet",
        "base-2.parquet",
        "base-5.parquet",
    ]
    assert merge_and_read(spark, pg, cfg, table) == oracle(data)


def test_rollback_then_resume_reaches_the_oracle(spark, pg, cfg, data, tmp_path):
    _, table = write(spark, pg, cfg, data, tmp_path / "rb")
    done = rollback(pg, table, 6)
    assert len(done.removed) == 4
    assert merge_and_read(spark, pg, cfg, table) == oracle(data, only=set(range(7)))
    report, _ = write(spark, pg, cfg, data, tmp_path / "rb", mode=WriteMode.RESUME)
    assert report.ok and sum(1 for b in report.batches if not b.skipped) == 4
    assert merge_and_read(spark, pg, cfg, table) == oracle(data)


def test_read_refuses_holes_unless_asked(spark, pg, cfg, data, tmp_path, capsys):
    _, table = write(spark, pg, cfg, data, tmp_path / "holes", indices=[1, 2, 3])
    assert sorted(committed_versions(pg, table)) == [1, 2, 3]
    # The data has base-0 below the newest written batch: the write expects version 0.
    assert main(cli(cfg, "meta", "merge", "--table", table.name)) == 0
    out = str(tmp_path / "out")
    read = cli(cfg, "read", "--table", table.name, "--out", out)
    assert main(read) == 2
    assert "missing version(s) 0 below the newest committed" in capsys.readouterr().err
    assert main([*read, "--allow-gaps"]) == 0
    assert "warning: table" in capsys.readouterr().err


@pytest.fixture(scope="module")
def ranged_table(spark, pg, cfg, data, tmp_path_factory) -> str:
    """One table of versions 0-10, written and merged once for every range case (each
    case is refused before a row is read)."""
    _, table = write(spark, pg, cfg, data, tmp_path_factory.mktemp("rng") / "rng")
    merge_and_read(spark, pg, cfg, table)
    return table.name


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--as-of-version", "99"], "past the newest version, 10"),
        (["--from-version", "5", "--to-version", "5"], "empty or reversed range"),
        (["--from-version", "6", "--to-version", "2"], "empty or reversed range"),
        (["--to-version", "11"], "past the newest version, 10"),
    ],
)
def test_version_ranges_outside_the_table_are_errors(
    cfg, ranged_table, tmp_path, capsys, args, needle
):
    code = main(cli(cfg, "read", "--table", ranged_table, "--out", str(tmp_path / "o"), *args))
    err = capsys.readouterr().err
    assert code == 2 and needle in err and err.count("\n") == 1


def test_taken_name_or_path_is_an_error_unless_replace(pg, tmp_path):
    for name in ("taken_a", "taken_b"):  # left by an earlier run of the suite
        catalog.drop_table(pg, name)
    a = catalog.create_table(pg, "taken_a", tmp_path / "a", SCHEMA, ["uuid"], 1, replace=True)
    with pytest.raises(TableError, match="taken by table default.taken_a"):
        catalog.create_table(pg, "taken_b", tmp_path / "a", SCHEMA, ["uuid"], 1)
    with pytest.raises(TableError, match="taken by table default.taken_a"):
        catalog.create_table(pg, "taken_a", tmp_path / "elsewhere", SCHEMA, ["uuid"], 1)
    assert (
        catalog.create_table(
            pg, "taken_a", tmp_path / "a", SCHEMA, ["uuid"], 1, reuse=True
        ).table_id
        == a.table_id
    )
    gone = []
    b = catalog.create_table(
        pg, "taken_b", tmp_path / "a", SCHEMA, ["uuid"], 1, replace=True, on_replaced=gone.append
    )
    assert [t.name for t in gone] == ["taken_a"] and b.name == "taken_b"
    for bad in ("x'; DROP TABLE table_info; --", "a b", "1abc", ""):
        with pytest.raises(TableError, match="letters, digits and underscores"):
            catalog.create_table(pg, bad, tmp_path / "bad", SCHEMA, ["uuid"], 1)


def test_a_commit_to_a_dropped_table_fails(pg, tmp_path):
    t = catalog.create_table(pg, "dropped_t", tmp_path / "d", SCHEMA, ["uuid"], 1, replace=True)
    catalog.drop_table(pg, "dropped_t")
    f = DataFile(f"{t.path}/part-x_0000.parquet", 1, ("uuid", "v"), 0)
    with pytest.raises(CommitError, match="was dropped while it was being written"):
        commit_files(pg, t, [f], version=0)


def _racer(conn, path: str, versions: list[int], barrier, out) -> None:
    barrier.wait()
    t = catalog.create_table(conn, "race_t", path, SCHEMA, ["uuid"], 1, reuse=True)
    for v in versions:
        f = DataFile(f"{t.path}/part-r{v:04d}_0000.parquet", 1, ("uuid", "v"), 0)
        commit_files(conn, t, [f], version=v)
    out.put(t.table_id)


def test_four_processes_creating_one_table_all_commit(pg, tmp_path):
    catalog.drop_table(pg, "race_t")
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(4), ctx.Queue()
    procs = [
        ctx.Process(
            target=_racer, args=(pg, str(tmp_path / "race_t"), list(range(i, 40, 4)), barrier, out)
        )
        for i in range(4)
    ]
    for p in procs:
        p.start()
    deadline = time.monotonic() + 120
    for p in procs:
        p.join(max(1, deadline - time.monotonic()))
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    ids = {out.get(timeout=5) for _ in procs}
    assert len(ids) == 1  # one table
    t = catalog.get_table(pg, "race_t")
    assert sorted(committed_versions(pg, t)) == list(range(40))  # every batch committed


@pytest.mark.parametrize("reader", ["arrow", "spark"])
def test_a_damaged_batch_is_one_line_naming_the_file(
    cfg, pg, spark, data, tmp_path, capsys, reader
):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(data, bad)
    body = bad / "base-3.parquet"
    raw = bytearray(body.read_bytes())
    mid = len(raw) // 2
    raw[mid : mid + 4096] = b"\xff" * 4096  # the footer stays readable: discovery passes
    body.write_bytes(bytes(raw))
    code = main(
        cli(
            cfg,
            "--set",
            f"write.reader={reader}",
            "write",
            "--data",
            str(bad),
            "--table",
            str(tmp_path / "dmg"),
            "--replace",
        )
    )
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert code in (1, 2)
    assert last.startswith("contest: wrote default.dmg: 10 of 11 batches committed")
    assert "FAILED 1 (base-3.parquet)" in last and "--resume" in last
    if reader == "arrow":
        assert code == 2 and "base-3.parquet: row group 0 cannot be read" in last


def test_read_refuses_planned_versions_that_never_landed(spark, pg, cfg, data, tmp_path, capsys):
    from meta.versions import plan_versions

    _, table = write(spark, pg, cfg, data, tmp_path / "top", indices=list(range(9)))
    plan_versions(pg, table, {9: "base-9.parquet", 10: "base-10.parquet"})  # they failed
    assert main(cli(cfg, "meta", "merge", "--table", table.name)) == 0
    read = cli(cfg, "read", "--table", table.name, "--out", str(tmp_path / "o"))
    assert main(read) == 2
    assert "planned version(s) 9, 10 not committed yet" in capsys.readouterr().err
    assert main([*read, "--as-of-version", "8"]) == 0  # a range up to 8 needs nothing more
    capsys.readouterr()
    assert main([*read, "--allow-gaps"]) == 0


@pytest.mark.pg
def test_a_taken_table_message_points_to_the_flag_that_helps(pg, tmp_path):
    """A re-run of an interrupted write is told about --resume; `--table NAME --append`
    (a bare name taken as the folder ./NAME) is told where the table of that name is,
    not to give the --append it gave."""
    catalog.drop_table(pg, "msg_t")
    t = catalog.create_table(pg, "msg_t", tmp_path / "real", SCHEMA, ["uuid"], 1, replace=True)
    with pytest.raises(TableError, match=r"taken by .*--resume finishes it"):
        catalog.create_table(pg, "msg_t", tmp_path / "real", SCHEMA, ["uuid"], 1)
    with pytest.raises(TableError) as bare:
        catalog.create_table(pg, "msg_t", tmp_path / "msg_t", SCHEMA, ["uuid"], 1, reuse=True)
    assert f"is at {t.path}, not there" in str(bare.value)
    assert f"give --table {t.path}" in str(bare.value) and "--append" not in str(bare.value)
    with pytest.raises(TableError, match=r"that folder holds table default.msg_t .*--name msg_t"):
        catalog.create_table(pg, "other_t", tmp_path / "real", SCHEMA, ["uuid"], 1, reuse=True)


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("contest: "), err
    return err[0]


def test_a_gap_the_write_skipped_is_refused_and_shown(spark, pg, cfg, data, tmp_path, capsys):
    table_dir = tmp_path / "gap"
    write = cli(cfg, "write", "--data", str(data), "--table", str(table_dir), "--replace")
    assert main([*write, "--only", "0,1,2,4"]) == 0
    capsys.readouterr()
    assert main(cli(cfg, "meta", "merge", "--table", "gap")) == 0
    assert "warning: table default.gap: missing version(s) 3" in capsys.readouterr().err
    out = tmp_path / "res" / "mis"
    read = cli(cfg, "read", "--table", "gap", "--out", str(out))
    assert main(read) == 2
    assert "missing version(s) 3 below the newest committed" in _one_line_error(capsys)
    assert main(cli(cfg, "history", "--table", "gap")) == 0
    assert "missing: missing version(s) 3 below the newest committed" in capsys.readouterr().out
    # The user's hidden folders beside the result are not the read's to clean up.
    users = [out.parent / ".mis.backup-2024", out.parent / ".mis.old-mine"]
    for u in users:
        u.mkdir(parents=True)
        (u / "notes.txt").write_text("mine")
    assert main([*read, "--allow-gaps"]) == 0
    assert main([*read, "--allow-gaps"]) == 0  # a second read replaces the first
    assert all((u / "notes.txt").read_text() == "mine" for u in users)
    assert sorted(p.name for p in out.parent.iterdir()) == [
        ".mis.backup-2024",
        ".mis.old-mine",
        "mis",
    ]
    capsys.readouterr()
    assert main([*read, "--as-of-version", "-1"]) == 2
    assert "--as-of-version -1 is before the oldest version, 0" in _one_line_error(capsys)
    # --append of a committed version: refused before anything is written, as bad input.
    parts = set(table_dir.glob("part-*"))
    append = cli(cfg, "write", "--data", str(data), "--table", str(table_dir), "--append")
    assert main([*append, "--only", "3,4"]) == 2
    assert "version 4 (base-4.parquet) is already committed" in _one_line_error(capsys)
    assert set(table_dir.glob("part-*")) == parts


@pytest.mark.parametrize("only", ["99", "-1", "2,99"])
def test_only_naming_no_batch_is_refused_before_any_work(cfg, pg, data, tmp_path, capsys, only):
    table_dir = tmp_path / "nobatch"
    code = main(cli(cfg, "write", "--data", str(data), "--table", str(table_dir), "--only", only))
    assert code == 2
    assert "no such batch" in _one_line_error(capsys)
    assert not table_dir.exists()
    with pytest.raises(TableError):
        catalog.find_table(pg, str(table_dir))


def test_an_empty_batch_is_committed_with_a_warning(spark, pg, cfg, data, tmp_path, capsys):
    import shutil

    import pyarrow.parquet as pq

    empty = tmp_path / "empty"
    shutil.copytree(data, empty)
    pq.write_table(pq.read_table(empty / "base-3.parquet").slice(0, 0), empty / "base-3.parquet")
    write = cli(cfg, "write", "--data", str(empty), "--table", str(tmp_path / "e"), "--replace")
    assert main([*write, "--only", "2,3"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [ln for ln in err if "warning" in ln] == [
        "contest: warning: base-3.parquet (version 3) had no rows: committed as an empty version"
    ]


def test_a_truncated_file_is_one_line_naming_it_and_sparks_log(spark, pg, cfg, data, tmp_path):
    """The read of a table with a truncated committed file, as a user runs it (its own
    process and JVM): the terminal shows one line naming the file and Spark's log, which
    holds the stack traces; `contest check` of a truncated result: one line, no traceback."""
    import os
    import sys

    from contest.infra.proc import run_captured
    from meta.merge import merge_table
    from tests.support.config import REPO

    _, table = write(spark, pg, cfg, data, tmp_path / "trunc", indices=[0, 1])
    merge_table(pg, table)
    out = tmp_path / "tres"
    assert main(cli(cfg, "read", "--table", "trunc", "--out", str(out))) == 0
    victim = Path(head_snapshot(pg, table)[1][1].files[0].path.removeprefix("file://"))
    victim.write_bytes(victim.read_bytes()[: victim.stat().st_size // 2])
    contest = [
        sys.executable,
        "-c",
        "import sys; from contest.cli.main import main; sys.exit(main())",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    read = [*contest, *cli(cfg, "read", "--table", "trunc", "--out", str(tmp_path / "t2"))]
    proc = run_captured(read, env=env, timeout=300, cwd=REPO)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) <= 3, proc.stderr[-3000:]
    last = lines[-1]
    assert last.startswith("contest: committed data file ") and victim.name in last
    assert "truncated or damaged" in last and "Spark's log: " in last
    log = Path(last.rsplit("Spark's log: ", 1)[1].rstrip(")"))
    assert log.is_file() and victim.name in log.read_text()  # the details are there
    # A result file cut short: `contest check` says which, in one line, exit 2.
    part = sorted(out.glob("part-*.parquet"))[0]
    part.write_bytes(part.read_bytes()[:100])
    check = [*contest, *cli(cfg, "check", "--result", str(out), "--data", str(data))]
    proc = run_captured(check, env=env, timeout=300, cwd=REPO)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr[-3000:]
    assert proc.stderr.startswith(f"contest: {part}: not a readable parquet file")


def _damage_row_group(path: Path, group: int) -> None:
    """Overwrite the first data page of one row group: the footer stays readable."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    col = meta.row_group(group).column(0)
    start = col.dictionary_page_offset or col.data_page_offset
    raw = bytearray(path.read_bytes())
    raw[start : start + 64] = b"\xff" * 64
    path.write_bytes(bytes(raw))


def test_a_failed_batch_leaves_no_files(spark, pg, cfg, data, tmp_path):
    """Tasks of a batch that finished (or were still running) when another task of it
    failed wrote files: they are deleted with the batch, not left for vacuum."""
    import shutil

    import pyarrow.parquet as pq

    bad = tmp_path / "bad"
    shutil.copytree(data, bad)
    batch = bad / "base-3.parquet"
    rows = pq.read_table(batch)
    pq.write_table(rows, batch, row_group_size=max(rows.num_rows // 8, 1))
    groups = pq.ParquetFile(batch).metadata.num_row_groups
    assert groups >= 6
    _damage_row_group(batch, groups // 2)
    report, table = write(spark, pg, with_write(cfg, reader="arrow"), bad, tmp_path / "orph")
    assert [b.batch for b in report.failed] == ["base-3.parquet"]
    assert "row group" in report.failed[0].error
    live = {p.removeprefix("file://") for p in live_files(pg, table)}
    assert {str(p) for p in (tmp_path / "orph").rglob("part-*")} == live


@pytest.fixture
def tiny_disk(tmp_path):
    """A 1 MiB tmpfs (as root, like the fault bench's full-disk experiment)."""
    import subprocess

    mount = tmp_path / "tiny"
    mount.mkdir()
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {(res.stderr or res.stdout).strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True, timeout=60)


def test_a_full_disk_leaves_no_files_of_failed_batches(spark, pg, cfg, data, tiny_disk):
    report, table = write(spark, pg, cfg, data, tiny_disk / "full")
    assert report.failed, "the disk was big enough: nothing was tested"
    assert all("No space left on device" in b.error for b in report.failed)
    live = {p.removeprefix("file://") for p in live_files(pg, table)}
    assert {str(p) for p in (tiny_disk / "full").rglob("part-*")} == live
    catalog.drop_table(pg, "full")


def test_a_write_of_the_last_batches_only_expects_the_earlier_ones(
    spark, pg, cfg, data, tmp_path, capsys
):
    """As when 3 of 4 racing writers were refused: the table holds versions 9 and 10 only,
    and a read must not return them as the table."""
    write(spark, pg, cfg, data, tmp_path / "late", indices=[9, 10])
    assert main(cli(cfg, "meta", "merge", "--table", "late")) == 0
    capsys.readouterr()
    read = cli(cfg, "read", "--table", "late", "--out", str(tmp_path / "o"))
    assert main(read) == 2
    line = _one_line_error(capsys)
    assert "missing version(s) 0, 1, 2, 3, 4, 5, 6, 7 ... (9 in all) below the newest" in line
    assert main([*read, "--allow-gaps"]) == 0
