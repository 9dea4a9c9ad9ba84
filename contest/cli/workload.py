"""`contest workload run|publish`: a workload's phases (LST-Bench style) for several
strategies, and publishing their records (contest/workload)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from contest.cli.common import ListAction, command, group, named_workloads, result, say
from contest.cli.evaluation import known_strategies, strategy_config
from contest.config import Config, absolute_paths, override
from contest.data.batches import discover
from contest.data.staging import staged
from contest.data.workload import workload_settings
from contest.errors import EXIT_FAILED, EXIT_OK, UsageError
from contest.infra.machine import check_local_cores
from contest.results.workloads import append, load, local_file, published_file
from contest.workload.outputs import keep_outputs, out_folder, refuse_taken
from contest.workload.plan import Plan, load_plans
from contest.workload.report import write_report

if TYPE_CHECKING:  # the lanes pull in the evaluation (pandas): `contest --help` starts without
    from contest.workload.lanes import Lane


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
    run.add_argument(
        "--data",
        help="use this data folder instead of generating one (read as `contest evaluate "
        "--data` reads it: base-N in N order, the op column, partial columns); its batch "
        "count is the files' unless the workload file sets workload.batches",
    )
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
    run.add_argument(
        "--out",
        metavar="DIR",
        help="keep each strategy's and policy's last checked read here, the contract's "
        "columns only, as parquet in DIR/<strategy>/<policy>/ (none, every-N, auto); a "
        "folder there that is not empty is refused",
    )
    run.add_argument(
        "--keep-tables",
        action="store_true",
        help="keep each strategy's and policy's table (and its reads' folder) after the "
        "run; by default they are removed once its records and --out are written",
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
    from contest.workload.lanes import drop_tables
    from contest.workload.runner import run_workload

    cores = min(2, os.cpu_count() or 1) if args.cores is None else args.cores
    if args.scale <= 0 or cores < 1:
        raise UsageError("--scale must be positive and --cores at least 1")
    check_local_cores(cores, None, os.cpu_count())  # each job is local[cores]
    configs = _configs(args)
    first = next(iter(configs.values()))
    batches = cfg.workload.batches
    if args.data:  # the data's shape from its files: checked before any work
        data = _staged(Path(args.data).absolute(), first)
        batches = _data_batches(args.workload, data, batches)
    plan = load_plans(args.workload, batches)  # bad phases: exit 2 now
    keep = Path(args.out).absolute() if args.out else None
    if keep is not None:
        refuse_taken(_out_folders(keep, list(configs), plan))
    configs = {s: _with_batches(c, batches) for s, c in configs.items()}
    first = next(iter(configs.values()))
    if not args.data:
        data = _staged(cached_data(first, args.scale, args.seed, say), first)
        found = len(discover(data, None, None))
        if found != batches:
            raise UsageError(f"{data}: {found} batches, the workload has {batches}")
    steps = sum(len(s) for s in plan.steps.values())
    say(
        f"workload {cfg.workload.name}: {steps} steps over {len(plan.steps)} "
        f"polic{'y' if len(plan.steps) == 1 else 'ies'} x {len(configs)} strategies"
    )
    out = Path(args.results) if args.results else local_file(first.work_path, cfg.workload.name)
    if out.is_dir():
        out = published_file(out, cfg.workload.name)
    say(f"phase records: {out}")
    lanes: list[Lane] = []
    records = run_workload(
        cfg.workload.name,
        configs,
        plan,
        data,
        args.scale,
        cores,
        say,
        sink=lambda recs: append(out, recs),
        lanes=lanes,
    )
    kept = keep_outputs(lanes, keep, say) if keep is not None else {}
    if not args.keep_tables:
        drop_tables(lanes, say)
    wrote = write_report(
        out,
        cfg.workload.name,
        [r for r in load(out) if r.run_id == records[0].run_id] if records else [],
    )
    ok = bool(records) and all(r.ok and r.correct is not False for r in records)
    result(
        {
            "records": str(out),
            "wrote": [str(w) for w in wrote],
            "phases": len(records),
            "ok": ok,
            "kept": kept,
        },
        f"{len(records)} phase records appended to {out}",
    )
    return EXIT_OK if ok else EXIT_FAILED


def _staged(data: Path, cfg: Config) -> Path:
    """The data folder as its batches are read (files grouped or ordered, untimed)."""
    return Path(staged(data, cfg.workload, cfg.work_path, say))


def _data_batches(spec: str, data: Path, batches: int) -> int:
    """`--data`'s batch count: its files', which a workload file that sets
    workload.batches must match."""
    found = len(discover(data, None, None))
    if "workload.batches" in workload_settings(spec) and found != batches:
        raise UsageError(f"{data}: {found} batches, the workload has {batches}")
    return found


def _with_batches(cfg: Config, batches: int) -> Config:
    """The configuration with the batch count the run has (its data's, with --data)."""
    if cfg.workload.batches == batches:
        return cfg
    return override(cfg, {"workload.batches": batches})  # validated: added columns in range


def _out_folders(root: Path, strategies: list[str], plan: Plan) -> list[Path]:
    """Every folder --out would write: one per strategy and policy."""
    return [out_folder(root, s, p.folder) for s in strategies for p in plan.policies]


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
