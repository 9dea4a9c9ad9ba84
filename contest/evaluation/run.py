"""One evaluation run as its phases share it (`Run`), and its timed jobs: the Write and
Read spark-submit processes the score counts, with the machine's load sampled around
them and the run's time cap applied. `contest evaluate` and the workload runner
(contest/workload/runner.py) time their jobs here, so both count the same way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contest.config import Config
from contest.evaluation.jobs import run_job
from contest.evaluation.progress import heartbeat
from contest.evaluation.strategies import file_stem
from contest.infra.machine import Sample
from contest.infra.proc import ProcResult
from contest.results.runs import JobLoad, RunRecord


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
    run.record.timeline[stage] = job.timeline
    setattr(run.record, f"{stage}_s", round(job.seconds, 3))
    setattr(run.record, f"{stage}_peak_rss_bytes", job.peak_rss_bytes)
    setattr(run.record, f"{stage}_peak_process_rss_bytes", job.peak_process_rss_bytes)
    return job
