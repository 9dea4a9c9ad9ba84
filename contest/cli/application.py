"""A workload lane's long-lived application (`spark-submit .../contest/workload/__main__.py
--connect HOST:PORT`): one process, one Spark session (or none, for a native library),
that runs the lane's commands one after another as a pipeline keeps its session
between commits, instead of a spark-submit per phase.

It connects back to the workload runner (contest/workload/application.py) and answers
one JSON line per request: `{"argv": [...], "log": PATH}` runs `contest ARGV` through
the CLI's one error boundary (contest/cli/dispatch.py), its stdout and stderr into
PATH (so its report and its one-line error are read as a job's are), and replies
`{"exit": CODE, "seconds": S}`; `{"stop": true}` (or the runner gone) ends it, and the
session kept for the commands (contest/infra/spark.py, `kept_session`) is stopped.
Its own arguments before `--connect` (the config file, `--set`s) go before every
command's.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
import time
import traceback
from collections.abc import Sequence
from contextlib import redirect_stderr, redirect_stdout
from io import BufferedRWPair
from pathlib import Path

from contest.cli import dispatch, metadata, pipeline
from contest.errors import EXIT_FAILED, EXIT_USAGE
from contest.infra.spark import kept_session

# The commands it can be asked: the Write and Read jobs, and the maintenance commands
# (compact, vacuum) a lane runs between them.
GROUPS = (pipeline, metadata)


class CurrentStderr:
    """A stream that writes to whatever sys.stderr is now: the log handler made once
    writes into each command's own log (a handler keeps the stream it was given)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def address_of(text: str) -> tuple[str, int]:
    """`HOST:PORT` as a socket address."""
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--connect: HOST:PORT, not {text!r}")
    return host, int(port)


def split_argv(argv: Sequence[str]) -> tuple[list[str], tuple[str, int]]:
    """This process's arguments as (what goes before every command, the runner's address)."""
    args = list(argv)
    if "--connect" not in args or args.index("--connect") + 1 >= len(args):
        raise ValueError("--connect HOST:PORT is required")
    at = args.index("--connect")
    return args[:at] + args[at + 2 :], address_of(args[at + 1])


def run_command(parser, argv: list[str], log: Path) -> tuple[int, float]:
    """`contest ARGV` with its output into `log`: its exit code and seconds. A bug's
    traceback goes into its log too, and the application goes on to the next."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w") as out, redirect_stdout(out), redirect_stderr(out):
        started = time.perf_counter()
        try:
            code = dispatch.run(parser, argv)
        except SystemExit as exc:  # argparse: a bad argument, or --help
            code = exc.code if isinstance(exc.code, int) else EXIT_USAGE
        except Exception:
            traceback.print_exc()
            code = EXIT_FAILED
        return code, time.perf_counter() - started


def answer(stream: BufferedRWPair, reply: dict) -> None:
    stream.write(json.dumps(reply).encode() + b"\n")
    stream.flush()


def serve(prefix: list[str], address: tuple[str, int]) -> int:
    """Connect to the runner and run its requests until it says stop or goes away."""
    parser = dispatch.build_parser(GROUPS)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=CurrentStderr()
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)
    with socket.create_connection(address) as conn, conn.makefile("rwb") as stream:
        answer(stream, {"pid": os.getpid()})
        with kept_session():
            for line in stream:
                request = json.loads(line)
                if request.get("stop"):
                    break
                code, seconds = run_command(
                    parser, prefix + list(request["argv"]), Path(request["log"])
                )
                answer(stream, {"exit": code, "seconds": round(seconds, 4)})
    return 0


def serve_main(argv: Sequence[str]) -> int:
    try:
        prefix, address = split_argv(argv)
    except ValueError as exc:
        print(f"contest: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return serve(prefix, address)
