"""`contest bench <name>`: one command per registered benchmark, generated from
`contest.evaluation.bench.registry`; every one runs, records and prints the same way."""

from __future__ import annotations

import argparse
from pathlib import Path

from contest.cli.common import command, config_source, group, say
from contest.config import Config
from contest.errors import EXIT_FAILED, EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:
    from contest.evaluation.bench.registry import BENCHMARKS

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
    from contest.evaluation.bench.registry import BENCHMARKS

    b = BENCHMARKS[name]
    p = command(sub, alias or name, b.summary, b.description, cmd_bench)
    for option in b.all_options():
        option.add_to(p)
    p.set_defaults(benchmark=name)


def cmd_bench(args: argparse.Namespace, cfg: Config) -> int:
    from contest.evaluation.bench.base import Results, Sitting
    from contest.evaluation.bench.registry import benchmark

    b = benchmark(args.benchmark)
    results = Results(Path(args.out) if args.out else cfg.results_path, b.stem)
    sitting = Sitting(b, args, cfg, results, say, config_source(args).load)
    ok = b.execute(sitting)
    print(results.md.read_text())
    return EXIT_OK if ok else EXIT_FAILED
