"""Evaluation commands: evaluate, compare, report, sweep."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contest.cli.common import (
    ListAction,
    alias,
    command,
    config_source,
    result,
    say,
    workload_option,
)
from contest.config import Config
from contest.errors import EXIT_FAILED, EXIT_OK, UsageError
from contest.evaluation.report import compare_table, write_report
from contest.evaluation.strategies import DEFAULT_SCALE, STRATEGIES, is_strategy, preset
from contest.peers.analysis import amplification_tables
from contest.peers.registry import available_strategies
from contest.results.runs import RunRecord, append_records, load_records, local_runs, select_runs

if TYPE_CHECKING:
    from contest.evaluation.sweep import Sweep


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
    e.set_defaults(needs_metadata=True)
    e.add_argument(
        "--strategy",
        default="optimized",
        help=f"what to evaluate, one of: {', '.join(STRATEGIES)} (a peer's "
        "`<strategy>:defaults`: its format's documented defaults)",
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
    c.set_defaults(needs_metadata=True)
    c.add_argument(
        "--strategies",
        action=ListAction,
        default=available_strategies(),
        help="strategies, comma-separated or the flag repeated",
    )
    c.add_argument("--repeat", type=int, default=1, help="rounds")
    _eval_args(c)

    r = command(
        sub,
        "report",
        "rebuild every results page and chart from the records",
        "Rebuild every generated page and chart of <results_dir> from its records (the "
        "score's README.md, each benchmark's, sweep's, cluster's and workload's page: "
        "`contest publish` adds runs to runs.jsonl); --results DIR for another results "
        "folder's, --results FILE for one runs file's README.md, --local for this "
        "machine's own runs (written beside them, in the ignored work folder).",
        cmd_report,
    )
    where = r.add_mutually_exclusive_group()
    where.add_argument(
        "--results",
        default=None,
        help="a results folder, or one runs file (default: the folder results_dir)",
    )
    where.add_argument("--local", action="store_true", help="this machine's own runs")

    p = command(
        sub,
        "publish",
        "copy chosen local runs into the published results",
        "Append the runs you name from this machine's own store (<work_dir>/results/"
        "<machine>/runs.jsonl, where evaluate, compare and ./build.sh run record them) to "
        "the published <results_dir>/runs.jsonl, which `contest report` tabulates. Says "
        "which runs it took and which were already there; warns about runs taken on a "
        "busy machine or from a dirty tree.",
        cmd_publish,
    )
    p.add_argument(
        "--runs",
        action=ListAction,
        help="all, last, last:N, or run ids (or prefixes), comma-separated or repeated",
    )
    p.add_argument("--list", action="store_true", help="list the local runs and their ids")
    p.add_argument("--json", action="store_true", help="with --list: print JSON")
    p.add_argument("--from", dest="source", help="runs file to take from (default: local store)")
    p.add_argument("--to", help="published runs file (default: runs.jsonl in results_dir)")

    s = command(
        sub,
        "sweep",
        "run a parameter sweep from a TOML file",
        "Run every case of a sweep file as `contest evaluate` does; resume where an "
        "interrupted sweep stopped; write a table and plots (median, min–max, n), and "
        "best.toml (the best case's settings over the base) only when that case beats every "
        "other beyond the spread of the runs. "
        "See sweeps/*.toml.",
        cmd_sweep,
    )
    s.set_defaults(needs_metadata=True)
    s.add_argument("file", help="sweep file (TOML)")
    s.add_argument("--data", help="run every case on this data folder (your own: with --workload)")
    workload_option(s)
    s.add_argument(
        "--results",
        metavar="DIR",
        help="sweep folder (default: <work_dir>/results/<machine>/sweeps/<name>, ignored; "
        "give results/sweeps/<name> to publish one)",
    )
    alias(s, "--out", "results")  # the old spelling
    s.add_argument(
        "--scale",
        type=float,
        help="run the cases at this scale instead of the file's (its folder and name get "
        "a -scale-S suffix: peer-paimon-scale-1)",
    )
    s.add_argument("--repeat", type=int, help="runs a case, instead of the file's")
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
        help="append records to this file (default: this machine's own store, "
        "<work_dir>/results/<machine>/runs.jsonl, ignored; `contest publish` takes runs "
        "from it; '-' for none)",
    )


def _results_file(arg: str | None, cfg: Config) -> Path | None:
    """Where evaluate and compare append: this machine's own store unless told."""
    if arg == "-":
        return None
    return Path(arg) if arg else local_runs(cfg.work_path)


def _recorded(record: RunRecord, out: Path | None) -> None:
    """Append the record and say where, and whether its timings can be trusted."""
    if out:
        append_records(out, [record])
        say(f"run {record.run_id} recorded in {out}")
    if record.busy:
        say(f"note: busy machine ({record.busy}): this run's timings are suspect")


