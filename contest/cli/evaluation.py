"""Evaluation commands: evaluate, compare, report, sweep."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path

from contest.cli.common import command, config_source, say
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
