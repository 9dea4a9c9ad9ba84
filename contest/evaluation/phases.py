"""The one runner of a run's phases: each step becomes a `Phase` of the run's record
(start, end, status), the first failure ends the run and is kept in the record
instead of raised, so that a failed run still yields its record."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from contest.errors import PhaseError
from contest.evaluation.progress import heartbeat
from contest.results.runs import RunRecord

C = TypeVar("C")


@dataclass(frozen=True)
class Step(Generic[C]):
    """One phase: its name (which may show what the context knows by then, e.g. the
    rows of the write), what it does, and whether it applies to this run."""

    label: Callable[[C], str]
    run: Callable[[C], None]
    applies: Callable[[C], bool] = lambda _: True


def run_phases(
    ctx: C,
    steps: Sequence[Step[C]],
    record: RunRecord,
    say: Callable[[str], None],
    prefix: str,
) -> bool:
    """Run the steps that apply, in order; True when all succeeded. A `PhaseError`'s
    message is the phase's error as is; any other error is prefixed with its class.
    A long phase says it is still running (`progress.heartbeat`), also into a log."""
    started = time.perf_counter()
    for step in steps:
        if not step.applies(ctx):
            continue
        phase = record.begin(step.label(ctx))
        say(f"[{time.perf_counter() - started:7.1f}s] {prefix}: {phase.name}")
        try:
            with heartbeat(f"{prefix}: {phase.name}", say):
                step.run(ctx)
        except PhaseError as exc:
            record.fail(phase, str(exc))
            return False
        except Exception as exc:  # any failure still yields the record, naming the phase
            record.fail(phase, f"{exc.__class__.__name__}: {exc}")
            return False
        phase.finish()
    return True
