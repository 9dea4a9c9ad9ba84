"""A workload's phases on one lane (lanes.py): each step's job (a timed process, or a
command of the lane's one application: application.py), its record, and the oracle's
check of every read at the version it read. The loop over lanes and steps is
runner.py's."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import asdict
from pathlib import Path

from contest.config import Config
from contest.data.batches import discover, upto
from contest.data.changes import changes_of
from contest.data.checker import compare
from contest.data.oracle import config_budget, expected_result
from contest.data.workload import contract_operators, schema_of_batch
from contest.errors import EXIT_USAGE, PhaseError
from contest.evaluation import jobs
from contest.evaluation.data_cache import change_ident
from contest.evaluation.disclosure import disclosure
from contest.evaluation.progress import heartbeat
from contest.evaluation.run import run_stage_job
from contest.evaluation.strategies import file_stem
from contest.infra.machine import git_state, load1, machine_id
from contest.infra.postgres import local_server_pids
from contest.infra.proc import ProcResult, run_timed
from contest.peers.write import folder_bytes
from contest.results.workloads import PhaseRecord
from contest.workload.footprint import footprint
from contest.workload.lanes import (
    Lane,
    Say,
    concurrent_reads_why,
    layout,
    report_line,
    skipped_why,
    table_arg,
)
from contest.workload.plan import Step
from meta import catalog
from meta.merge import merge_table


def oracle_at(cfg: Config, data: Path, version: int, say: Say, after: int | None = None) -> Path:
    """The oracle's result for the batches up to `version` (and after version `after`:
    a change read's), under the newest schema, cached in the work folder."""
    batches = upto(
        discover(data, cfg.write.versions or None, schema_of_batch(cfg.workload)), version
    )
    if after is not None:
        batches = [b for b in batches if b.version > after]
    ops = contract_operators(cfg.workload)
    ident = json.dumps(
        [str(data), version, ops, after] + [[b.name, b.bytes, b.mtime_ns] for b in batches]
    )
    ident += change_ident(changes_of(cfg))
    out = (
        cfg.work_path / "oracle" / f"upto-{hashlib.sha256(ident.encode()).hexdigest()[:16]}.parquet"
    )
    if not out.exists():
        say(f"computing the expected result up to version {version} (oracle)")
        expected_result(
            batches, out, budget=config_budget(cfg.oracle), operators=ops, changes=changes_of(cfg)
        )
    return out


