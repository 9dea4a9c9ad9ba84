"""`contest dashboard`: the results folder as one page with filters, served or written."""

from __future__ import annotations

import argparse
from pathlib import Path

from contest.cli.common import command, result, say
from contest.config import Config
from contest.errors import EXIT_OK
from contest.results.runs import local_runs


def register(sub: argparse._SubParsersAction) -> None:
    d = command(
        sub,
        "dashboard",
        "browse every result (runs, peers, scale, sweeps, faults, workloads, streaming, "
        "benchmarks) in a browser",
        "Merge every results file of a results folder (each read through its typed record: "
        "runs, clusters, sweeps, workloads, streaming, each benchmark's), and this "
        "machine's own runs beside them, into one DuckDB database and show them as one "
        "page of charts and tables, with filters by origin (published, local), strategy, "
        "scale, machine and commit. Serves it on HOST:PORT until Ctrl-C (each "
        "reload reads the files again), or with --out writes it to a file that needs "
        'nothing else. README, "Dashboard".',
        cmd_dashboard,
    )
    d.add_argument(
        "--results",
        metavar="DIR",
        default=None,
        help="results folder to show (default: results_dir, i.e. results/)",
    )
    d.add_argument(
        "--local",
        metavar="DIR",
        default=None,
        help="this machine's own runs, shown beside the published ones (default: the "
        "store under work_dir, .work/results/<machine>)",
    )
    d.add_argument("--host", default="127.0.0.1", help="address to listen on")
    d.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free one)")
    d.add_argument(
        "--out",
        metavar="FILE",
        default=None,
        help="write the page to FILE (self-contained HTML) instead of serving it",
    )


def cmd_dashboard(args: argparse.Namespace, cfg: Config) -> int:
    # deferred: pulls in duckdb and plotly; `contest --help` starts without them
    from contest.dashboard import serve, write_page

    results = Path(args.results) if args.results else cfg.results_path
    local = Path(args.local) if args.local else local_runs(cfg.work_path).parent
    if args.out:
        out = write_page(results, Path(args.out), local)
        result({"out": str(out)}, f"contest: wrote the dashboard of {results} to {out}")
        return EXIT_OK

    def ready(url: str) -> None:
        say(f"contest: dashboard of {results} at {url} (Ctrl-C stops)")
        print(url, flush=True)

    try:
        serve(results, args.host, args.port, ready, local)
    except KeyboardInterrupt:
        say("contest: dashboard stopped")
    return EXIT_OK
