"""`contest evaluate`: the contest's procedure on this machine, for one strategy.

1 data (given, or generated and cached), 2 a clean table and metadata, 3 the Write
job timed as a whole spark-submit process, 4 the stored-size rule, 5 the metadata
merge, then the Read job timed as a whole process, 6 the oracle's check,
7 rows / (cores x (write s + read s)).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from contest.config import Config, WorkloadConfig, absolute_paths, as_dict, to_toml
from contest.data.batches import BASE0_ROWS, BATCHES, UPDATE_BATCH_ROWS, discover
from contest.errors import UsageError
from contest.evaluation.strategies import DEFAULT_SCALE
from contest.infra.packages import require as require_packages
from contest.infra.proc import ProcResult
from contest.infra.storage import configure, delete_tree, is_object_store
from contest.peers.formats import coordinates, is_peer
from contest.peers.write import folder_bytes, report_from_log

SCALE1_ROWS = BASE0_ROWS + (BATCHES - 1) * UPDATE_BATCH_ROWS
SIZE_RULE_BYTES = 2_000_000_000  # the contest's stored-size floor at scale 1


def scale_of(rows: int, workload: WorkloadConfig | None = None) -> float:
    """Rows as a scale: of the contest's 30M rows, or of a workload's rows at scale 1."""
    if workload is None:
        return rows / SCALE1_ROWS
    return rows / (workload.first_rows + (workload.batches - 1) * workload.batch_rows)


def cached_data(cfg: Config, scale: float, seed: int, say: Callable[[str], None]) -> Path:
    """Generated data of the configured workload, kept per workload, scale and seed (the
    contest's shape keeps the folder names it had before workloads)."""
    from contest.data.generator import generate
    from contest.data.workload import cache_label

    label = cache_label(cfg.workload)
    folder = cfg.work_path / "data" / f"{label + '-' if label else ''}scale-{scale:g}-seed-{seed}"
    marker = folder / ".complete"
    if not marker.exists():
        say(f"generating scale {scale:g} data of workload {cfg.workload.name} into {folder}")
        generate(folder, scale, seed, workload=cfg.workload)
        marker.write_text("ok\n")
    return folder


def cached_expected(
    cfg: Config, data: Path | str, versions: str, say: Callable[[str], None]
) -> Path:
    """The oracle's result for a data folder, kept per folder, files, versions and merge
    operators (a workload's extra columns have theirs)."""
    from contest.data.oracle import config_budget, expected_result
    from contest.data.workload import contract_operators, workload_schema

    batches = discover(data, versions or None, workload_schema(cfg.workload))
    ops = contract_operators(cfg.workload)
    where = str(data) if is_object_store(data) else str(Path(data).resolve())
    ident = json.dumps([where, versions] + [[b.name, b.bytes, b.mtime_ns] for b in batches])
    if cfg.workload.columns:  # the contest's columns keep the keys they had
        ident += json.dumps(ops)
    key = hashlib.sha256(ident.encode()).hexdigest()[:16]
    out = cfg.work_path / "oracle" / f"{key}.parquet"
    if not out.exists():
        say("computing the expected result (oracle)")
        expected_result(batches, out, budget=config_budget(cfg), operators=ops)
    return out


def job_script(stage: str) -> Path:
    """The spark-submit entry point of a stage (`write` or `read`) inside the package."""
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
) -> list[str]:
    exe = Path(sys.executable).parent / "spark-submit"
    from contest.evaluation.submit import merge_options
    from contest.infra.lakesoul_jvm import submit_options
    from contest.infra.spark import log_java_option
    from contest.peers.formats import submit_options as peer_submit_options

    # A strategy on LakeSoul's JVM libraries: its packages, jars and class path.
    jvm_args, jvm_options = submit_options(cfg)
    return [
        str(exe),
        "--master",
        master or f"local[{cores}]",
        "--driver-memory",
        cfg.spark.driver_memory,
        "--driver-java-options",
        f"{log_java_option()} {jvm_options}".strip(),
        # A LakeSoul-library strategy's, a peer format's and the cluster's options.
        *merge_options(jvm_args, peer_submit_options(cfg), options or []),
        str(job_script(stage)),
        "--config",
        str(config_file),
        *args,
    ]


def child_env(cfg: Config) -> dict[str, str]:
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if cfg.pg.external:
        env["LAKESOUL_PG_PASSWORD"] = cfg.pg.password
    if cfg.s3.configured:
        from contest.config import object_store_env

        env.update(object_store_env(cfg.s3))  # keys travel by environment, never by file
    return env


def environment() -> dict:
    import pyarrow
    import pyspark

    try:
        from importlib.metadata import version

        lakesoul = version("lakesoul")
    except Exception:
        lakesoul = "unknown"
    try:
        source = Path(__file__).resolve().parent
        commit = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    mem = 0
    try:
        with open("/proc/meminfo") as fh:
            mem = int(fh.readline().split()[1]) * 1024
    except OSError:
        pass
    return {
        "spark": pyspark.__version__,
        "lakesoul_python": lakesoul,
        "pyarrow": pyarrow.__version__,
        "python": platform.python_version(),
        "machine_cores": os.cpu_count(),
        "machine_memory_bytes": mem,
        "git_commit": commit,
    }


