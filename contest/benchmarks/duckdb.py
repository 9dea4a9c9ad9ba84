"""`contest bench duckdb`: the optimized pipeline against one DuckDB process merging the
same batches straight into one parquet result (contest/benchmarks/duckdb_merge.py), and
both against the floor (contest/benchmarks/floor.py: every batch read once, the result's
rows written once, two Spark process starts).

All in the same run, on the same data, with the same cores (DuckDB's `SET threads`),
interleaved for `repeat` rounds, their order rotated each round: `optimized` as `contest
evaluate` times it (write + read, each a whole spark-submit process), DuckDB as a whole
Python process; both checked by the oracle. Ratio = DuckDB seconds / optimized seconds
(>= 1: optimized is faster); each engine / floor says how far it is from what cannot be
avoided. One record per engine and round; duckdb.md shows the newest sitting of each
data set (a scale and a data shape), with intervals and ratios round by round. Each
engine's table and result are dropped once checked (the cached data and oracle stay): at
scale 10 the data, the oracle, optimized's table and a result together are what the disk
holds.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pyarrow.parquet as pq

from contest.benchmarks import floor
from contest.benchmarks.base import (
    CORES,
    DATA,
    REPEAT,
    SCALE,
    SEED,
    WORK,
    Benchmark,
    Option,
    Row,
    Sitting,
    at_least,
    sittings,
)
from contest.benchmarks.disk import disk_needed, free_bytes, refuse
from contest.config import Config, override
from contest.data.checker import SUCCESS_MARKER, compare
from contest.data.oracle import config_budget
from contest.errors import RunError, UsageError
from contest.evaluation.jobs import child_env
from contest.evaluation.strategies import STRATEGIES, round_order
from contest.infra import cds
from contest.infra.pagecache import read_ahead
from contest.infra.proc import run_timed
from contest.infra.spark import log_java_option
from contest.results.benchmarks import DuckDBRecord
from contest.results.intervals import median_interval, paired_ratio
from contest.results.runs import RunRecord

ENGINES = ("optimized", "duckdb", "floor")

VARIANT = Option(
    "--variant",
    "one more optimized run each round under these settings, interleaved with the "
    "default's: KEY=VALUE configuration keys, several joined by '&' "
    "(e.g. write.batch_piece_rows=0); repeatable",
    many=True,
)


DUCKDB_PARTS = Option(
    "--duckdb-parts",
    "DuckDB's key ranges, one query each (default 0: as many as its memory limit needs, "
    "one where the aggregate fits; a sitting of more than one is labelled so)",
    int,
    0,
    **at_least(0),
)


def variant_settings(spec: str) -> dict[str, str]:
    """`a.b=1&c.d=x` as {"a.b": "1", "c.d": "x"}; anything else a one-line error."""
    out = {}
    for item in spec.split("&"):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--variant: expected KEY=VALUE[&KEY=VALUE], got {spec!r}")
        out[key.strip()] = value.strip()
    return out


def run_duckdb(
    cfg: Config, data: Path, cores: int, out_dir: Path, log: Path, parts: int = 0
) -> dict:
    """One timed DuckDB merge into `out_dir` (a result folder the checker takes), in
    `parts` key ranges (0: as many as its memory limit needs)."""
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    cmd = [
        sys.executable,
        "-m",
        "contest.benchmarks.duckdb_merge",
        "--data",
        str(data),
        "--out",
        str(out_dir),
        "--threads",
        str(cores),
        "--memory-limit",
        str(config_budget(cfg).memory_limit),
        "--parts",
        str(parts),
    ]
    if cfg.write.versions:
        cmd += ["--versions", cfg.write.versions]
    r = run_timed(cmd, log)
    shutil.rmtree(out_dir / ".spill", ignore_errors=True)
    if not r.ok:
        raise RunError(f"DuckDB merge exited {r.returncode}: {r.last_line} (log {log})")
    (out_dir / SUCCESS_MARKER).touch()
    return {
        "seconds": round(r.seconds, 3),
        "peak_process_rss_bytes": r.peak_process_rss_bytes,
        "peak_rss_bytes": r.peak_rss_bytes,
        **json.loads(r.last_line),
    }


def disk_plan(cfg: Config, scale: float, folder: Path, repeat: int, variants: int) -> bool:
    """Whether the sitting runs lean: optimized last in its one round, the batches this
    sitting generated removed after its write (the read needs the table only), since the
    batches, the oracle's result, optimized's table and its result do not fit side by
    side (scale 10 on a 70 GB disk). A sitting that fits neither way is refused, and so
    is a lean one asked for more than one optimized run (the batches would be gone)."""
    free = free_bytes(cfg)
    made = not (folder / ".complete").exists()  # generated by this sitting, or cached before
    # Side by side: the batches stay through the read (for the engines after it).
    full = disk_needed(scale, cached=not made, keep_data=True)
    if free is None or free >= full:
        return False
    what = "batches, oracle's result, table and result side by side"
    if not made:
        hint = f"; the batches cached before ({folder}) are not this sitting's to remove"
        raise refuse(scale, full, free, what, hint)
    if repeat > 1 or variants:
        hint = ": without the batches beside the table it runs one round, no --variant"
        raise refuse(scale, full, free, what, hint)
    lean = disk_needed(scale, cached=False, keep_data=False)
    if free < lean:
        raise refuse(scale, lean, free, "even with the batches removed after the write")
    return True


def run_floor(cfg: Config, data: Path, cores: int, rows: int, folder: Path, rnd: int) -> dict:
    """One timed floor: the I/O process, then a trivial spark-submit twice."""
    env = child_env(cfg)  # as the timed jobs run: this Python, no timing-unsafe switches
    env, cds_option = cds.submit_env(cfg, env)  # spark.cds: the starts as the jobs' are
    out = folder / "floor.parquet"
    out.unlink(missing_ok=True)
    io_cmd = [sys.executable, "-m", "contest.benchmarks.floor", "io", "--data", str(data)]
    io_cmd += ["--out", str(out), "--threads", str(cores), "--rows", str(rows)]
    io_cmd += ["--statistics", cfg.read.statistics]  # written as the result is
    io = run_timed(io_cmd, folder / f"floor-io-{rnd}.log", env=env)
    out.unlink(missing_ok=True)
    if not io.ok:
        raise RunError(f"floor I/O exited {io.returncode}: {io.last_line} (log {io.log})")
    submit = str(Path(sys.executable).parent / "spark-submit")
    start_cmd = [submit, "--master", f"local[{cores}]", "--driver-memory", cfg.spark.driver_memory]
    java_options = f"{log_java_option()} {cds_option}".strip()
    start_cmd += ["--driver-java-options", java_options, str(Path(floor.__file__)), "start"]
    starts = []
    for i in (1, 2):
        job = run_timed(start_cmd, folder / f"floor-start-{rnd}-{i}.log", env=env)
        if not job.ok:
            raise RunError(f"trivial spark-submit exited {job.returncode} (log {job.log})")
        starts.append(job)
    noise = [j.noise.outside_share for j in (io, *starts) if j.noise is not None]
    return {
        "seconds": round(io.seconds + sum(j.seconds for j in starts), 3),
        "io_s": round(io.seconds, 3),
        "starts_s": round(sum(j.seconds for j in starts), 3),
        "peak_process_rss_bytes": max(j.peak_process_rss_bytes for j in (io, *starts)),
        "peak_rss_bytes": max(j.peak_rss_bytes for j in (io, *starts)),
        "rows": json.loads(io.last_line)["rows_read"],
        "outside_share": max(noise) if noise else None,
        # Nothing to check: the floor writes rows, not the merged result.
        "correct": True,
    }


def optimized_row(rnd: int, rec: RunRecord, variant: str | None = None) -> Row:
    """An evaluation's record as one round of the `optimized` engine (under `variant`)."""
    return {
        "round": rnd,
        "engine": "optimized",
        **({"variant": variant} if variant else {}),
        "seconds": round((rec.write_s or 0) + (rec.read_s or 0), 3),
        "write_s": rec.write_s,
        "read_s": rec.read_s,
        "peak_process_rss_bytes": max(
            rec.write_peak_process_rss_bytes or 0, rec.read_peak_process_rss_bytes or 0
        ),
        "peak_rss_bytes": max(rec.write_peak_rss_bytes or 0, rec.read_peak_rss_bytes or 0) or None,
        "rows": rec.rows,
        "correct": rec.correct,
        # Why it failed, as DuckDB's failure is shown (the page: "failed after ...").
        **({"error": rec.error} if rec.error else {}),
    }


