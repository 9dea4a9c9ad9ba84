"""Batches, table and result all in the object store (the embedded S3 server), through
the commands a user runs: write from s3:// batches, meta merge, read into an s3://
result (pyarrow's writer, then Spark's, replacing it), check against the oracle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contest.data.generator import generate
from contest.infra.folders import remove_tree
from contest.infra.proc import run_captured
from tests.support.config import cli
from tests.support.s3 import configured, fresh_prefix, names, put, upload

pytestmark = [pytest.mark.spark, pytest.mark.pg, pytest.mark.slow]


def contest(cfg, *args: str) -> subprocess.CompletedProcess:
    """A `contest` command in its own process: its own Spark (local[2]) with s3a, the
    embedded server found through the state folder, as for a user."""
    argv = cli(cfg, "--set", "spark.driver_memory=1g", *args)
    started = time.perf_counter()
    try:
        return run_captured(  # the harness's runner: the child dies with this process
            [str(Path(sys.executable).parent / "contest"), *argv],
            env=dict(os.environ),
            timeout=600,
        )
    finally:
        print(f"contest {' '.join(args)}: {time.perf_counter() - started:.1f} s")


def last_json(stdout: str) -> dict:
    """The command's report: its last JSON line (Ivy prints to stdout before it)."""
    return json.loads([line for line in stdout.splitlines() if line.startswith("{")][-1])


def ok(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_write_read_check_with_everything_on_s3(cfg, pg, s3, tmp_path):
    with configured(s3):
        root = fresh_prefix("pipeline")
        generate(tmp_path / "data", 0.001, seed=7)
        data = upload(tmp_path / "data", f"{root}/data")
        table, out = f"{root}/tables/ccf_s3", f"{root}/result"
        try:
            write = ("write", "--data", data, "--table", table, "--replace")
            wrote = ok(contest(cfg, *write, "--set", "write.shuffle=spark"))
            # base-0 (5 times the others) through Spark's reader (s3a), the rest read by
            # their tasks with pyarrow: both readers of a remote batch.
            shuffled = {b["batch"]: b["shuffled"] for b in last_json(wrote)["batches"]}
            assert shuffled.pop("base-0.parquet") and len(shuffled) == 10
            assert not any(shuffled.values())
            ok(contest(cfg, "meta", "merge", "--table", "ccf_s3"))
            ok(contest(cfg, "read", "--table", "ccf_s3", "--out", out))
            assert "_SUCCESS" in names(out) and "_CONTEST_RESULT" in names(out)
            assert "OK: expected" in ok(contest(cfg, "check", "--result", out, "--data", data))
            # Spark's own writer into the staging prefix; the previous result is replaced.
            before = set(names(out))
            read_spark = ("read", "--table", "ccf_s3", "--out", out, "--set", "read.writer=spark")
            ok(contest(cfg, *read_spark))
            after = set(names(out))
            assert after != before and "_SUCCESS" in after
            assert not any(".staging-" in n for n in names(root))
            assert "OK: expected" in ok(contest(cfg, "check", "--result", out, "--data", data))
            # base-0 cut into row ranges its tasks read from s3:// with pyarrow, no shuffle.
            arrow = ("--table", f"{root}/tables/ccf_s3_arrow", "--set", "write.task_rows=1000")
            wrote = ok(contest(cfg, "write", "--data", data, "--replace", *arrow))
            by_batch = {b["batch"]: b for b in last_json(wrote)["batches"]}
            assert by_batch["base-0.parquet"]["parts"] >= 2
            assert not any(b["shuffled"] for b in by_batch.values())
            ok(contest(cfg, "meta", "merge", "--table", "ccf_s3_arrow"))
            ok(contest(cfg, "read", "--table", "ccf_s3_arrow", "--out", f"{root}/res_arrow"))
            checked = contest(cfg, "check", "--result", f"{root}/res_arrow", "--data", data)
            assert "OK: expected" in ok(checked)
            # A foreign prefix, and one inside the table, are refused before Spark starts.
            put(f"{root}/foreign/notes.txt", b"not a result")
            for target, message in (
                (f"{root}/foreign", "not a previous result of this tool"),
                (f"{table}/out", "overlaps the folder of a table"),
            ):
                proc = contest(cfg, "read", "--table", "ccf_s3", "--out", target)
                assert proc.returncode == 2 and message in proc.stderr, proc.stderr
                assert len(proc.stderr.strip().splitlines()) == 1
            assert names(f"{root}/foreign") == ["notes.txt"]
        finally:
            remove_tree(root)
