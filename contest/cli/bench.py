"""`contest bench <name>`: one command per registered benchmark, generated from
`contest.benchmarks.registry`; every one runs, records and prints the same way."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contest.benchmarks.registry import BENCHMARKS, benchmark
from contest.cli.common import ListAction, alias, command, config_source, group, result, say
from contest.config import Config
from contest.errors import EXIT_FAILED, EXIT_OK
from contest.results.runs import local_runs
from contest.sitting import Results, Sitting

if TYPE_CHECKING:
    from contest.sitting import Option


def register(sub: argparse._SubParsersAction) -> None:
    bench = group(
        sub,
        "bench",
        "benchmarks apart from the contest score",
        "Benchmarks that are not the contest's score: each appends its records to "
        "<results>/<name>.jsonl and renders <name>.md from them.",
        "bench_command",
    )
    for name in BENCHMARKS:
        add_benchmark(bench, name)


def add_benchmark(sub: argparse._SubParsersAction, name: str, alias: str | None = None) -> None:
    """The benchmark `name` as the command `alias` (default: its own name) of `sub`."""
    b = BENCHMARKS[name]
    p = command(sub, alias or name, b.summary, b.description, cmd_bench)
    for option in b.all_options():
        add_option(p, option)
    p.set_defaults(benchmark=name, needs_metadata=True)


def add_option(p: argparse.ArgumentParser, option: Option) -> None:
    """A benchmark's declared option on its command, by the command line's conventions:
    a list takes `a,b` and the flag repeated; an old spelling stays, hidden."""
    kw: dict[str, Any] = {"help": option.help, "default": option.default}
    if option.many:
        kw["action"] = ListAction
        if option.type is not None:
            kw["item"] = option.type
    else:
        if option.action:
            kw["action"] = option.action
        if option.type is not None:
            kw["type"] = option.type
    p.add_argument(option.flag, **kw)
    for flag in option.old:
        alias(p, flag, option.dest)


def cmd_bench(args: argparse.Namespace, cfg: Config) -> int:
    b = benchmark(args.benchmark)
    # This machine's own store by default (as `evaluate` records its runs): publishing
    # into the tracked results/ is on purpose, with --results.
    folder = Path(args.results) if args.results else local_runs(cfg.work_path).parent
    results = Results(folder, b.stem)
    sitting = Sitting(b, args, cfg, results, say, config_source(args).load)
    ok = b.execute(sitting)
    print(results.md.read_text())
    result({"benchmark": b.name, "ok": ok, "records": str(results.jsonl), "table": str(results.md)})
    return EXIT_OK if ok else EXIT_FAILED
