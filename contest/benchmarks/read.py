"""`contest bench read`: what merge-on-read costs, operator by operator.

One table is written (the optimized Write job, in this process) and merged; then the
merged read runs, interleaved for `repeat` rounds, with: no operators (every column
UseLast: the connector's default read), the contest's operators, and each operator
alone on its column. Each read is a Spark job into the `noop` sink, so the time is
reading and merging, not writing the result. Medians and ratios to the default read.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contest.config import Config, override
from contest.data.operators import DEFAULT as DEFAULT_OPERATOR
from contest.errors import RunError
from contest.infra.postgres import resolve_connection
from contest.infra.spark import cores_of, spark_session
from contest.read.job import merged
from contest.read.operators import CONTEST_OPERATORS
from contest.results.benchmarks import ReadBenchRecord
from contest.sitting import REPEAT, SCALE, Benchmark, Row, Say, Sitting, newest_per
from contest.write.job import WriteMode, run_write
from meta import catalog
from meta.merge import merge_table

DEFAULT = f"default ({DEFAULT_OPERATOR})"


def variants() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {
        DEFAULT: {},
        "contest operators": dict(CONTEST_OPERATORS),
    }
    for op in sorted(set(CONTEST_OPERATORS.values())):
        cols = {c: o for c, o in CONTEST_OPERATORS.items() if o == op}
        out[f"{op} only ({', '.join(cols)})"] = cols
    return out


def measure(spark, conn, cfg: Config, data: Path, repeat: int, say: Say = print) -> Row:
    """Every variant's read of one table written from `data`, `repeat` rounds."""
    table_dir = cfg.work_path / "bench" / "read_bench"
    say(f"writing the table from {data}")
    report = run_write(
        spark, conn, cfg, data, str(table_dir.absolute()), "read_bench", mode=WriteMode.REPLACE
    )
    if not report.ok:
        raise RunError(report.summary())
    table = catalog.get_table(conn, "read_bench", cfg.table.namespace)
    merge_table(conn, table)
    rows = sum(b.rows for b in report.batches)
    cores = cores_of(spark)
    times: dict[str, list[float]] = {name: [] for name in variants()}
    for rnd in range(repeat):
        for name, ops in variants().items():
            variant = override(cfg, {"read.operators": ops or {"requests": DEFAULT_OPERATOR}})
            df, _, _ = merged(spark, conn, variant, table)
            t0 = time.perf_counter()
            df.write.format("noop").mode("overwrite").save()
            times[name].append(time.perf_counter() - t0)
            say(f"round {rnd + 1}: {name}: {times[name][-1]:.2f}s")
    base = statistics.median(times[DEFAULT])
    result: dict[str, Any] = {"rows": rows, "cores": cores, "repeat": repeat, "variants": {}}
    for name, ts in times.items():
        med = statistics.median(ts)
        result["variants"][name] = {
            "median_s": round(med, 3),
            "min_s": round(min(ts), 3),
            "max_s": round(max(ts), 3),
            "rows_per_core_s": round(rows / (cores * med), 1),
            "vs_default": round(med / base, 3),
        }
    return result


class ReadBench(Benchmark):
    name = "read"
    stem = "read_bench"
    summary = "merge-on-read cost per operator, against the default read"
    description = (
        "Write one table, then time its merged read with no operators, the contest's, "
        "and each operator alone (interleaved); <out>/read_bench.md shows the newest "
        "run of each scale."
    )
    options = (
        SCALE.but(
            many=True,
            default=None,
            help="scales of generated data, comma-separated or repeated (default 0.1)",
        ),
        REPEAT,
    )

    def run(self, sitting: Sitting) -> bool:
        # deferred: pulls in pandas and tqdm; `contest --help` starts without them
        from contest.evaluation.data_cache import cached_data

        cfg, opts = sitting.cfg, sitting.options
        conn = resolve_connection(cfg)
        with spark_session(cfg, "contest-bench-read") as spark:
            for scale in opts.scale or [0.1]:
                data = cached_data(cfg, scale, 2022, sitting.say)
                res = measure(spark, conn, cfg, data, opts.repeat, say=sitting.say)
                sitting.record({**res, "scale": scale})
        return True

    def render(self, records: Sequence[ReadBenchRecord]) -> str:
        lines = [
            "# Read benchmark: merge-on-read and the cost of each operator",
            "",
            "`contest bench read`: the merged read of one table, timed in-process into",
            "Spark's `noop` sink (no JVM start, no output writing), variants interleaved;",
            "medians, and the time relative to the default read (every column UseLast,",
            "what the connector reads with no operator registered).",
            "",
        ]
        for r in newest_per(records, lambda r: (r.rows, str(r.scale))):
            lines += [
                f"## {r.rows:,} rows ({'?' if r.scale is None else r.scale} scale), "
                f"{r.cores} cores, {r.repeat} rounds",
                "",
                "| variant | median s | min–max s | rows/core/s | vs default |",
                "|---|---|---|---|---|",
            ]
            for name, v in r.variants.items():
                lines.append(
                    f"| {name} | {v.median_s} | {v.min_s}–{v.max_s} "
                    f"| {v.rows_per_core_s:,.0f} | {v.vs_default}x |"
                )
            lines.append("")
        return "\n".join(lines)
