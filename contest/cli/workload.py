"""`contest workload run|publish`: a workload's phases (LST-Bench style) for several
strategies, and publishing their records (contest/workload)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from contest.cli.common import ListAction, command, group, named_workloads, result, say
from contest.cli.evaluation import known_strategies, strategy_config
from contest.config import Config, absolute_paths
from contest.data.batches import discover
from contest.data.staging import staged
from contest.errors import EXIT_FAILED, EXIT_OK, UsageError
from contest.infra.machine import check_local_cores
from contest.results.workloads import append, load, local_file, published_file
from contest.workload.plan import load_plan
from contest.workload.report import write_report


def register(sub: argparse._SubParsersAction) -> None:
    wl = group(
        sub,
        "workload",
        "run a workload's phases (upserts, reads, merges, compactions) for strategies",
        "A workload file's [[phase]] tables and [longevity] block (README, Workloads), "
        "run for each strategy, every read checked by the oracle at the version it read.",
        "workload_command",
    )
    run = command(
        wl,
        "run",
        "run a workload's phases for each strategy, interleaved step by step",
        "Generate (or reuse) the workload's data, then run its phases for each strategy "
        "in turn at every step; one record per phase into this machine's results "
        "(<work_dir>/results/<machine>/workloads/<workload>.jsonl) with a markdown page "
        "and charts beside it.",
        cmd_run,
    )
    run.set_defaults(needs_metadata=True)
    run.add_argument(
        "workload",
        metavar="NAME|FILE",
        help=f"a named workload (workloads/*.toml: {named_workloads()}) or a file",
    )
    run.add_argument(
        "--strategies",
        action=ListAction,
        default=["optimized", "baseline-mor"],
        help="strategies to run, comma-separated",
    )
    run.add_argument(
        "--scale", type=float, default=0.01, help="data scale (1 = the workload's sizes)"
    )
    run.add_argument("--seed", type=int, default=2022, help="random seed of the data")
    run.add_argument("--data", help="use this data folder instead of generating one")
    run.add_argument(
        "--cores",
        type=int,
        help="cores of each job (local[N]; default: 2, or the machine's if fewer)",
    )
    run.add_argument("--work", help="work folder (default: work_dir)")
    run.add_argument(
        "--results",
        help="records file to append to, or a results folder (then its "
        "workloads/<workload>.jsonl, e.g. --results results to publish; default: this "
        "machine's own store)",
    )

    pub = command(
        wl,
        "publish",
        "copy a local workload run into results/workloads and render it",
        "Append the chosen run's phase records to <results_dir>/workloads/<workload>.jsonl "
        "and rebuild its markdown page and chart.",
        cmd_publish,
    )
    pub.add_argument("name", help="the workload's name (its records file's stem)")
    pub.add_argument("--run", default="last", help="the run id to publish (default: last)")
    pub.add_argument("--source", help="local records file (default: this machine's own)")
    pub.add_argument("--to", help="published records file (default: results/workloads/NAME.jsonl)")


def _configs(args: argparse.Namespace) -> dict[str, Config]:
    # The same names as evaluate and bench peers: a peer's `<strategy>:defaults` too.
    names = known_strategies(list(args.strategies or []))
    return {s: absolute_paths(strategy_config(args, s)) for s in names}


def cmd_run(args: argparse.Namespace, cfg: Config) -> int:
    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.evaluation.data_cache import cached_data

    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.workload.runner import run_workload

    cores = min(2, os.cpu_count() or 1) if args.cores is None else args.cores
    if args.scale <= 0 or cores < 1:
        raise UsageError("--scale must be positive and --cores at least 1")
    check_local_cores(cores, None, os.cpu_count())  # each job is local[cores]
    steps = load_plan(args.workload, cfg.workload.batches)  # bad phases: exit 2 now
    configs = _configs(args)
    first = next(iter(configs.values()))
    data = (
        Path(args.data).absolute() if args.data else cached_data(first, args.scale, args.seed, say)
    )
    data = Path(staged(data, first.workload, first.work_path, say))  # files grouped or ordered
    found = len(discover(data, None, None))
    if found != cfg.workload.batches:
        raise UsageError(f"{data}: {found} batches, the workload has {cfg.workload.batches}")
    say(f"workload {cfg.workload.name}: {len(steps)} steps x {len(configs)} strategies")
    out = Path(args.results) if args.results else local_file(first.work_path, cfg.workload.name)
    if out.is_dir():
        out = published_file(out, cfg.workload.name)
    say(f"phase records: {out}")
    records = run_workload(
        cfg.workload.name,
        configs,
        steps,
        data,
        args.scale,
        cores,
        say,
        sink=lambda recs: append(out, recs),
    )
    wrote = write_report(
        out,
        cfg.workload.name,
        [r for r in load(out) if r.run_id == records[0].run_id] if records else [],
    )
    ok = bool(records) and all(r.ok and r.correct is not False for r in records)
    result(
        {"records": str(out), "wrote": [str(w) for w in wrote], "phases": len(records), "ok": ok},
        f"{len(records)} phase records appended to {out}",
    )
    return EXIT_OK if ok else EXIT_FAILED


def cmd_publish(args: argparse.Namespace, cfg: Config) -> int:
    source = Path(args.source) if args.source else local_file(cfg.work_path, args.name)
    if not source.exists():
        raise UsageError(f"no local workload runs at {source}: run `contest workload run` first")
    local = load(source)
    ids = list(dict.fromkeys(r.run_id for r in local))
    want = ids[-1] if args.run == "last" and ids else args.run
    chosen = [r for r in local if r.run_id == want]
    if not chosen:
        raise UsageError(f"no run {args.run!r} in {source} (runs: {', '.join(ids) or 'none'})")
    target = Path(args.to) if args.to else published_file(cfg.results_path, args.name)
    if target.exists() and any(r.run_id == want for r in load(target)):
        raise UsageError(f"run {want} is already in {target}")
    append(target, chosen)
    wrote = write_report(target, args.name, load(target))
    result(
        {"to": str(target), "run": want, "wrote": [str(w) for w in wrote]},
        f"run {want} ({len(chosen)} phases) appended to {target}",
    )
    return EXIT_OK