class Runner:
    """Runs steps on lanes and records each phase."""

    def __init__(self, workload: str, scale: float, steps: list[Step], say: Say) -> None:
        # `steps`: every lane's unless the lane has its own (one per policy).
        self.workload, self.scale, self.steps, self.say = workload, scale, steps, say
        self.run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        self.commit = git_state(Path(__file__).resolve().parent)[0]
        self.batch_rows: dict[int, int] = {}
        self._disclosed: dict[str, dict] = {}
        self._stamped: set[str] = set()  # the lanes whose first record carries it

    def disclosed(self, strategy: str, cfg: Config) -> dict:
        """A strategy's full disclosure (`contest.evaluation.disclosure`): its
        environment and effective configuration, taken once per strategy."""
        if strategy not in self._disclosed:
            d = disclosure(cfg)
            self._disclosed[strategy] = {"environment": d["environment"], "config": d["config"]}
        return self._disclosed[strategy]

    def record(
        self,
        lane: Lane,
        n: int,
        step: Step,
        phase: str,
        job: ProcResult | None = None,
        **values: object,
    ) -> PhaseRecord:
        """One phase's record; `job`, the process it ran in, gives its seconds and
        the noise measured while it ran."""
        rec = PhaseRecord(
            workload=self.workload,
            run_id=self.run_id,
            strategy=lane.strategy or lane.run.strategy,
            step=n,
            phase=phase,
            label=step.label,
            round=step.round,
            policy=lane.policy.name if lane.named else None,
            auto_maintenance=lane.note,
            application=lane.application,
            batch_first=step.batches[0] if step.batches else None,
            batch_last=step.batches[-1] if step.batches else None,
            scale=self.scale,
            when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            machine_id=machine_id(),
            git_commit=self.commit,
            load1=load1(),
            # The disclosure on the lane's first record only: a long run's every line
            # carried the same 5 KB (8.8 MB for 1,800 phases); its page reads it there.
            **(
                {}
                if lane.run.strategy in self._stamped
                else self.disclosed(lane.run.strategy, lane.run.cfg)
            ),
        )
        if job is not None:
            rec.seconds = round(job.seconds, 3)
            # A concurrent step's jobs run beside each other by design: each would
            # read the other as noise, so theirs is not recorded; nor a lane's whole
            # application's, which idles while the other lanes' steps run.
            if job.noise is not None and not phase.startswith(("concurrent", "application")):
                rec.outside_share = job.noise.outside_share
                rec.peak_outside_share = job.noise.peak_outside_share
                rec.steal_share = job.noise.steal_share
        self._stamped.add(lane.run.strategy)
        for key, value in values.items():
            setattr(rec, key, value)
        rec.batches_applied = lane.applied
        if lane.run.conn is not None and rec.ok:
            rec.files_per_bucket, rec.stored_bytes = layout(lane)
        elif lane.run.peer and rec.ok:  # the table folder: data, logs, metadata
            rec.stored_bytes = folder_bytes(Path(lane.run.table_dir))
        if rec.ok and not rec.skipped:
            found = footprint(lane)
            if found is not None:
                for key, value in asdict(found).items():
                    setattr(rec, key, value)
        lane.records.append(rec)
        return rec

    def refused(self, strategy: str, cfg: Config, why: str) -> PhaseRecord:
        """The one record of a strategy that cannot run the phases: why, as one line."""
        return PhaseRecord(
            workload=self.workload,
            run_id=self.run_id,
            strategy=strategy,
            step=0,
            phase="refused",
            label="refused",
            round=0,
            batch_first=None,
            batch_last=None,
            scale=self.scale,
            when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            machine_id=machine_id(),
            git_commit=self.commit,
            load1=load1(),
            skipped=why,
            **self.disclosed(strategy, cfg),
        )

    def job(
        self, lane: Lane, n: int, stage: str, args: list[str], tag: str = "", alone: bool = False
    ) -> ProcResult:
        """A Write or Read job: a command of the lane's application, or (`alone`, or a
        lane without one) a timed process of its own."""
        run = lane.run
        log = run.eval_dir / "logs" / f"workload-{file_stem(run.strategy)}-{n:03d}{tag}-{stage}.log"
        if lane.app is not None and not alone:
            return lane.app.call([stage, *args], log)
        return run_stage_job(run, stage, log, args)

    def upsert_args(self, lane: Lane, step: Step) -> list[str]:
        run = lane.run
        args = ["--data", str(lane.data), "--table", run.table_dir, "--name", run.table_name]
        args += ["--append", "--only", ",".join(str(b) for b in step.batches)]
        return args + (["--threads", str(step.threads)] if step.threads else [])

    def upsert(self, lane: Lane, n: int, step: Step, phase: str = "upsert") -> PhaseRecord:
        job = self.job(lane, n, "write", self.upsert_args(lane, step))
        return self.after_upsert(lane, n, step, job, phase)

    def after_upsert(
        self, lane: Lane, n: int, step: Step, job: ProcResult, phase: str
    ) -> PhaseRecord:
        if not job.ok and job.returncode == EXIT_USAGE:
            # The strategy refuses the batches in one line of its own (a schema change
            # its format cannot make; a later batch over the gap that left): recorded
            # as refused, and the lane goes on. Its reads report the version they read
            # (a peer's: the newest its ledger holds) and are checked at it, so none
            # is scored against batches the table lacks.
            why = jobs.failure_cause(job)
            self.say(f"{lane.run.strategy}: step {n}: refused: {why}")
            return self.record(lane, n, step, phase, job=job, refused=why)
        if not job.ok:
            raise PhaseError(jobs.job_failure("write", job))
        lane.applied += len(step.batches)
        upserted = [lane.versions[b] for b in step.batches]
        lane.newest = max(upserted if lane.newest is None else [lane.newest, *upserted])
        rows = sum(self.batch_rows.get(b, 0) for b in step.batches)
        return self.record(
            lane,
            n,
            step,
            phase,
            job=job,
            rows=rows,
            peak_rss_bytes=job.peak_rss_bytes,
        )

    def read(self, lane: Lane, n: int, step: Step, extra: list[str], tag: str = "") -> PhaseRecord:
        """A Read job, then the oracle's check at the version the job reports."""
        run = lane.run
        out = run.eval_dir / "result" / f"workload-{file_stem(run.strategy)}{tag}"
        args = ["--table", table_arg(run), "--out", str(out), *extra]
        lane.last_output = None  # its folder is rewritten now
        # A concurrent step's reads (tagged) run beside its upsert: processes of their own.
        job = self.job(lane, n, "read", args, tag, alone=bool(tag))
        phase = "concurrent-read" if tag else ("changes" if step.kind == "changes" else "read")
        if not job.ok and job.returncode == EXIT_USAGE and step.kind in ("read", "changes"):
            # The strategy refuses this history read in one line of its own: recorded
            # as refused, never scored, and the lane goes on.
            why = jobs.failure_cause(job)
            self.say(f"{run.strategy}: step {n}: refused: {why}")
            return self.record(lane, n, step, phase, job=job, refused=why)
        if not job.ok:
            raise PhaseError(jobs.job_failure("read", job))
        report = report_line(job.log)
        version = report.get("version")
        if version is None and step.kind == "read" and step.as_of is None:
            # A head read that names no version holds every batch upserted so far
            # (steps run one at a time).
            version = lane.newest
        if step.kind == "changes":
            version = step.to_version
        if version is None:
            raise PhaseError(f"the read job reported no version (log {job.log})")
        if step.recheck and int(version) != lane.last_version:
            raise PhaseError(
                f"the read after maintenance saw version {version}, the read before it "
                f"{lane.last_version}"
            )
        expected = oracle_at(run.cfg, lane.data, int(version), self.say, step.from_version)
        check = compare(out, expected, budget=config_budget(run.cfg.oracle))
        rec = self.record(
            lane,
            n,
            step,
            phase,
            job=job,
            job_seconds=report.get("seconds"),
            rows=report.get("rows"),
            peak_rss_bytes=job.peak_rss_bytes,
            version=int(version),
            from_version=step.from_version,
            correct=check.ok,
        )
        if not check.ok:
            rec.error = check.render().splitlines()[0]
            raise PhaseError(f"read as of version {version} is wrong: {rec.error}")
        lane.last_output, lane.last_version = out, int(version)
        return rec

    def merge(self, lane: Lane, n: int, step: Step) -> PhaseRecord:
        run = lane.run
        table = catalog.get_table(run.conn, run.table_name, run.cfg.table.namespace)
        t0 = time.perf_counter()
        merge_table(run.conn, table)
        return self.record(lane, n, step, "merge", seconds=round(time.perf_counter() - t0, 4))

    def command(self, lane: Lane, n: int, name: str, *args: str) -> ProcResult:
        """`contest <name> --table T ...` in a process of its own, timed, the embedded
        PostgreSQL's work counted as the job's; a failure ends the lane."""
        run = lane.run
        assert run.config_file is not None
        log = run.eval_dir / "logs" / f"workload-{file_stem(run.strategy)}-{n:03d}-{name}.log"
        if lane.app is not None:
            job = lane.app.call([name, "--table", table_arg(run), *args], log)
        else:
            cmd = jobs.cli_command(run.config_file, name, "--table", table_arg(run), *args)
            job = run_timed(
                cmd,
                log,
                env=run.env,
                cwd=run.config_file.parent,
                servers=local_server_pids(run.cfg),
            )
        if not job.ok:
            raise PhaseError(
                f"{name} exited {job.returncode}: {jobs.failure_cause(job)} (log {log})"
            )
        return job

    def compact(self, lane: Lane, n: int, step: Step) -> PhaseRecord:
        run = lane.run
        job = self.command(lane, n, "compact")
        report = report_line(job.log)
        return self.record(
            lane,
            n,
            step,
            "compact",
            job=job,
            rows=report.get("rows"),
            peak_rss_bytes=job.peak_rss_bytes,
            # A peer's files per bucket after it, from its own metadata (the job's
            # report); a LakeSoul table's come from its snapshot (`layout`).
            files_per_bucket=report.get("files_per_bucket") if run.peer else None,
        )

    def vacuum(self, lane: Lane, n: int, step: Step) -> PhaseRecord:
        """`contest vacuum --retain 0` in a process of its own: every file no live
        commit names goes, the start of a history read before a compaction with them."""
        job = self.command(lane, n, "vacuum", "--retain", "0", "--json")
        return self.record(lane, n, step, "vacuum", job=job)

    def concurrent(self, lane: Lane, n: int, step: Step) -> None:
        """The upsert job in a thread; `reads` reads of the newest complete version
        while it runs, each checked at the version it saw. A head-only strategy runs
        the upsert alone, its reads recorded as skipped (`concurrent_reads_why`)."""
        why = concurrent_reads_why(lane.run.cfg)
        if why:
            self.upsert(lane, n, step, "concurrent-upsert")
            self.say(f"{lane.run.strategy}: step {n}: concurrent reads skipped ({why})")
            for _ in range(step.reads):
                self.record(lane, n, step, "concurrent-read", skipped=why)
            return
        box: dict[str, ProcResult] = {}
        writer = threading.Thread(
            target=lambda: box.setdefault(
                "job", self.job(lane, n, "write", self.upsert_args(lane, step), alone=True)
            )
        )
        writer.start()
        try:
            for i in range(step.reads):
                self.read(lane, n, step, ["--latest-complete"], tag=f"-c{i + 1}")
        finally:
            writer.join()
        self.after_upsert(lane, n, step, box["job"], "concurrent-upsert")

    def step(self, lane: Lane, n: int, step: Step) -> None:
        """One step on one lane; a failure is recorded and ends the lane."""
        prefix = f"{lane.run.strategy}: step {n}/{len(lane.steps or self.steps)} {step.label}"
        why = skipped_why(lane.run.cfg, step.kind)
        if why:
            self.say(f"{prefix}: skipped ({why})")
            self.record(lane, n, step, step.kind, skipped=why)
            return
        self.say(prefix)
        try:
            if lane.app_failure:
                raise PhaseError(lane.app_failure)
            with heartbeat(prefix, self.say):
                if step.kind == "upsert":
                    self.upsert(lane, n, step)
                elif step.kind == "read":
                    as_of = [] if step.as_of is None else ["--as-of-version", str(step.as_of)]
                    self.read(lane, n, step, as_of)
                elif step.kind == "changes":
                    span = [str(step.from_version), "--to-version", str(step.to_version)]
                    self.read(lane, n, step, ["--from-version", *span])
                elif step.kind == "merge":
                    self.merge(lane, n, step)
                elif step.kind == "compact":
                    self.compact(lane, n, step)
                elif step.kind == "vacuum":
                    self.vacuum(lane, n, step)
                else:
                    self.concurrent(lane, n, step)
        except Exception as exc:
            lane.failed = True
            error = str(exc) if isinstance(exc, PhaseError) else f"{type(exc).__name__}: {exc}"
            self.say(
                f"{lane.run.strategy}: FAILED at step {n} ({step.label}): {error.splitlines()[0]}"
            )
            last = lane.records[-1] if lane.records and lane.records[-1].step == n else None
            if last is None:
                self.record(lane, n, step, step.kind, ok=False, error=error.splitlines()[0])
            else:
                last.ok, last.error = False, last.error or error.splitlines()[0]