@dataclass(frozen=True)
class Summary:
    """One sitting: its data and cores, each engine's runs and median, the ratio."""

    data: str | None
    cores: int | None
    rounds: int
    median_s: dict[str, float | None]
    ratio_duckdb_to_optimized: float | None
    # Each engine's median over the floor's (None without a floor in the sitting).
    over_floor: dict[str, float | None]
    all_correct: bool
    runs: dict[str, list[DuckDBRecord]]


def summarize(records: Sequence[DuckDBRecord]) -> Summary:
    """Medians per engine (a variant of optimized is an engine of its own, after it)
    and the ratio, over one sitting's records."""
    variants = sorted({r.label for r in records if r.variant})
    runs = {
        e: [r for r in records if r.label == e] for e in (*ENGINES[:1], *variants, *ENGINES[1:])
    }
    med = {e: median_of([r.seconds for r in rs if r.correct]) for e, rs in runs.items()}
    ratio = med["duckdb"] / med["optimized"] if med["optimized"] and med["duckdb"] else None
    first = records[0] if records else None
    floor = med["floor"]
    over = {e: round(m / floor, 3) if m and floor else None for e, m in med.items()}
    return Summary(
        data=first.data if first else None,
        cores=first.cores if first else None,
        rounds=len(runs["optimized"]),
        median_s=med,
        ratio_duckdb_to_optimized=round(ratio, 3) if ratio else None,
        over_floor=over,
        all_correct=all(r.correct for r in records),
        runs=runs,
    )


