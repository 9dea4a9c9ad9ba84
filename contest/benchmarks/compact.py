"""`contest bench compact`: what `contest compact` buys the read.

One table is written (the optimized Write job, in this process) and merged; the
contest's read (merge, write the result parquet, publish) runs `repeat` times, then
the table is compacted (one merged file per bucket, a CompactionCommit), then the read
runs `repeat` times again. Every result is checked against the oracle. Compaction is
one-way, so the rounds cannot be interleaved: before and after are back to back in one
Spark session, and the ratio of medians is the figure.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from contest.config import Config
from contest.data.checker import compare
from contest.errors import RunError
from contest.infra.postgres import resolve_connection
from contest.infra.spark import cores_of, spark_session
from contest.maintenance.compact import compact
from contest.read.files import mean_files_per_bucket
from contest.read.job import ReadRequest, plan_read, run_read
from contest.results.benchmarks import CompactRecord
from contest.sitting import (
    REPEAT,
    SCALE,
    SEED,
    Benchmark,
    Row,
    Say,
    Sitting,
    utc_now,
)
from contest.write.job import WriteMode, run_write
from meta import catalog
from meta.commits import head_snapshot
from meta.merge import merge_table

TABLE = "compact_bench"


def files_per_bucket(conn, table) -> float:
    return mean_files_per_bucket(head_snapshot(conn, table)[1]) or 0.0


def measure(
    spark, conn, cfg: Config, data: Path, expected: Path, repeat: int, say: Say = print
) -> Row:
    """The read `repeat` times before and after compacting a table written from `data`."""
    root = (cfg.work_path / "bench" / "compact").absolute()
    say(f"writing the table from {data}")
    report = run_write(spark, conn, cfg, data, str(root / "table"), TABLE, mode=WriteMode.REPLACE)
    if not report.ok:
        raise RunError(report.summary())
    table = catalog.get_table(conn, TABLE, cfg.table.namespace)
    merge_table(conn, table)
    rows = sum(b.rows for b in report.batches)
    cores = cores_of(spark)

    def reads(label: str) -> list[float]:
        times = []
        for rnd in range(repeat):
            plan = plan_read(conn, cfg, table, ReadRequest(str(root / "result"), overwrite=True))
            t0 = time.perf_counter()
            run_read(spark, cfg, plan)
            times.append(time.perf_counter() - t0)
            check = compare(root / "result", expected)
            if not check.ok:
                raise RunError(
                    f"read {label} compaction, round {rnd + 1}: {check.render().splitlines()[0]}"
                )
            say(f"read {label} compaction, round {rnd + 1}: {times[-1]:.2f}s (exact)")
        return times

    fpb_before = files_per_bucket(conn, table)
    before = reads("before")
    say("compacting")
    t0 = time.perf_counter()
    crep = compact(spark, conn, cfg, table)
    compact_s = time.perf_counter() - t0
    say(f"compacted {crep.files_before} files into {crep.files_after} in {compact_s:.2f}s")
    fpb_after = files_per_bucket(conn, table)
    after = reads("after")
    med_b, med_a = statistics.median(before), statistics.median(after)
    return {
        "when": utc_now(),
        "data": str(data),
        "rows": rows,
        "cores": cores,
        "repeat": repeat,
        "files_before": crep.files_before,
        "files_after": crep.files_after,
        "files_per_bucket_before": round(fpb_before, 2),
        "files_per_bucket_after": round(fpb_after, 2),
        "compact_s": round(compact_s, 3),
        "read_before_s": [round(t, 3) for t in before],
        "read_after_s": [round(t, 3) for t in after],
        "median_before_s": round(med_b, 3),
        "median_after_s": round(med_a, 3),
        "speedup": round(med_b / med_a, 3),
    }


class CompactBench(Benchmark):
    name = "compact"
    stem = "compact"
    summary = "the read before and after `contest compact`"
    description = (
        "Write one table, time the contest's read (checked by the oracle) --repeat times, "
        "compact it (one merged file per bucket), time the read again; results to "
        "<out>/compact.md and compact.jsonl."
    )
    options = (SCALE, SEED, REPEAT.but(help="reads before and after"))

    def run(self, sitting: Sitting) -> bool:
        # deferred: pulls in pandas and tqdm; `contest --help` starts without them
        from contest.evaluation.data_cache import cached_data, cached_expected

        cfg, opts, say = sitting.cfg, sitting.options, sitting.say
        conn = resolve_connection(cfg)
        data = cached_data(cfg, opts.scale, opts.seed, say)
        expected = cached_expected(cfg, data, "", say)
        with spark_session(cfg, "contest-bench-compact") as spark:
            res = measure(spark, conn, cfg, data, expected, opts.repeat, say=say)
        sitting.record({**res, "scale": opts.scale})
        return True

    def render(self, records: Sequence[CompactRecord]) -> str:
        lines = [
            "# Compaction: the read before and after `contest compact`",
            "",
            "`contest bench compact`: one table written by the optimized Write job and merged;",
            "the contest's read (merge by key with the contest's operators, write the result",
            "parquet, publish) timed in-process (no JVM start) `repeat` times, then",
            "`contest compact` (one merged file per bucket, committed as a CompactionCommit),",
            "then the same read again. Every result checked against the oracle.",
            "",
            "| when | rows | cores | files (per bucket) before → after | compact s "
            "| read s before (median) | read s after (median) | read speed-up |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in records:
            lines.append(
                f"| {r.when} | {r.rows:,} | {r.cores} "
                f"| {r.files_before} ({r.files_per_bucket_before}) → {r.files_after} "
                f"({r.files_per_bucket_after}) | {r.compact_s} "
                f"| {', '.join(map(str, r.read_before_s))} ({r.median_before_s}) "
                f"| {', '.join(map(str, r.read_after_s))} ({r.median_after_s}) "
                f"| {r.speedup}x |"
            )
        lines.append("")
        return "\n".join(lines)