@contextlib.contextmanager
def work_lock(eval_dir: Path) -> Iterator[None]:
    """One evaluation at a time per work folder: two would drop each other's table and
    result. A second one fails at once, naming the folder and what to do."""
    eval_dir.mkdir(parents=True, exist_ok=True)
    with (eval_dir / ".lock").open("a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            raise UsageError(
                f"another evaluation ({holder}) is running in {eval_dir.parent}: give this "
                "one its own work folder (--work DIR)"
            ) from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"pid {os.getpid()}")
        fh.flush()
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def evaluate(
    cfg: Config,
    strategy: str,
    *,
    data: Path | str | None = None,
    scale: float | None = None,
    seed: int = 2022,
    cores: int | None = None,
    master: str | None = None,
    after_write: Callable[[], None] | None = None,
    say: Callable[[str], None] = print,
) -> dict:
    """Run the procedure; returns the record (correct=False with the failing phase named).
    Holds the work folder's lock throughout (see `work_lock`). Its folders are made
    absolute first: the timed jobs run in the evaluation's folder, not this one.
    `after_write` runs once the write succeeded, untimed: from then on the batches are
    not read again (the oracle's result is already computed), so a caller that owns
    them may free their disk there."""
    cfg = absolute_paths(cfg)
    with work_lock(cfg.work_path / "eval"):
        return _evaluate(
            cfg,
            strategy,
            data=data,
            scale=scale,
            seed=seed,
            cores=cores,
            master=master,
            after_write=after_write,
            say=say,
        )


def _evaluate(
    cfg: Config,
    strategy: str,
    *,
    data: Path | str | None,
    scale: float | None,
    seed: int,
    cores: int | None,
    master: str | None,
    after_write: Callable[[], None] | None,
    say: Callable[[str], None],
) -> dict:
    from contest.data.checker import compare
    from contest.data.oracle import config_budget
    from contest.evaluation import submit
    from contest.infra.postgres import resolve_connection
    from meta import catalog
    from meta.commits import head_snapshot
    from meta.connection import check_reachable
    from meta.merge import merge_table

    asked_cores = cores
    peer = is_peer(cfg)
    cores = cores or os.cpu_count() or 1
    master = submit.master_of(master, cores)
    record: dict = {
        "master": master,
        "strategy": strategy,
        "cores": cores,
        "correct": False,
        "size_ok": False,
        "write_s": None,
        "read_s": None,
        "merge_s": None,
        "failed_phase": None,
    }
    eval_dir = cfg.work_path / "eval"
    table_name = f"ccf_{strategy.replace('-', '_')}"
    tables_root = cfg.tables_dir or str((eval_dir / "tables").absolute())
    table_dir = f"{tables_root.rstrip('/')}/{table_name}"
    result_dir: Path | str = cfg.result_dir or eval_dir / "result" / "ccf"
    if not is_object_store(result_dir):
        result_dir = Path(result_dir).absolute()
    logs = eval_dir / "logs"
    record["result_dir"] = str(result_dir)
    started = time.perf_counter()

    def phase(name: str) -> None:
        record["failed_phase"] = name
        say(f"[{time.perf_counter() - started:7.1f}s] {strategy}: {name}")

    try:
        phase("data")
        _check_extra_columns(cfg, peer)
        if data is None:
            data = cached_data(cfg, scale if scale is not None else DEFAULT_SCALE, seed, say)
        if not is_object_store(str(data)):
            data = Path(data).absolute()  # the jobs run in the evaluation's folder
        batches = discover(data, cfg.write.versions or None, None)
        rows = sum(b.rows for b in batches)
        record.update(data=str(data), rows=rows, scale=round(scale_of(rows, cfg.workload), 6))
        expected = cached_expected(cfg, data, cfg.write.versions, say)

        phase("clean")
        if not peer:  # a peer table has no metadata in PostgreSQL
            conn = resolve_connection(cfg)
            check_reachable(conn)
            catalog.drop_table(conn, table_name, cfg.table.namespace)

        if is_object_store(table_dir):
            from contest.infra.s3server import ensure_bucket

            configure(cfg.s3)
            ensure_bucket(table_dir)
        delete_tree(table_dir)
        if is_object_store(result_dir):
            from contest.infra.s3server import ensure_bucket

            configure(cfg.s3)
            ensure_bucket(str(result_dir))
        if not cfg.result_dir:  # the evaluation's own folder (a given one: see the read)
            shutil.rmtree(result_dir, ignore_errors=True)
        eval_dir.mkdir(parents=True, exist_ok=True)
        config_file = eval_dir / f"{strategy}.toml"
        config_file.write_text(to_toml(absolute_paths(cfg)))
        env = child_env(cfg)
        submit_opts = _submit_options(cfg, master, asked_cores, data, eval_dir, result_dir)
        if peer:
            # Resolved now, untimed: a library that cannot be had is one line naming it.
            phase(f"packages ({cfg.peer.format})")
            require_packages(coordinates(cfg))

        phase(f"write ({rows:,} rows, spark-submit {master})")
        w = run_job(
            cfg,
            "write",
            cores,
            config_file,
            env,
            logs / f"{strategy}-write.log",
            ["--data", str(data), "--table", str(table_dir), "--name", table_name],
            master,
            submit_opts,
        )
        if peer:
            record["peer_write"] = report_from_log(w.log)
        record_job(record, "write", w)
        if after_write is not None:
            after_write()

        phase("size check")
        if peer:  # no LakeSoul commits: the table folder (data, logs, metadata)
            stored = folder_bytes(Path(table_dir))
        else:
            table = catalog.get_table(conn, table_name, cfg.table.namespace)
            _, commits = head_snapshot(conn, table)
            stored = sum(f.size for c in commits for f in c.files)
        floor = int(SIZE_RULE_BYTES * scale_of(rows))
        record.update(stored_bytes=stored, size_floor_bytes=floor, size_ok=stored > floor)

        if not peer:  # a peer's snapshot is its format's own: nothing to merge
            phase("metadata merge")
            t0 = time.perf_counter()
            merge_table(conn, table)
            record["merge_s"] = round(time.perf_counter() - t0, 4)

        phase("read (spark-submit)")
        r = run_job(
            cfg,
            "read",
            cores,
            config_file,
            env,
            logs / f"{strategy}-read.log",
            ["--table", str(table_dir) if peer else table_name, "--out", str(result_dir)],
            master,
            submit_opts,
        )
        record_job(record, "read", r)

        phase("cores")
        granted = {"write": submit.job_cores(w.log), "read": submit.job_cores(r.log)}
        record["spark_cores"] = granted
        cores = record["cores"] = submit.scored_cores(asked_cores, granted)

        phase("check (oracle)")
        report = compare(result_dir, expected, budget=config_budget(cfg))
        record["check"] = report.render().splitlines()[0]
        record["correct"] = report.ok
        if not report.ok:
            raise PhaseError(report.render())
        record["failed_phase"] = None
    except PhaseError as exc:
        record["error"] = str(exc)
    except Exception as exc:  # any failure still yields the record, naming the phase
        record["error"] = f"{exc.__class__.__name__}: {exc}"
    total = (record["write_s"] or 0) + (record["read_s"] or 0)
    n = record.get("rows") or 0
    record["rows_per_core_s"] = (
        round(n / (cores * total), 1) if total and record["correct"] else None
    )
    record["write_rows_per_core_s"] = (
        round(n / (cores * record["write_s"]), 1) if record["write_s"] else None
    )
    record["read_rows_per_core_s"] = (
        round(n / (cores * record["read_s"]), 1) if record["read_s"] else None
    )
    record["total_s"] = round(time.perf_counter() - started, 3)
    say(
        f"[{record['total_s']:7.1f}s] {strategy}: "
        + ("correct" if record["correct"] else f"FAILED in {record['failed_phase']}")
        + (f": {record['error'].splitlines()[0]}" if record.get("error") else "")
    )
    record.update(
        environment=environment(),
        config=as_dict(cfg),
        when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    )
    return record