def strategy_config(args: argparse.Namespace, strategy: str) -> Config:
    """The strategy's preset under the user's file, environment and flags."""
    cfg = config_source(args).load(preset=preset(strategy))
    return dataclasses.replace(cfg, work_dir=args.work) if args.work else cfg


def _check_eval_args(args: argparse.Namespace) -> None:
    if args.data and args.scale:
        raise UsageError("give --data or --scale, not both")
    if args.scale is not None and args.scale <= 0:
        raise UsageError(f"--scale must be positive, got {args.scale}")
    if args.cores is not None and args.cores < 1:
        raise UsageError(f"--cores must be at least 1, got {args.cores}")


def known_strategies(names: list[str]) -> list[str]:
    """The names, all of them strategies: one line otherwise, the same for evaluate's
    --strategy and compare's --strategies."""
    unknown = [s for s in names if not is_strategy(s)]
    if unknown or not names:
        raise UsageError(
            f"unknown strategy {', '.join(unknown) or '(none given)'}: choose from "
            f"{', '.join(STRATEGIES)}"
        )
    return names


def cmd_evaluate(args: argparse.Namespace, cfg: Config) -> int:
    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.api import evaluate

    _check_eval_args(args)
    known_strategies([args.strategy])
    cfg = strategy_config(args, args.strategy)
    record = evaluate(args.strategy, cfg, **_run_options(args))
    _recorded(record, _results_file(args.results, cfg))
    print(score_line(record))  # for people; the record below is for scripts
    print(json.dumps(record.summary(), default=str))
    return EXIT_OK if record.correct else EXIT_FAILED


def _run_options(args: argparse.Namespace) -> dict[str, Any]:
    """What `evaluate` and `compare` give every run from their flags (data, scale, seed,
    cores, master) and where its progress goes."""
    return {
        "data": args.data or None,
        "scale": args.scale,
        "seed": args.seed,
        "cores": args.cores,
        "master": args.master,
        "say": say,
    }


def score_line(rec: RunRecord) -> str:
    """The run in one line: the score and what it is made of, or why there is none."""

    def secs(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f} s"

    head = f"{rec.strategy}: " + ("correct" if rec.correct else "NOT correct")
    if rec.failed_phase:
        head = f"{rec.strategy}: FAILED in {rec.failed_phase}"
    score = f"{rec.rows_per_core_s:,.1f} rows/core/s" if rec.rows_per_core_s else "not scored"
    rows = f"{rec.rows:,} rows" if rec.rows is not None else "rows unknown"
    return (
        f"{head}; write {secs(rec.write_s)}, read {secs(rec.read_s)}: {score} "
        f"({rows}, {rec.cores} cores)"
    )


def cmd_compare(args: argparse.Namespace, cfg: Config) -> int:
    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.evaluation.evaluate import evaluate

    _check_eval_args(args)
    names = known_strategies(args.strategies)
    if args.repeat < 1:
        raise UsageError("--repeat must be at least 1")
    out = _results_file(args.results, cfg)
    records = []
    for rnd in range(args.repeat):
        for name in names:
            say(f"== round {rnd + 1}/{args.repeat}: {name}")
            rec = evaluate(strategy_config(args, name), name, **_run_options(args))
            rec.compare_round = rnd + 1
            records.append(rec)
            _recorded(rec, out)
    table, summary = compare_table(records)
    print(table)
    print(json.dumps(summary))
    return EXIT_OK if all(r.correct for r in records) else EXIT_FAILED


def cmd_report(args: argparse.Namespace, cfg: Config) -> int:
    # A folder (the default results_dir, or --results DIR as the benchmarks take it):
    # every page under it; a file: that runs file's README.md.
    folder = None if args.local else cfg.results_path
    if args.results:
        folder = Path(args.results) if Path(args.results).is_dir() else None
    if folder is not None:
        # deferred: pulls in pandas and tqdm; `contest --help` starts without them
        from contest.cli.pages import regenerate

        if not (folder / "runs.jsonl").exists():
            raise UsageError(
                f"no runs file at {folder / 'runs.jsonl'}: run `contest evaluate` "
                "and `contest publish` first"
            )
        written = [str(p) for p in regenerate(folder)]
        result(
            {"results": str(folder), "wrote": written},
            f"wrote {len(written)} page(s) and chart(s) under {folder}",
        )
        return EXIT_OK
    runs = local_runs(cfg.work_path) if args.local else Path(args.results)
    if not runs.exists():
        raise UsageError(f"no runs file at {runs}: run `contest evaluate` first")
    readme, chart = write_report(runs)
    wrote = [str(readme), str(chart)]
    records = load_records(runs)
    if any(r.peer_write for r in records):  # the peer formats' write amplification
        batches = runs.parent / "peers_batches.md"
        batches.write_text(amplification_tables(records))
        wrote.append(str(batches))
    result({"runs": str(runs), "wrote": wrote}, f"wrote {', '.join(wrote)}")
    return EXIT_OK


