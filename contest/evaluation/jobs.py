"""How a timed job is launched: its spark-submit command (a strategy's packages, jars
and cluster options), the config file and environment it runs with, its process, and
why it failed. `contest evaluate`, the benches and the workload runner all start their
Write, Read and compaction jobs through here.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from contest.config import Config, absolute_paths
from contest.config.stores import object_store_env
from contest.evaluation import submit
from contest.evaluation.submit import merge_options, packages_as_jars
from contest.infra import cds, lakesoul_jvm
from contest.infra.archive import build_py_files
from contest.infra.cluster import check_master
from contest.infra.lakesoul_jvm import helper_jar
from contest.infra.packages import ivy_home
from contest.infra.postgres import local_server_pids
from contest.infra.proc import ProcResult, run_timed
from contest.infra.spark import driver_java_options
from contest.infra.storage import is_object_store
from contest.peers.formats import runtime_of
from contest.peers.formats import submit_options as peer_submit_options


def scratch_dir(run_dir: Path) -> Path:
    """Spark's scratch folder of a run's timed jobs (spark.local.dir: shuffle and spill
    files): under the run's own folder, made and removed with each job, so a killed job
    leaves no blockmgr-* folders in /tmp and the run's disk is the run's."""
    return run_dir.absolute() / "spark-scratch"


@contextmanager
def scratch_folder(run_dir: Path) -> Iterator[Path]:
    """A job's scratch folder (scratch_dir), made for it and removed after it, also when
    it was killed; one that was there before is not the job's and stays."""
    scratch = scratch_dir(run_dir)
    made = not scratch.exists()
    scratch.mkdir(parents=True, exist_ok=True)
    try:
        yield scratch
    finally:
        if made:
            shutil.rmtree(scratch, ignore_errors=True)


def scratch_options(master: str, run_dir: Path) -> list[str]:
    """spark.local.dir under the run's folder for a local master; a cluster's executors
    keep their workers' own (SPARK_LOCAL_DIRS), a folder of this machine being no
    folder of theirs."""
    if not submit.is_local(master):
        return []
    return ["--conf", f"spark.local.dir={scratch_dir(run_dir)}"]


def job_script(stage: str) -> Path:
    """The spark-submit entry point of a stage inside the package: `write` or `read`, or
    `workload`, a workload lane's long-lived application (contest/cli/application.py)."""
    module = importlib.import_module(f"contest.{stage}")
    return Path(module.__file__ or "").parent / "__main__.py"


def spark_submit(
    cfg: Config,
    stage: str,
    cores: int,
    config_file: Path,
    args: list[str],
    master: str | None = None,
    options: list[str] | None = None,
    java_options: str = "",
) -> list[str]:
    """The timed job's command (`java_options`: the driver JVM's, besides the log's).
    Its JVM libraries are the pinned coordinates users load, resolved here, before the
    job starts, and handed to it as jars by path: no timed job of any strategy pays
    Ivy's resolution (packages_as_jars)."""
    exe = Path(sys.executable).parent / "spark-submit"
    # A strategy on LakeSoul's JVM libraries: its packages, jars and class path.
    jvm_args, jvm_options = lakesoul_jvm.submit_options(cfg)
    # A LakeSoul-library strategy's, a peer format's and the cluster's options.
    merged = merge_options(jvm_args, peer_submit_options(cfg), options or [])
    merged, _ = packages_as_jars(merged, ivy_home(cfg))
    return [
        str(exe),
        "--master",
        master or f"local[{cores}]",
        "--driver-memory",
        cfg.spark.driver_memory,
        "--driver-java-options",
        driver_java_options(cfg.spark, None, jvm_options, java_options),
        *scratch_options(master or "local", config_file.parent),
        *merged,
        str(job_script(stage)),
        "--config",
        str(config_file),
        *args,
    ]


# Debugging switches of native libraries that change what a timed job costs: with
# RUST_BACKTRACE set, LakeSoul's Rust IO captures a stack backtrace each time it builds an
# error value, also on its hot read path, which cost the lakesoul-stock read about a third
# of its merge CPU (results/lakesoul_stock_read.md). Timed jobs run with Rust's default.
TIMING_UNSAFE_ENV = ("RUST_BACKTRACE", "RUST_LIB_BACKTRACE")


def cli_command(config_file: Path | None, *args: str | Path) -> list[str]:
    """`contest ARGS` as a child process (this Python, the package's own CLI module: a
    harness module imports no CLI), with `--config config_file` when given."""
    config = ["--config", str(config_file)] if config_file is not None else []
    return [sys.executable, "-m", "contest.cli.main", *config, *map(str, args)]


