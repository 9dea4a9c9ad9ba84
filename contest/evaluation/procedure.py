"""The contest's procedure as the phases of one run (data, clean, packages, write, the
stored-size rule, metadata merge, read, cores, the oracle's check) and its score: what
each phase does to the run's shared state (contest/evaluation/run.py), in order
(`PHASES`, run by contest/evaluation/phases.py)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from contest.config import Config, WorkloadConfig, to_toml
from contest.data.batches import BASE0_ROWS, BATCHES, UPDATE_BATCH_ROWS, discover, file_digests
from contest.data.checker import compare
from contest.data.oracle import config_budget
from contest.data.staging import staged
from contest.data.workload import OWN, schema_of_batch
from contest.engines import operator_refusal
from contest.errors import PhaseError
from contest.evaluation import submit
from contest.evaluation.data_cache import cached_data, cached_expected
from contest.evaluation.jobs import child_config, child_env, job_failure, submit_options
from contest.evaluation.phases import Step
from contest.evaluation.run import Run, timed_job
from contest.evaluation.strategies import DEFAULT_SCALE, file_stem
from contest.infra.packages import require as require_packages
from contest.infra.postgres import resolve_connection
from contest.infra.s3server import ensure_bucket
from contest.infra.storage import configure, delete_tree, is_object_store
from contest.peers import change_check, formats
from contest.peers.formats import coordinates, runtime_of
from contest.peers.native.libraries import require_for as require_libraries
from contest.peers.write import folder_bytes, report_from_log
from contest.results.runs import RunRecord
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
    drop_metadata(run)
    for where in (run.table_dir, str(run.result_dir)):
        if is_object_store(where):
            configure(cfg.s3)
            ensure_bucket(where)
    drop_outputs(cfg, run.table_dir, run.result_dir)
    run.eval_dir.mkdir(parents=True, exist_ok=True)
    run.config_file = run.eval_dir / f"{file_stem(run.strategy)}.toml"
    run.config_file.write_text(to_toml(child_config(cfg)))
    run.env = child_env(cfg)
    assert run.data is not None
    run.submit_opts = submit_options(
        cfg, run.record.master, run.asked_cores, run.data, run.eval_dir, run.result_dir
    )


def drop_metadata(run: Run) -> None:
    """What the run's table keeps outside its folder: LakeSoul's metadata for the
    harness's table, the format's own (`PeerFormat.forget`: lakesoul-py's catalog
    entry) for a peer's."""
    if run.peer:
        formats.of(run.cfg).forget(run.cfg, Path(run.table_dir))
    else:
        conn = run.conn or resolve_connection(run.cfg)
        catalog.drop_table(conn, run.table_name, run.cfg.table.namespace)


def drop_outputs(cfg: Config, table_dir: str, result_dir: Path | str) -> None:
    """The run's table folder, and its result when it is the evaluation's own folder (a
    given one: see the read)."""
    delete_tree(table_dir)
    if not cfg.result_dir:
        shutil.rmtree(result_dir, ignore_errors=True)


def phase_packages(run: Run) -> None:
    """A peer's libraries resolved now, untimed: one that cannot be had is one line (a
    JVM package, or a native library at its pinned version)."""
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
    report = compare(run.result_dir, run.expected, budget=config_budget(run.cfg.oracle))
    run.record.check = report.render().splitlines()[0]
    run.record.correct = report.ok
    if not report.ok:
        raise PhaseError(report.render())


def _launcher(run: Run) -> str:
    return runtime_of(run.cfg).launcher


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