def _check_extra_columns(cfg: Config, peer: bool) -> None:
    """A workload's extra columns are carried by the harness's merge-on-read write and
    read only (baseline-cow's join, lakesoul-stock's rewrites and the peers' MERGE
    expressions name the contest's columns): refused up front, not found wrong at the end."""
    if cfg.workload.columns and (peer or cfg.write.mode != "mor" or cfg.write.engine != "harness"):
        raise PhaseError(
            f"workload {cfg.workload.name}: its extra columns are carried only by the "
            "harness's merge-on-read strategies (optimized, baseline-mor) so far"
        )


def record_job(record: dict, stage: str, job: ProcResult) -> None:
    """A timed job's seconds and peak memory into the record; a failed job ends the run."""
    record.update(
        {
            f"{stage}_s": round(job.seconds, 3),
            f"{stage}_peak_rss_bytes": job.peak_rss_bytes,
            f"{stage}_peak_process_rss_bytes": job.peak_process_rss_bytes,
        }
    )
    if not job.ok:
        raise PhaseError(f"{stage} job exited {job.returncode}: {job.last_line} (log {job.log})")


class PhaseError(RuntimeError):
    pass


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
):
    """A timed spark-submit process, run in the evaluation's folder (not the checkout)."""
    from contest.infra.proc import run_timed

    return run_timed(
        spark_submit(cfg, stage, cores, config_file, args, master, options),
        log,
        env=env,
        cwd=config_file.parent,
    )


def _submit_options(
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
    from contest.evaluation import submit
    from contest.infra.storage import is_object_store

    s3a = is_object_store(data) or is_object_store(result_dir)
    if submit.is_local(master) and not s3a:
        return []
    py_files = None
    if not submit.is_local(master):
        from contest.infra.archive import build_py_files
        from contest.infra.cluster import check_master

        check_master(master)
        py_files = build_py_files(eval_dir.absolute())
    return submit.cluster_options(cfg, master, cores, py_files, s3a)


def append_record(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
