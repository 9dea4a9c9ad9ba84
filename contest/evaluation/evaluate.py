"""`contest evaluate`: the contest's procedure on this machine, for one strategy.

1 data (given, or generated and cached), 2 a clean table and metadata, 3 the Write
job timed as a whole spark-submit process, 4 the stored-size rule, 5 the metadata
merge, then the Read job timed as a whole process, 6 the oracle's check,
7 rows / (cores x (write s + read s)). Here: a run made, run and recorded (its
folders, table, work-folder lock, environment); the phases and the score are
procedure.py's, the run's state and timed jobs run.py's.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import platform
import time
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path

import pyarrow

from contest.config import Config, absolute_paths, as_dict
from contest.errors import UsageError
from contest.evaluation import submit
from contest.evaluation.phases import run_phases
from contest.evaluation.procedure import PHASES, drop_metadata, drop_outputs, score
from contest.evaluation.run import Run
from contest.evaluation.strategies import file_stem
from contest.infra.machine import check_local_cores, git_state, machine_facts, machine_id
from contest.infra.storage import is_object_store
from contest.peers.formats import is_peer
from contest.peers.native.libraries import versions as native_versions
from contest.peers.registry import package_sets
from contest.results.runs import RunRecord


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
        # The native libraries (each format folder's native.py), installed.
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


def drop_run(cfg: Config, record: RunRecord) -> None:
    """What one evaluation made, and nothing else: its table's metadata and folder and its
    result. Other runs' tables in the same work folder are left alone. A peer's table
    is its folder, and what its format keeps outside it (lakesoul-py's catalog entry)."""
    run = new_run(cfg, record.strategy, None, None, 0, None, None, lambda _: None)
    drop_metadata(run)
    drop_outputs(cfg, run.table_dir, run.result_dir)


def append_record(path: Path, record: dict) -> None:
    """One JSON line of a bench's own records (a run's record: `records.append_records`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
