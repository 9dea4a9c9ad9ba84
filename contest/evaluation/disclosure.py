"""What a full disclosure names, taken on this machine for records of any kind (TPC's,
ClickBench's): the benchmarks' stamps (`contest.sitting.Sitting`) and the
workloads' phases (`contest.workload.runner`) both record it, so it lives below both.
Evaluations record the same environment themselves (`RunRecord.environment`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contest.config import Config, as_dict
from contest.infra.machine import library_versions


def disclosure(cfg: Config) -> dict[str, Any]:
    """The CPU model, the environment a run records
    (`contest.evaluation.evaluate.environment`: machine facts, Spark, pyarrow, the JVM
    libraries) with every Python library's version beside it, and the effective
    configuration (passwords left out)."""
    # deferred: the evaluation pulls in pandas and pyspark; only when a record is made
    from contest.evaluation.evaluate import environment

    env = environment(Path(cfg.work_dir))
    env["libraries"] = library_versions()
    machine = env.get("machine") or {}
    return {
        "cpu_model": str(machine.get("cpu_model") or ""),
        "environment": env,
        "config": as_dict(cfg),
    }
