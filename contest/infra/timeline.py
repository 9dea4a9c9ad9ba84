"""A timed job's timeline: the moments its own process marks (Python started, the JVM
started, the session asked for and ready, Spark's first task launched and last task
done, the stop begun and ended), printed as one line of its log, and the phases
between them that the parent makes with its own launch and exit moments.

Each phase is measured from its own marks, not inferred as a remainder, so what a job
pays before its first row (the launcher, the JVM, the imports, the context) is read off
its log; and the phases are consecutive, so they sum to the job's wall time. The job
prints its marks as wall-clock times (`time.time()`) because the moments come from
three clocks' owners (the parent, the Python driver, the JVM) that share no other.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import psutil

# The log line a job prints its marks on.
LINE_PREFIX = "contest-timeline "

# The marks, in the order they happen. `launched` and `exited` are the parent's.
LAUNCHED = "launched"
JVM = "jvm"
PYTHON = "python"
SESSION = "session"
CONTEXT = "context"
FIRST_TASK = "first_task"
LAST_TASK = "last_task"
STOP = "stop"
STOPPED = "stopped"
EXITED = "exited"
MARKS = (LAUNCHED, JVM, PYTHON, SESSION, CONTEXT, FIRST_TASK, LAST_TASK, STOP, STOPPED, EXITED)

# Each phase is named after what happens between its mark and the next one present.
PHASE_OF = {
    LAUNCHED: "launch",  # spark-submit's script and its launcher JVM, up to the job's JVM
    JVM: "jvm",  # the driver JVM's start, up to the Python driver's process
    PYTHON: "imports",  # the driver's imports and arguments, up to asking for a session
    SESSION: "context",  # the Spark context and session
    CONTEXT: "plan",  # the driver's own work before the first task (metadata, listing)
    FIRST_TASK: "tasks",  # Spark's first task launched to its last task done
    LAST_TASK: "finish",  # after the last task: commit, publish, the driver's own work
    STOP: "stop",  # the session's stop
    STOPPED: "exit",  # the Python driver's and the JVM's exit, as the parent sees it
}

_marks: dict[str, float] = {}
# Whether this process is a timed job that prints its marks (`start`): only then are the
# marks that cost a call into the JVM (Spark's task times) taken.
_recording = False


def mark(name: str, at: float | None = None) -> None:
    """Note that `name` happened now (or `at`, a wall-clock time); the first note wins,
    so a job's second session (a fallback, a retry) keeps its first moments."""
    _marks.setdefault(name, time.time() if at is None else at)


def marks() -> dict[str, float]:
    return dict(_marks)


def process_start(stat: str, since_boot: float, now: float, ticks: int) -> float:
    """A process's start on the wall clock from its `/proc/<pid>/stat` line: its start in
    clock ticks since boot (field 22) against the seconds since boot now (CLOCK_BOOTTIME,
    the same clock), so to a tick. psutil's `create_time` adds the start to the boot time
    the kernel gives in whole seconds (`btime`): up to a second early (0.97 s on one
    host), which moved that much of a job's `jvm` phase into its `imports`."""
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command's name, which may hold spaces
    started_since_boot = int(fields[19]) / ticks  # field 22 of the line, 20 after the name
    return now - (since_boot - started_since_boot)


def mark_python_start() -> None:
    """The Python driver's process start, from the operating system (before any import)."""
    try:
        with open(f"/proc/{os.getpid()}/stat") as fh:
            stat = fh.read()
        since_boot, now = time.clock_gettime(time.CLOCK_BOOTTIME), time.time()
        at = process_start(stat, since_boot, now, os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, AttributeError, IndexError):  # no /proc: not Linux
        at = psutil.Process().create_time()
    mark(PYTHON, at)


def start() -> None:
    """This process is a timed job: its marks are taken and printed (`print_marks`)."""
    global _recording
    _recording = True
    mark_python_start()


def recording() -> bool:
    return _recording


def line(noted: Mapping[str, float]) -> str:
    """The log line of a job's marks."""
    return LINE_PREFIX + json.dumps({k: round(v, 3) for k, v in noted.items()})


def print_marks() -> None:
    """The job's marks, on its log (stdout: a timed job's log takes both streams)."""
    print(line(_marks), flush=True)


def read_marks(log: Path) -> dict[str, float]:
    """The marks a job printed in its log (the last such line), or none."""
    if not log.is_file():
        return {}
    found: dict[str, float] = {}
    for text in log.read_text(errors="replace").splitlines():
        if text.startswith(LINE_PREFIX):
            try:
                found = {k: float(v) for k, v in json.loads(text[len(LINE_PREFIX) :]).items()}
            except (ValueError, AttributeError):
                continue
    return found


def ordered(noted: Mapping[str, float]) -> Iterator[tuple[str, float]]:
    """The known marks present, in MARKS order, each no earlier than the one before
    (a clock read a few milliseconds apart by two processes is clamped, not reordered)."""
    last = None
    for name in MARKS:
        if name in noted:
            at = noted[name] if last is None else max(noted[name], last)
            last = at
            yield name, at


def phases(noted: Mapping[str, float]) -> dict[str, float]:
    """The seconds between each present mark and the next, named after the first
    (PHASE_OF); consecutive, so they sum to the span from the first mark to the last."""
    present = list(ordered(noted))
    return {
        PHASE_OF[a]: round(t_b - t_a, 3)
        for (a, t_a), (_, t_b) in zip(present, present[1:], strict=False)
    }


def job_phases(log: Path, launched: float, exited: float) -> dict[str, float]:
    """A finished job's phases: its log's marks between the parent's launch and exit;
    empty when the job printed none (it failed before, or it is not the harness's)."""
    noted = read_marks(log)
    if not noted:
        return {}
    return phases({**noted, LAUNCHED: launched, EXITED: exited})
