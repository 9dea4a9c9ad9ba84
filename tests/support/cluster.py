"""Jobs on the test session's standalone cluster: submitted as `contest evaluate` submits
them (the package zip as --py-files, run in another folder than the checkout)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import psutil

from contest.config import Config, absolute_paths, to_toml
from contest.evaluation.jobs import child_env, spark_submit
from contest.evaluation.submit import cluster_options
from contest.infra.archive import build_py_files


def submit(cfg: Config, stage: str, master: str, args: list[str], folder: Path) -> subprocess.Popen:
    """Start `contest <stage>` with spark-submit on `master`; output in folder/<stage>.log,
    Spark's event log (every task's end and reason) in folder/events."""
    folder.mkdir(parents=True, exist_ok=True)
    config_file = folder / "job.toml"
    config_file.write_text(to_toml(absolute_paths(cfg)))
    (folder / "events").mkdir(exist_ok=True)
    opts = cluster_options(cfg, master, 2, build_py_files(folder), s3a=False)
    opts += ["--conf", "spark.eventLog.enabled=true"]
    opts += ["--conf", f"spark.eventLog.dir=file://{folder / 'events'}"]
    cmd = spark_submit(cfg, stage, 2, config_file, args, master, opts)
    log = (folder / f"{stage}.log").open("wb")
    return subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, env=child_env(cfg), cwd=folder
    )


def python_started(pid: int) -> bool:
    """A PySpark worker daemon runs under `pid` (a Python task started there)."""
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return False
    for kid in kids:
        try:
            if "pyspark.daemon" in " ".join(kid.cmdline()):
                return True
        except psutil.Error:
            continue
    return False


def executor_of(worker_pid: int) -> int | None:
    """The executor JVM a worker launched, if any."""
    try:
        kids = psutil.Process(worker_pid).children(recursive=True)
    except psutil.Error:
        return None
    for kid in kids:
        try:
            if "CoarseGrainedExecutorBackend" in " ".join(kid.cmdline()):
                return kid.pid
        except psutil.Error:
            continue
    return None


def wait_for(check, proc: subprocess.Popen, timeout: float = 300) -> bool:
    """Poll `check()` while the job runs; False when the job ended first."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def submit_script(cfg: Config, script: Path, cluster: dict, folder: Path) -> list[str]:
    """spark-submit of a plain script on the cluster, with the package zip."""
    import sys

    opts = cluster_options(cfg, cluster["master_url"], 2, build_py_files(folder), s3a=False)
    exe = Path(sys.executable).parent / "spark-submit"
    return [str(exe), "--master", cluster["master_url"], *opts, str(script)]


def failed_tasks(folder: Path) -> list[str]:
    """The end reasons of the tasks that did not succeed, from Spark's event log."""
    import json

    reasons = []
    for log in (folder / "events").iterdir():
        for line in log.read_text(errors="replace").splitlines():
            event = json.loads(line)
            if event.get("Event") == "SparkListenerTaskEnd":
                reason = event.get("Task End Reason", {}).get("Reason")
                if reason != "Success":
                    reasons.append(str(reason))
    return reasons