def cmd_publish(args: argparse.Namespace, cfg: Config) -> int:
    source = Path(args.source) if args.source else local_runs(cfg.work_path)
    if not source.exists():
        raise UsageError(f"no local runs at {source}: run `contest evaluate` first")
    local = load_records(source)
    if args.list:
        if args.json:
            print(json.dumps({"runs": [r.summary() for r in local]}, default=str))
            return EXIT_OK
        for r in local:
            print(_run_line(r))
        return EXIT_OK
    if not args.runs:
        raise UsageError("name the runs to publish: --runs all|last|last:N|ID,... (--list)")
    target = Path(args.to) if args.to else cfg.results_path / "runs.jsonl"
    published = {r.run_id for r in load_records(target)} if target.exists() else set()
    chosen = select_runs(local, ",".join(args.runs))
    new = [r for r in chosen if not (r.run_id and r.run_id in published)]
    for r in chosen:
        print(("published " if r in new else "already published ") + _run_line(r))
        if r in new and (r.busy or r.git_dirty):
            why = [f"busy machine ({r.busy})"] if r.busy else []
            why += ["dirty tree"] if r.git_dirty else []
            say(f"warning: run {r.run_id} was taken on a {' and a '.join(why)}")
    append_records(target, new)
    result(
        {
            "to": str(target),
            "published": [r.run_id for r in new],
            "already_published": [r.run_id for r in chosen if r not in new],
        },
        f"{len(new)} run(s) appended to {target}; `contest report` rebuilds its table",
    )
    return EXIT_OK


def _run_line(r: RunRecord) -> str:
    score = f"{r.rows_per_core_s:,.0f} rows/core/s" if r.rows_per_core_s else "no score"
    scale = f"scale {r.scale:g}" if r.scale is not None else "scale ?"
    state = "correct" if r.correct else f"FAILED in {r.failed_phase}"
    flags = (" busy" if r.busy else "") + (" dirty" if r.git_dirty else "")
    return f"{r.run_id or '(no id)'} {r.when} {r.strategy} {scale} {state} {score}{flags}"


def sized(sweep: Sweep, args: argparse.Namespace) -> Sweep:
    """The sweep at the command line's --scale and --repeat, when given: a preset tuned
    at scale 0.1 checked where it is compared (scale 1, three runs a case)."""
    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.evaluation.sweep import at_scale

    if args.repeat is not None:
        if args.repeat < 1:
            raise UsageError(f"--repeat must be at least 1, got {args.repeat}")
        sweep = dataclasses.replace(sweep, repeat=args.repeat)
    if args.scale is None:
        return sweep
    if args.scale <= 0:
        raise UsageError(f"--scale must be positive, got {args.scale}")
    if sweep.data:
        raise UsageError(f"--scale: sweep {sweep.name} runs on its file's data ({sweep.data})")
    return at_scale(sweep, args.scale)


def cmd_sweep(args: argparse.Namespace, cfg: Config) -> int:
    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.evaluation.sweep import load_sweep, run_sweep
    from contest.evaluation.sweep_page import render_table, summarize, verdict, write_outputs

    source = config_source(args)
    # --workload: its settings under every case's (the --set flags still win).
    overrides = {**(source.workload or {}), **source.overrides}
    data = str(Path(args.data).absolute()) if args.data else None  # your own data
    sweep = sized(load_sweep(Path(args.file), source.env, overrides, data), args)
    runs = len(sweep.cases) * sweep.repeat
    if args.check:
        result(
            {
                "sweep": sweep.name,
                "cases": len(sweep.cases),
                "repeat": sweep.repeat,
                "runs": runs,
                "strategy": sweep.strategy,
                "varied": list(sweep.varied),
            },
            f"{args.file}: {len(sweep.cases)} case(s) x {sweep.repeat} = {runs} run(s), "
            f"strategy {sweep.strategy}, varying {', '.join(sweep.varied)}",
        )
        return EXIT_OK

    local = local_runs(cfg.work_path).parent
    out = Path(args.results) if args.results else local / "sweeps" / sweep.name
    records = run_sweep(sweep, out, source.env, work_dir=args.work, say=say, master=args.master)
    summaries = summarize(sweep, records)
    paths = write_outputs(sweep, summaries, out, source.env, records)
    print(render_table(summaries))
    answer = verdict(summaries)
    print(answer.text + (f"; its settings: {paths['best']}" if answer.best else ""))
    result(
        {
            "sweep": sweep.name,
            "folder": str(out),
            "verdict": answer.text,
            "best": str(paths["best"]) if answer.best else None,
        }
    )
    return EXIT_OK if answer.top else EXIT_FAILED
