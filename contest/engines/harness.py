"""The harness's own engine: concurrent versioned upserts (contest/write), merge
operators on read (contest/read)."""

from __future__ import annotations

import sys

from contest.config import Config
from contest.data.batches import discover
from contest.engines import (
    HARNESS,
    Abilities,
    JobOutcome,
    ReadJob,
    WriteJob,
    read_line,
    summary_line,
)
from contest.errors import EXIT_OK
from contest.infra.packages import for_paths
from contest.infra.postgres import resolve_connection
from contest.infra.spark import granted_cores, log_note, spark_session
from contest.read.job import ReadRequest, plan_read, run_read
from contest.write.job import run_write, select_batches
from contest.write.report import timeline
from meta import catalog


class Harness:
    """This project's jobs: concurrent versioned upserts, merge operators on read."""

    name = HARNESS

    def abilities(self, cfg: Config) -> Abilities:
        return Abilities(while_writing=True)

    def merges(self, cfg: Config, stage: str) -> tuple[str, ...]:
        # Spark's collapse and join for copy-on-write; the read's merge (read.merge).
        if stage == "write":
            return ("spark",) if cfg.write.mode == "cow" else ()
        return (cfg.read.merge,)

    def write(self, cfg: Config, job: WriteJob) -> JobOutcome:
        # Bad input (a data folder, versions, --only naming no batch): before Spark starts.
        batches = discover(job.data, cfg.write.versions or None, schema=None)
        select_batches(batches, job.only, job.data)
        conn = resolve_connection(cfg)
        with spark_session(cfg, "contest-write", for_paths(job.data)) as spark:
            report = run_write(
                spark,
                conn,
                cfg,
                job.data,
                job.table,
                job.name,
                mode=job.mode,
                delays=dict(job.delays),
                indices=job.only,
            )
            cores = granted_cores(spark)  # what a score divides by (contest evaluate)
        summary = summary_line(report)
        warnings = tuple(f"contest: warning: {w}" for w in report.warnings())
        return JobOutcome(
            {**report.to_dict(), "spark_cores": cores},
            (timeline(report), *warnings, summary + ("" if report.ok else log_note())),
            report.exit_code,
        )

    def read(self, cfg: Config, job: ReadJob) -> JobOutcome:
        conn = resolve_connection(cfg)
        table = catalog.find_table(conn, job.table, cfg.table.namespace)
        request = ReadRequest(
            out_dir=job.out,
            **job.versions,
            overwrite=job.overwrite,
            allow_gaps=job.allow_gaps,
            latest_complete=job.latest_complete,
        )
        plan = plan_read(conn, cfg, table, request)  # every check before Spark starts
        for warning in plan.warnings:
            print(f"contest: warning: {warning}", file=sys.stderr)
        with spark_session(cfg, "contest-read", for_paths(job.out)) as spark:
            report = run_read(spark, cfg, plan)
            cores = granted_cores(spark)
        out = {**report.to_dict(), "spark_cores": cores}
        line = read_line(report.table, report.rows, report.seconds, report.out)
        return JobOutcome(out, (line,), EXIT_OK)


ENGINE = Harness()
