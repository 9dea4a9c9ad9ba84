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
import json
import os
import platform
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pyarrow

from contest.config import Config, WorkloadConfig, absolute_paths, as_dict, to_toml
from contest.data.batches import BASE0_ROWS, BATCHES, UPDATE_BATCH_ROWS, discover, file_digests
from contest.data.checker import compare
from contest.data.oracle import config_budget
from contest.data.staging import staged
from contest.data.workload import OWN, schema_of_batch
from contest.engines import operator_refusal
from contest.errors import PhaseError, UsageError
from contest.evaluation import submit
from contest.evaluation.data_cache import cached_data, cached_expected
from contest.evaluation.jobs import (
    child_config,
    child_env,
    job_failure,
    run_job,
    submit_options,
)
from contest.evaluation.phases import Step, run_phases
from contest.evaluation.progress import heartbeat
from contest.evaluation.strategies import DEFAULT_SCALE, file_stem
from contest.infra.machine import Sample, check_local_cores, git_state, machine_facts, machine_id
from contest.infra.packages import require as require_packages
from contest.infra.postgres import resolve_connection
from contest.infra.proc import ProcResult
from contest.infra.s3server import ensure_bucket
from contest.infra.storage import configure, delete_tree, is_object_store
from contest.peers import change_check, formats
from contest.peers.formats import coordinates, is_peer, kind_of
from contest.peers.native.libraries import require_for as require_libraries
from contest.peers.native.libraries import versions as native_versions
from contest.peers.registry import package_sets
from contest.peers.write import folder_bytes, report_from_log
from contest.results.runs import JobLoad, RunRecord
from meta import catalog
from meta.commits import head_snapshot
from meta.connection import check_reachable
from meta.merge import merge_table

SCALE1_ROWS = BASE0_ROWS + (BATCHES - 1) * UPDATE_BATCH_ROWS
SIZE_RULE_BYTES = 2_000_000_000  # the contest's stored-size floor at scale 1


def scale_of(rows: int, workload: WorkloadConfig | None = None) -> float:
    """Rows as a scale: of the contest's 30M rows, or of a workload's rows at scale 1."""
    if workload is None:
        return rows / SCALE1_ROWS
    return rows / (workload.first_rows + (workload.batches - 1) * workload.batch_rows)


def environment(work: Path | None = None) -> dict:
    """What ran a record's jobs: the libraries' versions, the JVM libraries each
    strategy may load (pinned coordinates), the machine (a full disclosure's facts,
    contest/infra/machine.py) and the commit."""
    import pyspark  # deferred: pyspark is slow to import (JVM-backed); only where Spark runs

    try:
        lakesoul = version("lakesoul")
    except Exception:
        lakesoul = "unknown"
    commit, _ = git_state(Path(__file__).resolve().parent)
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
        "machine": machine_facts(work or Path.cwd()),
        "jvm_packages": {name: list(coords) for name, coords in package_sets().items()},
        # The native engines' Python libraries (each format folder's native.py), installed.
        "native_libraries": native_versions(),
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
    drop_table_after_read: bool = False,
    say: Callable[[str], None] = print,
) -> RunRecord:
    """Run the procedure; returns the record (correct=False with the failing phase named).
    Holds the work folder's lock throughout (see `work_lock`). Its folders are made
    absolute first: the timed jobs run in the evaluation's folder, not this one.
    `after_write` runs once the write succeeded, untimed: from then on the batches are
    not read again (the oracle's result is already computed), so a caller that owns
    them may free their disk there. `drop_table_after_read` removes the table's files once
    the read succeeded, untimed and before the check: they are not read again (its size
    and files are in its metadata), and the check spills where they were."""
    check_local_cores(cores, master, os.cpu_count())  # before anything is touched
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
            drop_table_after_read=drop_table_after_read,
            say=say,
        )


