"""A peer format's commands in a child process with that format's jars (the tests'
own Spark session has none): its configuration and the run."""

from __future__ import annotations

import json

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


def run_child(child, commands: list[list[str]], tmp_path) -> list[dict]:
    """`contest` commands in one child session; each must exit 0."""
    proc = run_module("tests.support.contest_child", child, commands, tmp_path, timeout=900)
    done = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [d["code"] for d in done] == [0] * len(commands), proc.stderr[-4000:]
    return done