def job_env(base: Mapping[str, str]) -> dict[str, str]:
    """The environment a timed job inherits: `base` without TIMING_UNSAFE_ENV."""
    return {k: v for k, v in base.items() if k not in TIMING_UNSAFE_ENV}


def child_config(cfg: Config) -> Config:
    """The config a timed job reads: folders absolute, and the project's jar (stock's
    helper, hudi-merger's record merger) named by path. On a cluster the job runs from a
    zip of the package, where the checkout's jvm/target cannot be found from the code."""
    child = absolute_paths(cfg)
    if child.spark.stock_helper_jar:
        return child
    spark = dataclasses.replace(child.spark, stock_helper_jar=str(helper_jar(cfg.spark)))
    return dataclasses.replace(child, spark=spark)


def child_env(cfg: Config) -> dict[str, str]:
    env = job_env(os.environ)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if cfg.pg.external:
        env["LAKESOUL_PG_PASSWORD"] = cfg.pg.password
    if cfg.s3.configured:
        env.update(object_store_env(cfg.s3))  # keys travel by environment, never by file
    return env


def job_failure(stage: str, job: ProcResult) -> str:
    if job.timed_out:
        return (
            f"{stage} job timed out: stopped after {job.seconds:.0f} s, at the run's time "
            f"cap (run_cap_s) (log {job.log})"
        )
    return f"{stage} job exited {job.returncode}: {failure_cause(job)} (log {job.log})"


def failure_cause(job: ProcResult) -> str:
    """Why a job failed: its own one-line error (`contest: ...`, what the CLI prints
    for any error it knows, Spark's unwrapped) when it printed one, since Spark's
    shutdown lines may follow it; else its last line."""
    try:
        lines = job.log.read_text(errors="replace").splitlines()
    except OSError:
        return job.last_line
    own = [ln.removeprefix("contest: ") for ln in lines if ln.startswith("contest: ")]
    return own[-1] if own else job.last_line


def native_command(
    cfg: Config,
    stage: str,
    cores: int,
    config_file: Path,
    args: list[str],
    master: str | None = None,
    options: list[str] | None = None,
    java_options: str = "",
) -> list[str]:
    """The timed job of a native implementation (kind NATIVE): the same entry point run
    by this Python, no spark-submit and no JVM; its cores reach it as the master
    local[N] every job gets, which it takes as its threads (contest/peers/native/job.py)."""
    return [
        sys.executable,
        str(job_script(stage)),
        "--config",
        str(config_file),
        "--set",
        f"spark.master={master or f'local[{cores}]'}",
        *args,
    ]


def run_job(
    cfg: Config,
    stage: str,
    cores: int,
    config_file: Path,
    env: dict,
    log: Path,
    args: list[str],
    master: str | None = None,
    options: list[str] | None = None,
    cap_s: float | None = None,
    on_start: Callable[[int], None] | None = None,
    poll_s: float = 0.25,
):
    """A timed spark-submit process, run in the evaluation's folder (not the checkout).
    The embedded PostgreSQL's work during the job is the job's, not noise. Past `cap_s`
    seconds it is stopped (ProcResult.timed_out). `on_start`: given its process id;
    `poll_s`: how often its memory and the noise are sampled."""
    started = time.perf_counter()
    # spark.cds: both JVMs start from the class-data archive when it is current.
    env, cds_option = cds.submit_env(cfg, env)
    launch = spark_submit if runtime_of(cfg).jvm else native_command
    cmd = launch(cfg, stage, cores, config_file, args, master, options, cds_option)
    prepare_s = round(time.perf_counter() - started, 3)
    with scratch_folder(config_file.parent):
        job = run_timed(
            cmd,
            log,
            env=env,
            cwd=config_file.parent,
            servers=local_server_pids(cfg),
            cap_s=cap_s,
            on_start=on_start,
            poll_s=poll_s,
        )
    job.prepare_s = prepare_s
    return job


def submit_options(
    cfg: Config,
    master: str,
    cores: int | None,
    data: Path | str,
    eval_dir: Path,
    result_dir: Path | str = "",
) -> list[str]:
    """Cluster options (a cluster gets the package zip); s3a when Spark reads batches
    from the object store, or may write the result there. Nothing for local runs on
    local data."""
    s3a = is_object_store(data) or is_object_store(result_dir)
    if submit.is_local(master) and not s3a:
        return []
    py_files = None
    if not submit.is_local(master):
        check_master(master)
        py_files = build_py_files(eval_dir.absolute())
    return submit.cluster_options(cfg, master, cores, py_files, s3a)