@dataclass
class Run:
    """What the phases of one evaluation share: its settings, folders, record, and what
    each phase leaves for the next."""

    cfg: Config
    strategy: str
    record: RunRecord
    say: Callable[[str], None]
    data: Path | str | None
    scale: float | None
    seed: int
    asked_cores: int | None
    after_write: Callable[[], None] | None
    peer: bool
    eval_dir: Path
    table_name: str
    table_dir: str
    result_dir: Path | str
    rows: int = 0
    expected: Path | None = None
    conn: Any = None
    table: Any = None
    config_file: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    submit_opts: list[str] = field(default_factory=list)
    write: ProcResult | None = None
    read: ProcResult | None = None
    drop_table_after_read: bool = False


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
    drop_table_after_read: bool,
    say: Callable[[str], None],
) -> RunRecord:
    started = time.perf_counter()
    run = new_run(cfg, strategy, data, scale, seed, cores, after_write, say)
    run.drop_table_after_read = drop_table_after_read
    run.record.master = submit.master_of(master, run.record.cores)
    run_phases(run, PHASES, run.record, say, strategy)
    rec = run.record
    score(rec)
    rec.total_s = round(time.perf_counter() - started, 3)
    say(
        f"[{rec.total_s:7.1f}s] {strategy}: "
        + ("correct" if rec.correct else f"FAILED in {rec.failed_phase}")
        + (f": {rec.error.splitlines()[0]}" if rec.error else "")
    )
    env = environment(cfg.work_path)
    rec.git_commit, rec.git_dirty = git_state(Path(__file__).resolve().parent)
    env["git_dirty"] = rec.git_dirty
    rec.machine_id, rec.machine_cores = machine_id(), env["machine_cores"]
    rec.environment, rec.config = env, as_dict(cfg)
    rec.when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return rec


def table_name_of(strategy: str, work: Path) -> str:
    """The evaluation's table: `ccf_<strategy>_<8 hex of the work folder>`. The clean
    phase drops it by name, so the name is the work folder's own: two evaluations in
    different work folders never drop (or take) each other's table."""
    where = str(Path(work).resolve())
    stem = file_stem(strategy).replace("-", "_")
    return f"ccf_{stem}_{hashlib.sha256(where.encode()).hexdigest()[:8]}"


def new_run(
    cfg: Config,
    strategy: str,
    data: Path | str | None,
    scale: float | None,
    seed: int,
    cores: int | None,
    after_write: Callable[[], None] | None,
    say: Callable[[str], None],
) -> Run:
    """The run's folders and its empty record: nothing is touched yet."""
    eval_dir = cfg.work_path / "eval"
    table_name = table_name_of(strategy, cfg.work_path)
    tables_root = cfg.tables_dir or str((eval_dir / "tables").absolute())
    result_dir: Path | str = cfg.result_dir or eval_dir / "result" / "ccf"
    if not is_object_store(result_dir):
        result_dir = Path(result_dir).absolute()
    record = RunRecord(
        strategy,
        run_id=RunRecord.new_id(),
        cores=cores or os.cpu_count() or 1,
        table=table_name,
        result_dir=str(result_dir),
    )
    return Run(
        cfg=cfg,
        strategy=strategy,
        record=record,
        say=say,
        data=data,
        scale=scale,
        seed=seed,
        asked_cores=cores,
        after_write=after_write,
        peer=is_peer(cfg),
        eval_dir=eval_dir,
        table_name=table_name,
        table_dir=f"{tables_root.rstrip('/')}/{table_name}",
        result_dir=result_dir,
    )


def phase_data(run: Run) -> None:
    """The batches (generated and cached when not given) and the oracle's result."""
    cfg = run.cfg
    _check_extra_columns(cfg)
    if run.data is None:
        scale = run.scale if run.scale is not None else DEFAULT_SCALE
        run.data = cached_data(cfg, scale, run.seed, run.say)
    if not is_object_store(str(run.data)):
        run.data = Path(run.data).absolute()  # the jobs run in the evaluation's folder
    source = run.data
    # Files grouped into batches or ordered by a column: staged once, untimed.
    run.data = staged(run.data, cfg.workload, cfg.work_path, run.say)
    found = schema_of_batch(cfg.workload)
    batches = discover(run.data, cfg.write.versions or None, found)
    # Change data the strategy's format cannot take: refused now, before any data is
    # written (contest/peers/change_check.py), recorded as the operators' refusal is.
    why = change_check.refusal_of(cfg, found, run.strategy)
    if why:
        raise PhaseError(f"workload {cfg.workload.name}: {why}")
    run.rows = sum(b.rows for b in batches)
    run.record.data, run.record.rows = str(source), run.rows
    if cfg.workload.payload == OWN:  # a user's files: named by their digests
        files = batches if source == run.data else discover(source, None, None)
        run.record.data_files = file_digests(files)
    run.record.scale = round(scale_of(run.rows, cfg.workload), 6)
    run.expected = cached_expected(cfg, run.data, cfg.write.versions, run.say)


