"""`contest bench costs`: what a run costs, and from which size each contender wins.

Every contender runs at four or more scales of the same generated data, in interleaved
rounds rotated each round, every result checked by the oracle: each strategy as
`contest evaluate` runs it (two whole timed jobs, each with its timeline: launch, JVM,
imports, context, planning, tasks, stop), DuckDB at its defaults as one whole Python
process (contest/benchmarks/duckdb/reference.py). Each job's medians are fitted as
fixed + per-row x rows (contest/benchmarks/costs/model.py); the page (costs.md) shows
the lines, their error, the measured points, the timelines' phases at the smallest
scale, and the scale from which optimized wins against each other contender.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from contest.benchmarks.costs import page
from contest.benchmarks.duckdb.bench import bare_starts
from contest.benchmarks.duckdb.reference import DEFAULTS, run_duckdb
from contest.data.batches import discover
from contest.data.checker import compare
from contest.data.oracle import config_budget
from contest.errors import RunError
from contest.evaluation.strategies import is_strategy, preset, round_order, strategy_names
from contest.infra.pagecache import read_ahead
from contest.results.costs import BARE, DUCKDB, MERGE, READ, WRITE, CostRecord
from contest.results.runs import RunRecord
from contest.sitting import (
    CORES,
    SCALES,
    SEED,
    WORK,
    Benchmark,
    Option,
    Row,
    Sitting,
    at_least,
)

OTHERS = (DUCKDB, BARE)

FOUR_SCALES = SCALES.but(
    help="scales of generated data (four or more to fit a line with an error)",
    default=[0.001, 0.01, 0.1, 1.0],
)
CONTENDERS = Option(
    "--contenders",
    f"strategies to model, {DUCKDB} (DuckDB at its defaults) and {BARE} (two trivial "
    "spark-submits with the timed jobs' levers: the floor of a run's fixed part); "
    "iceberg-dv is the fastest Spark peer of the published sittings",
    str,
    ["optimized", "delta-rs", "iceberg-dv", DUCKDB, BARE],
    many=True,
    valid=lambda v: v in OTHERS or is_strategy(v),
    rule=f"{DUCKDB}, {BARE} or one of " + ", ".join(strategy_names(variants=True)),
)
ROUNDS = Option("--rounds", "interleaved rounds at each scale", int, 3, **at_least(1))


def job_rows(rec: RunRecord, base: Row) -> list[Row]:
    """A strategy's run as its two jobs' rows, each with its timeline."""
    return [
        {
            **base,
            "rows": rec.rows or 0,
            "job": job,
            "seconds": getattr(rec, f"{job}_s"),
            "correct": rec.correct,
            "phases": rec.timeline.get(job, {}),
            "outside_share": rec.load[job].outside_share if job in rec.load else None,
            "error": rec.error,
        }
        for job in (WRITE, READ)
    ]


class CostsBench(Benchmark):
    name = "costs"
    stem = "costs"
    summary = "each contender's fixed and per-row cost per job, and the crossover scales"
    description = (
        "Run each contender (strategies as `contest evaluate` runs them, DuckDB at its "
        "defaults) at several scales of the same data in interleaved rounds, every result "
        "checked by the oracle; fit each job's time as fixed + per-row x rows, with the "
        "fit's error; show each job's timeline (launch, JVM, imports, context, planning, "
        "tasks, stop) and the scale from which optimized wins against each other "
        "contender. Records to <results>/costs.jsonl, the page to costs.md."
    )
    options = (FOUR_SCALES, CONTENDERS, ROUNDS, SEED, CORES, WORK)

    def run(self, sitting: Sitting) -> bool:
        # deferred: pulls in pandas and tqdm; `contest --help` starts without them
        from contest.evaluation.data_cache import cached_data, cached_expected

        opts, say = sitting.options, sitting.say
        cores = opts.cores or os.cpu_count() or 1
        ok = True
        for scale in sorted(opts.scales):
            cfg = sitting.config(preset("optimized"))
            data = cached_data(cfg, scale, opts.seed, say)
            expected = cached_expected(cfg, data, cfg.write.versions, say)
            for rnd in range(1, opts.rounds + 1):
                for pos, name in enumerate(round_order(list(opts.contenders), rnd), 1):
                    say(f"== scale {scale:g}, round {rnd}/{opts.rounds} (#{pos}): {name}")
                    read_ahead(data, say)  # every contender starts with the batches cached
                    base = {"contender": name, "scale": scale, "cores": cores, "round": rnd}
                    if name == DUCKDB:
                        rows = [self.duckdb(sitting, data, expected, cores, base)]
                    elif name == BARE:
                        rows = self.bare(sitting, data, cores, base)
                    else:
                        rows = self.strategy(sitting, name, data, cores, base)
                    for record in sitting.record(*rows):
                        ok = ok and record.correct
        return ok

    @staticmethod
    def strategy(sitting: Sitting, name: str, data: Path, cores: int, base: Row) -> list[Row]:
        """One evaluation of strategy `name`: its two jobs' rows; its table and result
        dropped once checked (a wrong one's kept to inspect)."""
        # deferred: pulls in pandas and tqdm; `contest --help` starts without them
        from contest.evaluation.evaluate import drop_run, evaluate

        cfg = sitting.config(preset(name))
        rec = evaluate(cfg, name, data=data, cores=cores, say=sitting.say)
        if rec.correct:
            drop_run(cfg, rec)
        return job_rows(rec, base)

    @staticmethod
    def duckdb(sitting: Sitting, data: Path, expected: Path, cores: int, base: Row) -> Row:
        """DuckDB at its defaults merging the batches into a result, checked; one row."""
        cfg = sitting.config(preset("optimized"))
        folder = cfg.work_path / "bench" / "costs"
        out_dir = folder / "duckdb-result"
        log = folder / f"duckdb-{base['scale']:g}-{base['round']}.log"
        started = time.monotonic()
        rows = sum(b.rows for b in discover(data, cfg.write.versions or None, None))
        row: Row = {**base, "job": MERGE, "rows": rows}
        try:
            merged = run_duckdb(cfg, data, cores, out_dir, log, 0, DEFAULTS)
            check = compare(out_dir, expected, budget=config_budget(cfg.oracle))
            row |= {"seconds": merged["seconds"], "correct": check.ok}
            row |= {"outside_share": merged.get("outside_share")}
        except RunError as e:  # a result of its own (a full disk, say): the rest goes on
            sitting.say(f"{DUCKDB}: {e}")
            row |= {"seconds": round(time.monotonic() - started, 3), "correct": False}
            row |= {"error": str(e)}
        shutil.rmtree(out_dir, ignore_errors=True)
        return row

    @staticmethod
    def bare(sitting: Sitting, data: Path, cores: int, base: Row) -> list[Row]:
        """Two trivial spark-submits as the run's write and read: each its seconds and
        timeline; nothing to check."""
        cfg = sitting.config(preset("optimized"))
        folder = cfg.work_path / "bench" / "costs"
        tag = f"start-{base['scale']:g}-{base['round']}"
        rows = sum(b.rows for b in discover(data, cfg.write.versions or None, None))
        jobs = bare_starts(cfg, cores, folder, tag)
        return [
            {
                **base,
                "rows": rows,
                "job": job,
                "seconds": round(p.seconds, 3),
                "correct": True,
                "phases": p.timeline,
                "outside_share": p.noise.outside_share if p.noise is not None else None,
            }
            for job, p in zip((WRITE, READ), jobs, strict=True)
        ]

    def render(self, records: Sequence[CostRecord]) -> str:
        return page.render(records)

    def extras(self, records: Sequence[CostRecord], folder: Path) -> None:
        page.chart(records, folder / "costs.png")
