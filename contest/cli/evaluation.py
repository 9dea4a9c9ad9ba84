"""Evaluation commands: evaluate, compare, report, sweep, bench."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path

from contest.cli.common import command, config_source, group, say, workload_option
from contest.config import Config
from contest.errors import EXIT_FAILED, EXIT_OK, UsageError
from contest.evaluation.strategies import DEFAULT_SCALE, STRATEGIES


def register(sub: argparse._SubParsersAction) -> None:
    e = command(
        sub,
        "evaluate",
        "the contest's procedure for one strategy: timed write, "
        "merge, timed read, oracle check, score",
        "Run the contest's evaluation for one strategy. The last line printed is one "
        "JSON object; exit 0 only when the result is right.",
        cmd_evaluate,
    )
    e.add_argument(
        "--strategy", default="optimized", choices=sorted(STRATEGIES), help="what to evaluate"
    )
    _eval_args(e)

    c = command(
        sub,
        "compare",
        "strategies side by side, interleaved, with medians",
        "Run strategies interleaved (A B C A B C ...) and print medians and the "
        "ratios of optimized to each.",
        cmd_compare,
    )
    c.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated strategies")
    c.add_argument("--repeat", type=int, default=1, help="rounds")
    _eval_args(c)

    r = command(
        sub,
        "report",
        "rebuild the results table and chart from the runs file",
        "Rebuild <results>/README.md and the PNG chart from runs.jsonl.",
        cmd_report,
    )
    r.add_argument("--results", default=None, help="runs file (default: runs.jsonl in results_dir)")

    s = command(
        sub,
        "sweep",
        "run a parameter sweep from a TOML file",
        "Run every case of a sweep file as `contest evaluate` does; resume where an "
        "interrupted sweep stopped; write a table, plots and the best configuration. "
        "See sweeps/*.toml.",
        cmd_sweep,
    )
    s.add_argument("file", help="sweep file (TOML)")
    s.add_argument("--out", help="sweep folder (default: <results_dir>/sweeps/<name>)")
    s.add_argument("--work", help="work folder (default: work_dir)")
    s.add_argument("--check", action="store_true", help="validate the file, run nothing")
    s.add_argument("--master", help=MASTER_HELP)

    bench = group(
        sub,
        "bench",
        "benchmarks apart from the contest score",
        "Benchmarks that are not the contest's score.",
        "bench_command",
    )
    br = command(
        bench,
        "read",
        "merge-on-read cost per operator, against the default read",
        "Write one table, then time its merged read with no operators, the contest's, "
        "and each operator alone (interleaved).",
        cmd_bench_read,
    )
    br.add_argument(
        "--scale",
        type=float,
        action="append",
        help="scale of generated data (repeatable; default 0.1)",
    )
    br.add_argument("--repeat", type=int, default=3, help="rounds")
    br.add_argument("--out", help="results folder (default: results_dir)")
    bk = command(
        bench,
        "compact",
        "the read before and after `contest compact`",
        "Write one table, time the contest's read (checked by the oracle) --repeat times, "
        "compact it (one merged file per bucket), time the read again; results to "
        "<out>/compact.md and compact.jsonl.",
        cmd_bench_compact,
    )
    bk.add_argument("--scale", type=float, default=1.0, help="scale of generated data")
    bk.add_argument("--seed", type=int, default=2022, help="generator seed")
    bk.add_argument("--repeat", type=int, default=3, help="reads before and after")
    bk.add_argument("--out", help="results folder (default: results_dir)")
    register_bench_faults(bench)


def register_bench_faults(bench: argparse._SubParsersAction) -> None:
    from contest.evaluation.faults import EXPERIMENTS, FaultPlan

    d = FaultPlan()
    bf = command(
        bench,
        "faults",
        "fault-injection experiments: kills, crashes, races, a full disk",
        "Break things on purpose on small generated data (kill -9 of write, meta merge "
        "and read; a PostgreSQL crash on a separate cluster; concurrent writers; a full "
        "disk; overlapping evaluations) and count what was lost, destroyed, half-committed "
        "and recovered; results to <results>/faults.md and faults.jsonl. Not a test: "
        "minutes of work, exit 0 only when every goal is met.",
        cmd_bench_faults,
    )
    bf.add_argument("--scale", type=float, default=0.01, help="scale of generated data")
    bf.add_argument("--seed", type=int, default=2022, help="generator and kill-moment seed")
    bf.add_argument("--write-kills", type=int, default=d.write_kills, help="kills of write")
    bf.add_argument("--merge-kills", type=int, default=d.merge_kills, help="kills of meta merge")
    bf.add_argument(
        "--merge-commits", type=int, default=d.merge_commits, help="commits of its history"
    )
    bf.add_argument("--read-kills", type=int, default=d.read_kills, help="kills of read")
    bf.add_argument("--pg-crashes", type=int, default=d.pg_crashes, help="durable crash runs")
    bf.add_argument(
        "--pg-unsafe-crashes",
        type=int,
        default=d.pg_unsafe_crashes,
        help="crash runs with pg.unsafe_no_fsync=true (contrast)",
    )
    bf.add_argument(
        "--pg-port", type=int, default=d.pg_port, help="port of the separate crash cluster"
    )
    bf.add_argument(
        "--writer-rounds", type=int, default=d.writer_rounds, help="4 writers, existing table"
    )
    bf.add_argument(
        "--create-rounds", type=int, default=d.create_rounds, help="4 writers racing to create"
    )
    bf.add_argument("--disk-full-runs", type=int, default=d.disk_full_runs, help="tmpfs runs")
    bf.add_argument(
        "--evaluate-overlaps", type=int, default=d.evaluate_overlaps, help="overlapping pairs"
    )
    bf.add_argument(
        "--only",
        help=f"comma-separated experiments (default all): {', '.join(EXPERIMENTS)}",
    )
    bf.add_argument("--out", help="results folder (default: results_dir)")

    bd = command(
        bench,
        "duckdb",
        "optimized against a single-process DuckDB merge of the same batches",
        "In one run on the same data: optimized (contest evaluate) and one DuckDB process "
        "merging the batches into one parquet result with the contract's operators "
        "(threads = cores), interleaved rounds, both checked by the oracle; medians and "
        "the ratio DuckDB / optimized to <out>/duckdb.md and duckdb.jsonl.",
        cmd_bench_duckdb,
    )
    _eval_args(bd)
    bd.add_argument("--repeat", type=int, default=3, help="rounds")
    bd.add_argument("--out", help="results folder (default: results_dir)")

    bs = command(
        bench,
        "scale",
        "optimized at several scales: cost per row, memory, files per bucket",
        "Run optimized at each scale and record write/read seconds, rows/core/s, seconds "
        "per million rows of in-process time, peak RSS per process, stored bytes and "
        "files per bucket; <out>/scale.md, scale.jsonl, scale.png (newest row per scale of "
        "every sitting). Unless --keep-data, a scale's batches are removed once written "
        "and its table, result and oracle's result before the next scale.",
        cmd_bench_scale,
    )
    bs.add_argument("--scales", default="0.1,1,3,10", help="comma-separated scales")
    bs.add_argument("--cores", type=int, help="local[N] of the timed jobs (default: all)")
    bs.add_argument("--work", help="work folder (default: work_dir)")
    bs.add_argument(
        "--keep-data", action="store_true", help="keep each scale's batches, table and result"
    )
    bs.add_argument("--out", help="results folder (default: results_dir)")

    bc = command(
        bench,
        "commits",
        "the project's commit path against LakeSoul's DBManager, concurrent writers",
        "Commit MergeCommits from concurrent writers through the project's commit path "
        "and through LakeSoul 2.6.2's DBManager (as shipped, and verified/re-driven); "
        "commits/s, retries, lost commits. Writes commit_paths.md.",
        cmd_bench_commits,
    )
    bc.add_argument("--writers", type=int, default=8, help="concurrent writers")
    bc.add_argument("--commits", type=int, default=25, help="commits per writer")
    bc.add_argument("--repeat", type=int, default=3, help="rounds")
    bc.add_argument("--out", help="results folder (default: results_dir)")


MASTER_HELP = (
    "run the timed jobs on this Spark master, e.g. spark://127.0.0.1:7077 (`contest "
    "cluster up` prints it); default local[--cores]"
)


def _eval_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", help="data folder (default: generated at --scale, cached)")
    p.add_argument(
        "--scale", type=float, help=f"scale of generated data (default {DEFAULT_SCALE:g})"
    )
    p.add_argument("--seed", type=int, default=2022, help="generator seed")
    workload_option(p)
    p.add_argument(
        "--cores",
        type=int,
        help="local[N] of the timed jobs (default: all); with --master, the cores the "
        "application asks for (spark.cores.max) and must be granted to be scored",
    )
    p.add_argument("--master", help=MASTER_HELP)
    p.add_argument("--work", help="work folder (default: work_dir)")
    p.add_argument(
        "--results",
        default=None,
        help="append records to this file (default: runs.jsonl in results_dir; '-' for none)",
    )


def _results_file(arg: str | None, cfg: Config) -> Path | None:
    if arg == "-":
        return None
    return Path(arg) if arg else cfg.results_path / "runs.jsonl"


def strategy_config(args: argparse.Namespace, strategy: str) -> Config:
    """The strategy's preset under the user's file, environment and flags."""
    cfg = config_source(args).load(preset=STRATEGIES[strategy])
    return dataclasses.replace(cfg, work_dir=args.work) if args.work else cfg


def _check_eval_args(args: argparse.Namespace) -> None:
    if args.data and args.scale:
        raise UsageError("give --data or --scale, not both")
    if args.scale is not None and args.scale <= 0:
        raise UsageError(f"--scale must be positive, got {args.scale}")
    if args.cores is not None and args.cores < 1:
        raise UsageError(f"--cores must be at least 1, got {args.cores}")


def cmd_evaluate(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.evaluate import append_record, evaluate

    _check_eval_args(args)
    cfg = strategy_config(args, args.strategy)
    record = evaluate(
        cfg,
        args.strategy,
        data=args.data or None,
        scale=args.scale,
        seed=args.seed,
        cores=args.cores,
        master=args.master,
        say=say,
    )
    out = _results_file(args.results, cfg)
    if out:
        append_record(out, record)
    print(json.dumps({k: v for k, v in record.items() if k not in ("config", "environment")}))
    return EXIT_OK if record["correct"] else EXIT_FAILED


def cmd_compare(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.evaluate import append_record, evaluate
    from contest.evaluation.results import compare_table

    _check_eval_args(args)
    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [s for s in names if s not in STRATEGIES]
    if unknown or not names:
        raise UsageError(
            f"unknown strategy {', '.join(unknown) or '(none given)'}: choose from "
            f"{', '.join(STRATEGIES)}"
        )
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    out = _results_file(args.results, cfg)
    records = []
    for rnd in range(args.repeat):
        for name in names:
            say(f"== round {rnd + 1}/{args.repeat}: {name}")
            rec = evaluate(
                strategy_config(args, name),
                name,
                data=args.data or None,
                scale=args.scale,
                seed=args.seed,
                cores=args.cores,
                master=args.master,
                say=say,
            )
            rec["compare_round"] = rnd + 1
            records.append(rec)
            if out:
                append_record(out, rec)
    table, summary = compare_table(records)
    print(table)
    print(json.dumps(summary))
    return EXIT_OK if all(r["correct"] for r in records) else EXIT_FAILED


def cmd_report(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.results import write_report

    runs = _results_file(args.results or "", cfg)
    if runs is None or not runs.exists():
        raise UsageError(f"no runs file at {runs}: run `contest evaluate` first")
    readme, chart = write_report(runs)
    print(f"wrote {readme} and {chart}")
    from contest.evaluation.results import load_runs
    from contest.peers.analysis import amplification_tables

    records = load_runs(runs)
    if any(r.get("peer_write") for r in records):  # the peer formats' write amplification
        batches = runs.parent / "peers_batches.md"
        batches.write_text(amplification_tables(records))
        print(f"wrote {batches}")
    return EXIT_OK


def cmd_sweep(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.sweep import (
        best_case,
        load_sweep,
        render_table,
        run_sweep,
        summarize,
        write_outputs,
    )

    source = config_source(args)
    sweep = load_sweep(Path(args.file), source.env, source.overrides)
    runs = len(sweep.cases) * sweep.repeat
    if args.check:
        print(
            f"{args.file}: {len(sweep.cases)} case(s) x {sweep.repeat} = {runs} run(s), "
            f"strategy {sweep.strategy}, varying {', '.join(sweep.varied)}"
        )
        return EXIT_OK
    out = Path(args.out) if args.out else cfg.results_path / "sweeps" / sweep.name
    records = run_sweep(sweep, out, source.env, work_dir=args.work, say=say, master=args.master)
    summaries = summarize(sweep, records)
    paths = write_outputs(sweep, summaries, out, source.env)
    print(render_table(summaries))
    best = best_case(summaries)
    if best:
        print(f"best: {best.label} ({best.median:,.0f} rows/core/s); config {paths['best']}")
    else:
        print("no case gave a correct result")
    return EXIT_OK if best else EXIT_FAILED


def cmd_bench_read(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.bench_read import run_read_bench, write_read_results
    from contest.evaluation.evaluate import cached_data
    from contest.infra.postgres import resolve_connection
    from contest.infra.spark import spark_session

    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    conn = resolve_connection(cfg)
    results = []
    with spark_session(cfg, "contest-bench-read") as spark:
        for scale in args.scale or [0.1]:
            data = cached_data(cfg, scale, 2022, say)
            res = run_read_bench(spark, conn, cfg, data, args.repeat, say=say)
            res["scale"] = scale
            results.append(res)
    out = write_read_results(results, Path(args.out) if args.out else cfg.results_path)
    print(out.read_text())
    return EXIT_OK


def cmd_bench_compact(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.bench_compact import run_compact_bench, write_compact_results
    from contest.evaluation.evaluate import cached_data, cached_expected
    from contest.infra.postgres import resolve_connection
    from contest.infra.spark import spark_session

    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    conn = resolve_connection(cfg)
    data = cached_data(cfg, args.scale, args.seed, say)
    expected = cached_expected(cfg, data, "", say)
    with spark_session(cfg, "contest-bench-compact") as spark:
        res = run_compact_bench(spark, conn, cfg, data, expected, args.repeat, say=say)
    res["scale"] = args.scale
    out = write_compact_results(res, Path(args.out) if args.out else cfg.results_path)
    print(out.read_text())
    return EXIT_OK


def cmd_bench_duckdb(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.bench_duckdb import render, run_duckdb_bench
    from contest.evaluation.evaluate import cached_data

    _check_eval_args(args)
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    cfg = strategy_config(args, "optimized")
    data = Path(args.data) if args.data else cached_data(cfg, args.scale or 1.0, args.seed, say)
    cores = args.cores or os.cpu_count() or 1
    out = Path(args.out) if args.out else cfg.results_path
    out.mkdir(parents=True, exist_ok=True)
    summary = run_duckdb_bench(cfg, data, cores, args.repeat, out / "duckdb.jsonl", say=say)
    (out / "duckdb.md").write_text(render(summary))
    print(render(summary))
    print(json.dumps({k: v for k, v in summary.items() if k != "runs"}))
    return EXIT_OK if summary["all_correct"] else EXIT_FAILED


def cmd_bench_scale(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.bench_scale import render, run_scale_bench, write_outputs

    try:
        scales = [float(s) for s in args.scales.split(",") if s.strip()]
    except ValueError:
        raise UsageError(f"--scales: not a list of numbers: {args.scales!r}") from None
    if not scales or any(s <= 0 for s in scales):
        raise UsageError(f"--scales: give positive scales, got {args.scales!r}")
    if args.cores is not None and args.cores < 1:
        raise UsageError(f"--cores must be at least 1, got {args.cores}")
    cfg = config_source(args).load(preset=STRATEGIES["optimized"])
    if args.work:
        cfg = dataclasses.replace(cfg, work_dir=args.work)
    out = Path(args.out) if args.out else cfg.results_path

    def record(row: dict) -> None:
        write_outputs([row], out)

    rows = run_scale_bench(cfg, scales, args.cores, args.keep_data, say=say, on_row=record)
    print(render(rows))
    return EXIT_OK if all(r["correct"] for r in rows) else EXIT_FAILED


def cmd_bench_faults(args: argparse.Namespace, cfg: Config) -> int:
    import time

    from contest.evaluation.evaluate import environment
    from contest.evaluation.faults import EXPERIMENTS, FaultPlan, run_faults, write_fault_results
    from contest.infra.postgres import resolve_connection
    from contest.infra.spark import cores_of, spark_session

    only = tuple(s.strip() for s in (args.only or ",".join(EXPERIMENTS)).split(",") if s.strip())
    unknown = [s for s in only if s not in EXPERIMENTS]
    if unknown or not only:
        raise UsageError(
            f"unknown experiment {', '.join(unknown) or '(none given)'}: choose from "
            f"{', '.join(EXPERIMENTS)}"
        )
    counts = {k: v for k, v in vars(args).items() if k in FaultPlan.__dataclass_fields__}
    bad = [k for k, v in counts.items() if isinstance(v, int) and v < 0]
    if bad or args.scale <= 0:
        raise UsageError(f"counts must be 0 or more and --scale positive: {bad or args.scale}")
    counts.pop("only", None)
    plan = FaultPlan(**counts, only=only)
    conn = resolve_connection(cfg)
    out_dir = Path(args.out) if args.out else cfg.results_path
    done: list = []
    with spark_session(cfg, "contest-bench-faults") as spark:
        info = {
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "git_commit": environment()["git_commit"],
            "scale": args.scale,
            "seed": args.seed,
            "cores": cores_of(spark),
        }

        def record(outcome) -> None:
            done.append(outcome)
            write_fault_results([outcome], info, out_dir)

        outcomes = run_faults(
            cfg, spark, conn, plan, args.scale, args.seed, say=say, on_outcome=record
        )
    print((out_dir / "faults.md").read_text())
    return EXIT_OK if all(o.goal_met or o.expected_losses for o in outcomes) else EXIT_FAILED


def cmd_bench_commits(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.bench_commits import run_commit_bench, write_commit_results
    from contest.infra.lakesoul_jvm import COORDINATES, session_config
    from contest.infra.postgres import resolve_connection
    from contest.infra.spark import spark_session

    if min(args.writers, args.commits, args.repeat) < 1:
        raise UsageError("--writers, --commits and --repeat must be at least 1")
    conn = resolve_connection(cfg)
    with spark_session(session_config(cfg), "contest-bench-commits", COORDINATES) as spark:
        rounds = run_commit_bench(
            spark, conn, cfg, args.writers, args.commits, args.repeat, say=say
        )
    note = (
        f"PostgreSQL: {'external' if cfg.pg.external else 'embedded'}"
        f"{', fsync off' if cfg.pg.unsafe_no_fsync else ''}; measured on a shared machine: "
        "the rates are rough, the lost/retry counts are not."
    )
    out = write_commit_results(rounds, Path(args.out) if args.out else cfg.results_path, note)
    print(out.read_text())
    return (
        EXIT_OK
        if all(x.lost == 0 for r in rounds for x in r if x.path != "dbmanager-plain")
        else EXIT_FAILED
    )
