"""Stock LakeSoul's engine: tables and commits by LakeSoul's DBManager, rows written and
merged by its native IO (contest/write/stock.py, contest/read/stock.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from contest.config import Config
from contest.data.batches import discover
from contest.engines import Abilities, JobOutcome, ReadJob, WriteJob, read_line, summary_line
from contest.errors import EXIT_OK
from contest.infra.lakesoul_jvm import COORDINATES, session_config
from contest.infra.packages import for_paths
from contest.infra.postgres import resolve_connection
from contest.infra.spark import granted_cores, spark_session
from contest.read.stock import run_stock_read
from contest.write.job import select_batches
from contest.write.stock import run_stock_write

R = TypeVar("R")


def _stock_job(
    cfg: Config, app: str, path: str, run: Callable[..., R], *args: Any, **kwargs: Any
) -> tuple[R, int]:
    """Stock LakeSoul's job, `run(spark, conn, cfg, *args, **kwargs)`, in a session with
    LakeSoul's packages and settings (and those `path`'s scheme needs); its report and
    the cores the session held."""
    conn = resolve_connection(cfg)
    packages = COORDINATES + for_paths(path)
    with spark_session(session_config(cfg), app, packages) as spark:
        report = run(spark, conn, cfg, *args, **kwargs)
        cores = granted_cores(spark)
    return report, cores


class Stock:
    """Stock LakeSoul: tables and commits by LakeSoul's DBManager, rows written and
    merged by its native IO, sequential upserts in version order."""

    name = "lakesoul-stock"

    def abilities(self, cfg: Config) -> Abilities:
        # `contest compact` merges with the harness's operators, which know nothing of
        # the stock table's count columns; LakeSoul's own compaction is its Spark
        # connector's, which the stock engine does not load. `contest vacuum` reads the
        # harness's commits, not the stock table's. A workload that evolves its schema
        # evolves the table by DBManager (contest/write/stock.py), its history read
        # through LakeSoul's partition versions (contest/read/stock.py).
        return Abilities(
            lacks={
                "compact": f"write.engine={self.name}: no compaction for it in this harness",
                "vacuum": f"{self.name}: `contest vacuum` is LakeSoul's (the harness's "
                "tables) only",
            },
        )

    def merges(self, cfg: Config, stage: str) -> tuple[str, ...]:
        return ("lakesoul",)  # LakeSoul's own operators, both ways

    def write(self, cfg: Config, job: WriteJob) -> JobOutcome:
        job.refuse_concurrent(
            "write.engine=lakesoul-stock: no --resume or --delay-commit (its upserts "
            "run one after another: --append --only writes the batches still to come)"
        )
        # Bad input (a data folder, --only naming no batch): before Spark starts.
        select_batches(discover(job.data, cfg.write.versions or None, None), job.only, job.data)
        report, cores = _stock_job(
            cfg,
            "contest-write-stock",
            job.data,
            run_stock_write,
            job.data,
            job.table,
            job.name,
            **job.in_order,
        )
        summary = summary_line(report)
        return JobOutcome({**report.to_dict(), "spark_cores": cores}, (summary,), report.exit_code)

    def read(self, cfg: Config, job: ReadJob) -> JobOutcome:
        job.refuse_concurrent(
            "read.engine=lakesoul-stock: --latest-complete and --allow-gaps are for the "
            "harness's concurrent writes (the stock writer commits in version order)"
        )
        report, cores = _stock_job(
            cfg,
            "contest-read-stock",
            job.out,
            run_stock_read,
            job.table,
            job.out,
            job.overwrite,
            **job.versions,
        )
        out = {**report.to_dict(), "spark_cores": cores}
        line = read_line(report.table, report.rows, report.seconds, report.out)
        return JobOutcome(out, (line,), EXIT_OK)


ENGINE = Stock()
