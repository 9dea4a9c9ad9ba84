"""A peer format's commands in a child process with that format's jars (the tests'
own Spark session has none): its configuration and the run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from contest.config import load_config
from contest.evaluation.strategies import STRATEGIES
from tests.support.lakesoul import run_module


def child_config(cfg, strategy: str, tmp_path, settings: dict | None = None):
    """The strategy's preset on the test run's state, small and quiet; `settings` (a
    workload file's, say) on top."""
    return load_config(
        preset=STRATEGIES[strategy],
        overrides={
            **(settings or {}),
            "state_dir": str(cfg.state_dir),
            "work_dir": str(tmp_path / "work"),
            "results_dir": str(tmp_path / "results"),
            "spark.master": "local[1]",
            "spark.shuffle_partitions": 2,
            "spark.ui": False,
            "spark.driver_memory": "1g",
        },
    )


def run_script(
    script: str, args: list[str], cwd: Path, timeout: float = 900
) -> subprocess.CompletedProcess:
    """`python -c script ARGS` in `cwd`: a child process (and JVM) of its own, with the
    format's jars the tests' session lacks; it must exit 0."""
    proc = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=os.environ.copy(),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def script_result(script: str, args: list[str], cwd: Path) -> Any:
    """`run_script`'s answer: its last `RESULT <json>` line, parsed."""
    proc = run_script(script, args, cwd)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line.removeprefix("RESULT "))


def run_child(child, commands: list[list[str]], tmp_path) -> list[dict]:
    """`contest` commands in one child session; each must exit 0."""
    proc = run_module("tests.support.contest_child", child, commands, tmp_path, timeout=900)
    done = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [d["code"] for d in done] == [0] * len(commands), proc.stderr[-4000:]
    return done