def _check_extra_columns(cfg: Config) -> None:
    """A workload operator the strategy's format cannot express (contest/data/operators.py,
    contest.engines.operator_refusal): refused up front, not found wrong at the end."""
    why = operator_refusal(cfg)
    if why:
        raise PhaseError(f"workload {cfg.workload.name}: {why}")


def phase_clean(run: Run) -> None:
    """The evaluation's table (metadata and folder) and result dropped; the jobs'
    config file and options written."""
    cfg = run.cfg
    if not run.peer:
        run.conn = resolve_connection(cfg)
        check_reachable(run.conn)
    _drop_metadata(run)
    for where in (run.table_dir, str(run.result_dir)):
        if is_object_store(where):
            configure(cfg.s3)
            ensure_bucket(where)
    _drop_outputs(cfg, run.table_dir, run.result_dir)
    run.eval_dir.mkdir(parents=True, exist_ok=True)
    run.config_file = run.eval_dir / f"{file_stem(run.strategy)}.toml"
    run.config_file.write_text(to_toml(child_config(cfg)))
    run.env = child_env(cfg)
    assert run.data is not None
    run.submit_opts = submit_options(
        cfg, run.record.master, run.asked_cores, run.data, run.eval_dir, run.result_dir
    )


def _drop_metadata(run: Run) -> None:
    """What the run's table keeps outside its folder: LakeSoul's metadata for the
    harness's table, the format's own (`PeerFormat.forget`: lakesoul-py's catalog
    entry) for a peer's."""
    if run.peer:
        formats.of(run.cfg).forget(run.cfg, Path(run.table_dir))
    else:
        conn = run.conn or resolve_connection(run.cfg)
        catalog.drop_table(conn, run.table_name, run.cfg.table.namespace)


def _drop_outputs(cfg: Config, table_dir: str, result_dir: Path | str) -> None:
    """The run's table folder, and its result when it is the evaluation's own folder (a
    given one: see the read)."""
    delete_tree(table_dir)
    if not cfg.result_dir:
        shutil.rmtree(result_dir, ignore_errors=True)


def drop_run(cfg: Config, record: RunRecord) -> None:
    """What one evaluation made, and nothing else: its table's metadata and folder and its
    result. Other runs' tables in the same work folder are left alone. A peer's table
    is its folder, and what its format keeps outside it (lakesoul-py's catalog entry)."""
    run = new_run(cfg, record.strategy, None, None, 0, None, None, lambda _: None)
    _drop_metadata(run)
    _drop_outputs(cfg, run.table_dir, run.result_dir)


def phase_packages(run: Run) -> None:
    """A peer's libraries resolved now, untimed: one that cannot be had is one line (a
    JVM package, or a native engine's Python library at its pinned version)."""
    require_packages(coordinates(run.cfg))
    require_libraries(run.cfg)


def phase_write(run: Run) -> None:
    args = ["--data", str(run.data), "--table", run.table_dir, "--name", run.table_name]
    run.write = timed_job(run, "write", args)
    if run.peer:
        run.record.peer_write = report_from_log(run.write.log)
    if not run.write.ok:
        raise PhaseError(job_failure("write", run.write))
    if run.after_write is not None:
        run.after_write()


def phase_size(run: Run) -> None:
    """The contest's stored-size rule: more bytes than the floor at this scale."""
    if run.peer:  # no LakeSoul commits: the table folder (data, logs, metadata)
        stored = folder_bytes(Path(run.table_dir))
    else:
        run.table = catalog.get_table(run.conn, run.table_name, run.cfg.table.namespace)
        _, commits = head_snapshot(run.conn, run.table)
        stored = sum(f.size for c in commits for f in c.files)
    rec = run.record
    rec.stored_bytes, rec.size_floor_bytes = stored, int(SIZE_RULE_BYTES * scale_of(run.rows))
    rec.size_ok = stored > rec.size_floor_bytes


def phase_merge(run: Run) -> None:
    """The metadata merge (untimed by the score, recorded apart)."""
    t0 = time.perf_counter()
    merge_table(run.conn, run.table)
    run.record.merge_s = round(time.perf_counter() - t0, 4)


def phase_read(run: Run) -> None:
    table = run.table_dir if run.peer else run.table_name
    run.read = timed_job(run, "read", ["--table", table, "--out", str(run.result_dir)])
    if not run.read.ok:
        raise PhaseError(job_failure("read", run.read))
    if run.drop_table_after_read:
        run.say("removing the table's files (read; the check needs only the result)")
        delete_tree(run.table_dir)


