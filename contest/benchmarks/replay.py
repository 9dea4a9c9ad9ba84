"""`contest bench replay` (also `contest meta bench`): replay on long histories, driver
against distributed.

For each history size: generate it, merge it in the driver (timed, peak memory of
this process), reset it, merge it through Spark (timed), and check both gave the
same snapshot. Results go to meta_replay.{md,jsonl}; the markdown shows the newest
sitting (one machine, one table).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from contest.errors import UsageError
from contest.infra.postgres import resolve_connection
from contest.infra.proc import own_peak_rss, reset_own_peak_rss
from contest.infra.spark import spark_session
from contest.results.benchmarks import ReplayRecord
from contest.sitting import Benchmark, Option, Row, Say, Sitting, sittings
from meta import catalog
from meta.connection import PgConnection
from meta.distributed import JDBC_PACKAGE
from meta.merge import merge_table
from meta.synthetic import generate_history, reset_history


def measure(spark, conn: PgConnection, work_dir: Path, commits: int, say: Say = print) -> Row:
    """One history of `commits` commits merged by both paths, then merged again."""
    root = work_dir / "meta-bench"
    name = f"meta_bench_{commits}"
    say(f"history of {commits:,} commits")
    hist = generate_history(conn, name, root / name, commits)
    rec: Row = {"commits": commits, "generate_s": round(hist.seconds, 3)}
    reset_own_peak_rss()  # the driver merge's peak, not the generator's
    t0 = time.perf_counter()
    driver = merge_table(conn, hist.table, force_path="driver")
    rec["driver_s"] = round(time.perf_counter() - t0, 3)
    rec["driver_peak_rss_mb"] = round(own_peak_rss() / 2**20, 1)
    order_driver = driver.partitions[0].order
    reset_history(conn, hist.table.table_id)
    t0 = time.perf_counter()
    dist = merge_table(conn, hist.table, spark=spark, force_path="distributed")
    rec["distributed_s"] = round(time.perf_counter() - t0, 3)
    rec["identical"] = dist.partitions[0].order == order_driver
    t0 = time.perf_counter()
    again = merge_table(conn, hist.table, force_path="driver")
    rec["second_run_s"] = round(time.perf_counter() - t0, 3)
    rec["second_run_changed"] = again.changed
    say("  " + json.dumps(rec))
    catalog.drop_table(conn, name)
    shutil.rmtree(root / name, ignore_errors=True)
    return rec


def sizes(out: list[int]) -> list[int]:
    """`--commits 1000,10000`: positive history sizes, or a usage error."""
    if not out or any(n < 1 for n in out):
        raise UsageError(f"--commits: give positive history sizes, got {','.join(map(str, out))!r}")
    return out


class ReplayBench(Benchmark):
    name = "replay"
    stem = "meta_replay"
    summary = "metadata replay on long generated histories, driver against Spark"
    description = (
        "Generate histories of N commits and merge each in the driver and through "
        "Spark; results to <out>/meta_replay.md and meta_replay.jsonl. Also "
        "`contest meta bench`."
    )
    options = (
        Option(
            "--commits",
            "history sizes, comma-separated or repeated",
            int,
            default=[1000, 10000, 100000, 1000000],
            many=True,
        ),
    )

    def check(self, options) -> None:
        super().check(options)
        sizes(options.commits)

    def run(self, sitting: Sitting) -> bool:
        cfg = sitting.cfg
        conn = resolve_connection(cfg)
        cores, when = os.cpu_count() or 1, sitting.started
        ok = True
        with spark_session(cfg, "contest-meta-bench", (JDBC_PACKAGE,)) as spark:
            for n in sizes(sitting.options.commits):
                rec = measure(spark, conn, cfg.work_path, n, say=sitting.say)
                (typed,) = sitting.record({**rec, "cores": cores, "when": when})
                ok = ok and typed.identical
        return ok

    def render(self, records: Sequence[ReplayRecord]) -> str:
        # Old lines have no `sitting`; their `when` was one per sitting.
        groups = sittings(records, key=lambda r: r.sitting or r.when)
        newest = groups[-1] if groups else []
        cores = newest[0].cores if newest and newest[0].cores is not None else "?"
        lines = [
            "# Metadata replay: driver against distributed",
            "",
            "`contest bench replay`: a history of N commits arriving out of version order (jitter",
            "up to 64 places), merged into version order by `contest meta merge` in the driver",
            "(psycopg2, in-process sort) and through Spark (JDBC source, 8 parallel partitions,",
            f"distributed sort), on this machine ({cores} cores). Both paths must give the same",
            "snapshot. The second run is the idempotent no-op (only the checkpoint is compared).",
            "",
            "| commits | generate s | driver s | driver peak RSS MB | distributed s | identical "
            "| second run s |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in newest:
            lines.append(
                f"| {r.commits:,} | {r.generate_s} | {r.driver_s} "
                f"| {r.driver_peak_rss_mb} | {r.distributed_s} | {r.identical} "
                f"| {r.second_run_s} |"
            )
        return "\n".join(lines) + "\n"
