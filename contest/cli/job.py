"""A timed job's entry (`spark-submit .../contest/write/__main__.py`, `python -m
contest.read`): its own command group only, so the job imports what its command needs
and no other command's modules (every command's imports cost ~0.5 s of a job's start:
results/costs.md), run through the CLI's one error boundary. Its timeline's marks are
its log's last line (contest/infra/timeline.py), whatever the job's outcome."""

from __future__ import annotations

from collections.abc import Sequence

from contest.cli import dispatch, pipeline
from contest.infra import timeline


def job_main(command: str, argv: Sequence[str]) -> int:
    """A Write or Read job: the command's arguments, with the shared options anywhere."""
    timeline.start()
    try:
        return dispatch.run(dispatch.build_parser((pipeline,)), [command, *argv])
    finally:
        timeline.print_marks()
