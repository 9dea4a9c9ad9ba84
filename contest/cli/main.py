"""`contest` entry point: every command group's commands, run through the one error
boundary (contest/cli/dispatch.py)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from contest.cli import (
    bench,
    cluster,
    dashboard,
    data,
    dataset,
    dispatch,
    evaluation,
    infra,
    metadata,
    pipeline,
    stream,
    workload,
)
from contest.errors import EXIT_USAGE

GROUPS = (
    infra,
    cluster,
    data,
    dataset,
    pipeline,
    stream,
    metadata,
    evaluation,
    workload,
    bench,
    dashboard,
)


def build_parser() -> argparse.ArgumentParser:
    return dispatch.build_parser(GROUPS)


def main(argv: Sequence[str] | None = None) -> int:
    return dispatch.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())

__all__ = ["EXIT_USAGE", "build_parser", "main"]
