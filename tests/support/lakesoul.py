"""Run steps on LakeSoul's JVM libraries in a child process (tests/support/lakesoul_child.py)
and read results back."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

from contest.config import Config, to_toml
from contest.infra.proc import run_captured
from tests.support.config import REPO


def run_module(
    module: str, cfg: Config, steps: list, tmp: Path, timeout: float = 1800
) -> subprocess.CompletedProcess:
    """`python -m module CONFIG STEPS` in a process of its own (its own JVM, with the
    packages it needs), the config and steps written to files in `tmp`; it must exit 0."""
    config_file = tmp / "child.toml"
    config_file.write_text(to_toml(cfg, secrets=True))
    steps_file = tmp / "steps.json"
    steps_file.write_text(json.dumps(steps))
    # The harness's runner: the child (and its JVM) dies with this process, however it
    # ends (a test's timeout included), not only on subprocess.run's own timeout.
    proc = run_captured(
        [sys.executable, "-m", module, str(config_file), str(steps_file)],
        cwd=REPO,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return proc


def run_child(cfg: Config, steps: list[dict], tmp: Path) -> None:
    run_module("tests.support.lakesoul_child", cfg, steps, tmp)


def result_rows(folder: Path) -> list[dict]:
    rows = pq.read_table(folder).to_pylist()
    return sorted(rows, key=lambda r: r["uuid"])