def median_of(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def run_seconds(r: DuckDBRecord) -> str:
    """A run's seconds, with the write and read (the floor's I/O and starts) apart; a
    failed one's error."""
    if r.error:
        return f"failed after {r.seconds:.1f} ({r.error})"
    parts = (r.write_s, r.read_s) if r.io_s is None else (r.io_s, r.starts_s)
    split = f" ({parts[0]:.1f} + {parts[1]:.1f})" if None not in parts else ""
    return f"{r.seconds:.1f}{split}"


def new_sitting(r: DuckDBRecord) -> bool:
    """An old record (no `sitting`) begins one when it is round 1 of optimized."""
    return r.round == 1 and r.engine == "optimized"


class DuckDBBench(Benchmark):
    name = "duckdb"
    stem = "duckdb"
    summary = "optimized against a single-process DuckDB merge of the same batches"
    description = (
        "In one run on the same data: optimized (contest evaluate) and one DuckDB process "
        "merging the batches into one parquet result with the contract's operators "
        "(threads = cores), interleaved rounds, both checked by the oracle; medians and "
        "the ratio DuckDB / optimized to <out>/duckdb.md and duckdb.jsonl."
    )
    options = (
        DATA,
        SCALE.but(default=None, help="scale of generated data (default 1)"),
        SEED,
        CORES,
        WORK,
        REPEAT,
        VARIANT,
        DUCKDB_PARTS,
    )

    def check(self, options) -> None:
        super().check(options)
        if options.data and options.scale:
            raise UsageError("give --data or --scale, not both")
        for spec in options.variant or []:
            variant_settings(spec)

    def run(self, sitting: Sitting) -> bool:
        # deferred: pulls in pandas and tqdm; `contest --help` starts without them
        from contest.evaluation.data_cache import cached_data, cached_expected, data_folder

        opts, say = sitting.options, sitting.say
        cfg = sitting.config(STRATEGIES["optimized"])
        # Each variant's configuration, checked before any work (an unknown key: one line).
        variants = {v: override(cfg, variant_settings(v)) for v in opts.variant or []}
        scale = opts.scale or 1.0
        lean = False
        if not opts.data:
            folder = data_folder(cfg, scale, opts.seed)
            lean = disk_plan(cfg, scale, folder, opts.repeat, len(variants))
            if lean:
                say(
                    f"scale {scale:g}: the disk holds the batches, the oracle's result, the "
                    "table and a result only without the batches; optimized runs last and "
                    "the batches this sitting generates are removed after its write"
                )
        data = Path(opts.data) if opts.data else cached_data(cfg, scale, opts.seed, say)
        cores = opts.cores or os.cpu_count() or 1
        expected = cached_expected(cfg, data, cfg.write.versions, say)
        out_dir = cfg.work_path / "bench" / "duckdb" / "result"
        where = {"data": str(data), "cores": cores}
        ok = True

        def drop_batches() -> None:
            say(f"removing {data} (generated by this sitting; the read needs the table only)")
            shutil.rmtree(data, ignore_errors=True)

        ours: dict[str | None, Config] = {None: cfg, **variants}

        def run_duckdb_round(rnd: int, ahead: dict) -> bool:
            say(f"== round {rnd}/{opts.repeat}: duckdb (threads={cores})")
            log = cfg.work_path / "bench" / "duckdb" / f"duckdb-{rnd}.log"
            started = time.monotonic()
            try:
                merged = run_duckdb(cfg, data, cores, out_dir, log, opts.duckdb_parts)
                merged["correct"] = compare(out_dir, expected, budget=config_budget(cfg)).ok
            except RunError as e:  # a result of its own (a full disk, say): the rest goes on
                say(f"duckdb: {e}")
                merged = {"seconds": round(time.monotonic() - started, 3), "correct": False}
                merged["error"] = str(e)
            shutil.rmtree(out_dir, ignore_errors=True)
            (duck,) = sitting.record({"round": rnd, "engine": "duckdb", **merged, **where, **ahead})
            return bool(duck.correct)

        def run_floor_round(rnd: int, ahead: dict) -> bool:
            say(f"== round {rnd}/{opts.repeat}: the floor (read once, write once, 2 starts)")
            keys = pq.ParquetFile(expected).metadata.num_rows
            floor = run_floor(cfg, data, cores, keys, out_dir.parent, rnd)
            sitting.record({"round": rnd, "engine": "floor", **floor, **where, **ahead})
            return True

        def run_optimized_round(rnd: int, ahead: dict, spec: str | None) -> bool:
            after = drop_batches if lean else None
            mine = {**where, **ahead}
            return self._optimized(sitting, ours[spec], spec, rnd, data, cores, mine, after)

        runners: dict[str, Callable[[int, dict, str | None], bool]] = {
            "duckdb": lambda rnd, ahead, _spec: run_duckdb_round(rnd, ahead),
            "floor": lambda rnd, ahead, _spec: run_floor_round(rnd, ahead),
            "optimized": run_optimized_round,
        }
        for rnd in range(1, opts.repeat + 1):
            for step in round_steps(list(ours), rnd, lean):
                # Every engine starts with the batches in the page cache, whatever ran before.
                ahead = {"read_ahead_bytes": read_ahead(data, say).bytes}
                ok = runners[step.engine](rnd, ahead, step.spec) and ok
        return ok

    @staticmethod
    def _optimized(
        sitting: Sitting,
        cfg: Config,
        spec: str | None,
        rnd: int,
        data: Path,
        cores: int,
        where: dict,
        after_write: Callable[[], None] | None = None,
    ) -> bool:
        """One optimized run (the default's or a variant's), recorded, its table's files
        dropped once read, and its metadata and result once checked."""
        # deferred: pulls in pandas and tqdm; `contest --help` starts without them
        from contest.evaluation.evaluate import drop_run, evaluate

        label = f"optimized [{spec}]" if spec else "optimized"
        sitting.say(f"== round {rnd}/{sitting.options.repeat}: {label}")
        rec = evaluate(
            cfg,
            "optimized",
            data=data,
            cores=cores,
            after_write=after_write,
            # Read: the check needs the result only, so it spills where the table was.
            drop_table_after_read=True,
            say=sitting.say,
        )
        drop_run(cfg, rec)
        (row,) = sitting.record({**optimized_row(rnd, rec, spec), **where})
        return bool(row.correct)

    def render(self, records: Sequence[DuckDBRecord]) -> str:
        groups = sittings(records, starts=new_sitting)
        newest = newest_per_data(groups)
        lines = [
            "# Optimized pipeline against a single-process DuckDB merge",
            "",
            "The newest sitting of each data set (a scale and a data shape: the harness's "
            "own generator, or pyarrow's defaults), newest first. Seconds are whole "
            "processes (optimized: write + read spark-submit; DuckDB: one Python process; "
            "the floor: every batch read once, the result's rows written once, two trivial "
            "spark-submits). Each median with its distribution-free interval and n; each "
            "ratio taken round by round inside the sitting (contest/results/intervals.py); "
            "noise: the highest share of the CPUs other work took during an engine's "
            "processes.",
            "",
        ]
        for group in reversed(newest):
            lines += sitting_section(group)
        return "\n".join(lines).rstrip("\n") + "\n"


class RoundStep(NamedTuple):
    """One engine's run in a round: the record's `engine`, and optimized's variant."""

    engine: str
    spec: str | None = None


def round_steps(specs: Sequence[str | None], rnd: int, lean: bool) -> list[RoundStep]:
    """Round `rnd`'s engines in the order they run: optimized's default and each variant,
    DuckDB and the floor, rotated each round (round_order) so none always runs first or
    after the same neighbour. A lean sitting (one round, the batches removed after
    optimized's write) runs optimized last."""
    steps = [*(RoundStep("optimized", s) for s in specs), RoundStep("duckdb"), RoundStep("floor")]
    if lean:
        return [*steps[len(specs) :], *steps[: len(specs)]]
    return round_order(steps, rnd)


def newest_per_data(groups: Sequence[Sequence[DuckDBRecord]]) -> list[Sequence[DuckDBRecord]]:
    """The newest sitting of each data folder, in the order of their sittings."""
    newest: dict[str | None, Sequence[DuckDBRecord]] = {}
    for group in groups:
        if group:
            newest.pop(group[0].data, None)
            newest[group[0].data] = group
    return list(newest.values())


def outside_share(r: DuckDBRecord) -> float | None:
    """Other work's share of the CPUs while the row was measured: the row's own figure
    (the floor's, per process), else its stamp's (the interval since the last row)."""
    if r.outside_share is not None:
        return r.outside_share
    return r.stamp.outside_share if r.stamp is not None else None


def by_round(rs: Sequence[DuckDBRecord]) -> dict[int, float]:
    """Speed (1 / seconds) per round: what `paired_ratio` compares."""
    return {r.round: 1 / r.seconds for r in rs if r.seconds > 0 and r.correct}


def engine_name(name: str, rs: Sequence[DuckDBRecord]) -> str:
    """The engine's label on the page: DuckDB split into key ranges is another
    reference than one query, and says so."""
    parts = max((r.parts or 1) for r in rs) if rs else 1
    return f"{name} ({parts} key ranges)" if parts > 1 else name


def sitting_section(records: Sequence[DuckDBRecord]) -> list[str]:
    """One sitting: its engines' medians with intervals, runs and noise, and the ratios
    round by round."""
    summary = summarize(records)
    first = records[0]
    stamp = first.stamp
    where = f"sitting {first.sitting}" if first.sitting else "sitting"
    if stamp is not None and stamp.git_commit:
        where += f", git {stamp.git_commit}" + (" (dirty)" if stamp.dirty else "")
    lines = [
        f"## `{summary.data}`",
        "",
        f"{where}; cores: {summary.cores} (local[N] and DuckDB's threads); "
        f"{summary.rounds} interleaved round(s).",
        "",
        "| engine | median s [interval] n | runs (s) | peak RSS (GB): process, tree | noise "
        "| correct |",
        "|---|---|---|---|---|---|",
    ]
    for name, rs in summary.runs.items():
        if not rs:
            continue
        good = [r.seconds for r in rs if r.correct]
        iv = median_interval(good) if good else None
        med = "-" if iv is None else f"{iv.median:.1f}"
        med += f" [{iv.low:.1f}-{iv.high:.1f}] n={iv.n}" if iv is not None and iv.n > 1 else ""
        secs = ", ".join(run_seconds(r) for r in rs)
        rss = f"{max((r.peak_process_rss_bytes or 0) for r in rs) / 1e9:.2f}"
        trees = [r.peak_rss_bytes for r in rs if r.peak_rss_bytes]
        rss += f", {max(trees) / 1e9:.2f}" if trees else ", -"
        shares = [x for x in map(outside_share, rs) if x is not None]
        noise = f"{max(shares):.0%}" if shares else "-"
        ok = all(r.correct for r in rs)
        lines.append(f"| {engine_name(name, rs)} | {med} | {secs} | {rss} | {noise} | {ok} |")
    opt = by_round(summary.runs["optimized"])
    duck = paired_ratio("optimized", "duckdb", opt, by_round(summary.runs["duckdb"]))
    lines += [""]
    if duck is not None:
        lines += [
            "DuckDB / optimized, round by round (>= 1.0: optimized is at least as fast): "
            f"**{duck.text()}**",
            "",
        ]
    for name, rs in summary.runs.items():
        if "[" in name and rs:
            r = paired_ratio(name, "optimized", by_round(rs), opt)
            if r is not None:
                lines += [
                    f"{name}: optimized's seconds over its, round by round (> 1: the "
                    f"variant is faster): **{r.text()}**",
                    "",
                ]
    floor = by_round(summary.runs["floor"])
    if floor:
        over = [
            (label, paired_ratio("floor", e, floor, by_round(summary.runs[e])))
            for e, label in (("optimized", "optimized"), ("duckdb", "DuckDB"))
        ]
        text = ", ".join(f"{label} **{r.text()}**" for label, r in over if r is not None)
        lines += [f"Over the floor, round by round: {text}. The floor's runs are I/O + starts.", ""]
    return lines
