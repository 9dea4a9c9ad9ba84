"""Breaking a run on purpose, the one way every trial does it: a command started as its
own process group, a moment waited for (a log line, a commit record, a deadline), the
whole group killed with -9 (`broken`); the caller then restarts the run and checks
what it left against the oracle.

The fault experiments (contest/trials/faults) and the stream kill trials
(contest/trials/stream, and the stream bench's random kills) all go through `broken`,
so a kill means the same thing (and is timed the same way) in each; those that kill
after the child logged its k-th commit or micro-batch go through `broken_when_logged`,
so the moment is read from the child's log the same way too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from contest.infra.proc import kill_group, spawn


@dataclass(frozen=True)
class Broken:
    """What the kill met: the child's exit status if it had ended before the kill
    (None: it was running), and the seconds from its start to the kill."""

    exited: int | None
    at_s: float

    @property
    def finished(self) -> bool:
        """The child had ended before the kill: nothing was broken."""
        return self.exited is not None


def broken(
    cmd: Sequence[str],
    log: Path,
    env: Mapping[str, str],
    cwd: Path,
    *,
    until: Callable[[], bool] | None = None,
    within_s: float,
    poll_s: float = 0.02,
    then_s: float = 0.0,
) -> Broken:
    """Run `cmd` (stdout to `log`, stderr to `log`.err) until `until()` holds (None: no
    moment but the deadline), it ends, or `within_s` seconds pass; wait `then_s` more;
    kill -9 its process group."""
    proc = spawn(cmd, log, env, cwd)
    start = time.monotonic()
    try:
        while (
            proc.poll() is None
            and (until is None or not until())
            and time.monotonic() - start < within_s
        ):
            time.sleep(poll_s)
        time.sleep(then_s)
        exited = proc.poll()
    finally:
        kill_group(proc)
    return Broken(exited, time.monotonic() - start)


def read_text(path: Path) -> str:
    """A child's log as it stands: "" before it is written (or when it cannot be read)."""
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def broken_when_logged(
    cmd: Sequence[str],
    log: Path,
    env: Mapping[str, str],
    cwd: Path,
    logged: Callable[[str], bool],
    *,
    within_s: float,
    poll_s: float = 0.02,
    then_s: float = 0.0,
) -> tuple[Broken, str]:
    """`broken` at a moment the child's own stderr (`log`.err) tells: once `logged(text)`
    holds for what it has written so far (its k-th commit or micro-batch line); with
    the stderr it left, which the trial counts (what was acknowledged before the kill)."""
    err = log.with_suffix(".err")

    def moment() -> bool:
        return logged(read_text(err))

    kill = broken(cmd, log, env, cwd, until=moment, within_s=within_s, poll_s=poll_s, then_s=then_s)
    return kill, read_text(err)
