"""The CLI's one error boundary: parse, build the one Config, dispatch, and the one place
where errors become exit codes. `contest` (contest/cli/main.py, every command) and a
timed job's entry (contest/cli/job.py, its own command only, so a job imports no other
command's modules before its first row) both run through `run`.

Expected failures are `HarnessError`s (raised anywhere, or unwrapped from a Spark
task by `contest.errors.unwrap_spark_error`): they end in one line on stderr and the
error's exit code (2 bad input, 1 failed run). Anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from types import ModuleType

from contest import __version__
from contest.cli.common import ConfigSource, HelpFormatter, pairs, shared_options
from contest.config import Config
from contest.data.workload import workload_settings
from contest.errors import HarnessError, unwrap_spark_error
from contest.infra.postgres import database_for
from contest.infra.proc import sigterm_as_interrupt, stop_spawned
from contest.infra.spark import log_note
from contest.infra.storage import configure

EXIT_PIPE = 141  # a closed stdout: the shell's code for a program ended by SIGPIPE


def build_parser(groups: Sequence[ModuleType]) -> argparse.ArgumentParser:
    """The parser of the commands the `groups` (contest/cli/<group>.py) register."""
    parser = argparse.ArgumentParser(
        prog="contest",
        description="LakeSoul upsert / merge-on-read benchmark harness (CCF BDCI 2022 "
        "data-lake contest): generate data, write and read LakeSoul tables, merge their "
        "metadata, evaluate, compare and sweep.",
        formatter_class=HelpFormatter,
        parents=[shared_options(top=True)],
    )
    parser.add_argument("--version", action="version", version=f"contest {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in groups:
        module.register(sub)
    return parser


def config_from(args: argparse.Namespace) -> Config:
    """The Config a command runs with: defaults, file, environment, then every --set
    (given before or after the command). Its source stays on `args` for variants."""
    config_file = getattr(args, "config_sub", None) or args.config
    overrides = pairs([*args.overrides, *getattr(args, "overrides_sub", [])], "--set")
    workload = None
    if getattr(args, "workload", None):
        workload = workload_settings(args.workload)
    args.config_source = ConfigSource(config_file, dict(os.environ), overrides, workload)
    cfg = args.config_source.load()
    # s3:// data, tables and results (opened before any Spark session) use its store.
    configure(cfg.s3)
    return cfg


def metadata_server(args: argparse.Namespace, cfg: Config) -> AbstractContextManager[None]:
    """For a command that runs jobs on LakeSoul tables (`needs_metadata`), the metadata
    server, started for the run when the embedded one is down; else nothing."""
    if not getattr(args, "needs_metadata", False):
        return nullcontext()

    return database_for(cfg, lambda line: print(f"contest: {line}", file=sys.stderr))


def run(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse `argv` with `parser`, run its command, and turn its outcome into an exit code."""
    try:
        try:
            with sigterm_as_interrupt():
                args = parser.parse_args(argv)  # a list option's bad item: a UsageError
                cfg = config_from(args)
                with metadata_server(args, cfg):
                    return int(args.handler(args, cfg))
        finally:
            if sys.stdout is not None:  # None when started with stdout closed
                sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
    except BrokenPipeError:
        return _pipe_closed()
    except KeyboardInterrupt:
        stop_spawned()  # children in their own process group are not signalled with us
        print("contest: interrupted", file=sys.stderr)
        return 130
    except HarnessError as exc:
        return _fail(exc)
    except Exception as exc:
        unwrapped = unwrap_spark_error(exc)
        if unwrapped is None:
            raise
        return _fail(unwrapped, log_note())  # Spark's stack traces are in its log file


def _pipe_closed() -> int:
    """The reader of stdout went away (`contest packages list | grep -q`, `| head`):
    stop quietly, as a program killed by SIGPIPE would, with its exit code (128 + 13).
    stdout is pointed at /dev/null so the interpreter's last flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_PIPE


def _fail(exc: HarnessError, note: str = "") -> int:
    text = " ".join(str(exc).split("\n", 1)[0].split()) or type(exc).__name__
    print(f"contest: {text}{note}", file=sys.stderr)
    return exc.exit_code