def phase_cores(run: Run) -> None:
    """The cores the jobs were granted: a cluster may give fewer than asked."""
    assert run.write is not None and run.read is not None
    granted = {"write": submit.job_cores(run.write.log), "read": submit.job_cores(run.read.log)}
    run.record.spark_cores = granted
    run.record.cores = submit.scored_cores(run.asked_cores, granted)


def phase_check(run: Run) -> None:
    assert run.expected is not None
    report = compare(run.result_dir, run.expected, budget=config_budget(run.cfg))
    run.record.check = report.render().splitlines()[0]
    run.record.correct = report.ok
    if not report.ok:
        raise PhaseError(report.render())


def _launcher(run: Run) -> str:
    return kind_of(run.cfg).launcher


def _lakesoul(run: Run) -> bool:
    return not run.peer


PHASES: tuple[Step[Run], ...] = (
    Step(lambda r: "data", phase_data),
    Step(lambda r: "clean", phase_clean),
    Step(lambda r: f"packages ({r.cfg.peer.format})", phase_packages, lambda r: r.peer),
    Step(lambda r: f"write ({r.rows:,} rows, {_launcher(r)} {r.record.master})", phase_write),
    Step(lambda r: "size check", phase_size),
    Step(lambda r: "metadata merge", phase_merge, _lakesoul),  # a peer's snapshot is its own
    Step(lambda r: f"read ({_launcher(r)})", phase_read),
    Step(lambda r: "cores", phase_cores),
    Step(lambda r: "check (oracle)", phase_check),
)


def score(rec: RunRecord) -> None:
    """Rows per core per second: of the whole run only when the result is correct, of
    a job only when that job ran and succeeded."""
    n, cores = rec.rows or 0, rec.cores
    wrote, read = rec.phase_ok("write"), rec.phase_ok("read")
    total = (rec.write_s or 0) + (rec.read_s or 0)
    rec.rows_per_core_s = round(n / (cores * total), 1) if total and rec.correct else None
    rec.write_rows_per_core_s = (
        round(n / (cores * rec.write_s), 1) if wrote and rec.write_s else None
    )
    rec.read_rows_per_core_s = round(n / (cores * rec.read_s), 1) if read and rec.read_s else None


def run_stage_job(run: Run, stage: str, log: Path, args: list[str]) -> ProcResult:
    """One Write or Read job of the run, with the run's config file, environment,
    cores, master and spark-submit options (evaluate's and the workload runner's), and
    what is left of the run's time cap (run_cap_s) after its jobs so far."""
    assert run.config_file is not None
    return run_job(
        run.cfg,
        stage,
        run.record.cores,
        run.config_file,
        run.env,
        log,
        args,
        run.record.master,
        run.submit_opts,
        cap_s=cap_left(run.cfg.run_cap_s, run.record.write_s, run.record.read_s),
    )


def cap_left(cap_s: float, *spent: float | None) -> float | None:
    """Seconds a run's next job may take under its cap (None: no cap); at least a
    second, so a job past the cap already still starts and is stopped at once."""
    if cap_s <= 0:
        return None
    return max(cap_s - sum(s or 0.0 for s in spent), 1.0)


def timed_job(run: Run, stage: str, args: list[str]) -> ProcResult:
    """A timed job with the machine's load and CPU steal sampled just before and just
    after it (untimed) and the noise measured during it, its seconds and peak memory
    into the record. Its log's path is
    said first, and its Spark UI's address once the job's session is up."""
    assert run.config_file is not None
    log = run.eval_dir / "logs" / f"{file_stem(run.strategy)}-{stage}.log"
    run.say(f"{run.strategy}: {stage} job's log (per-batch lines): {log}")
    before = Sample.take(run.cfg.load_window_s)
    with heartbeat(f"{run.strategy}: {stage}", run.say, log=log, every_s=None):
        job = run_stage_job(run, stage, log, args)
    after = Sample.take(run.cfg.load_window_s)
    run.record.load[stage] = JobLoad.around(before, after, job.noise)
    run.record.timed_out = run.record.timed_out or job.timed_out
    run.record.prepare_s[stage] = job.prepare_s
    setattr(run.record, f"{stage}_s", round(job.seconds, 3))
    setattr(run.record, f"{stage}_peak_rss_bytes", job.peak_rss_bytes)
    setattr(run.record, f"{stage}_peak_process_rss_bytes", job.peak_process_rss_bytes)
    return job


def append_record(path: Path, record: dict) -> None:
    """One JSON line of a bench's own records (a run's record: `records.append_records`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
