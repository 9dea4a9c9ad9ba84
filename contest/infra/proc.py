"""Run a whole process as the contest timed it: wall time, exit code, and the peak
memory of its process tree (JVM and Python workers together)."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil


@dataclass
class ProcResult:
    returncode: int
    seconds: float
    peak_rss_bytes: int
    peak_process_rss_bytes: int  # the biggest single process (the 16 GB rule)
    log: Path
    last_line: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def tree_rss(root: int) -> tuple[int, int]:
    """(sum, max) of resident memory over `root` and its descendants (psutil: one
    well-kept walk of the process table instead of parsing /proc by hand)."""
    try:
        top = psutil.Process(root)
        procs = [top, *top.children(recursive=True)]
    except psutil.Error:
        return 0, 0
    sizes = []
    for proc in procs:
        try:
            sizes.append(proc.memory_info().rss)
        except psutil.Error:  # exited meanwhile
            continue
    return sum(sizes), max(sizes, default=0)


def own_peak_rss() -> int:
    """This process's peak resident memory since it started or since
    `reset_own_peak_rss` (Linux VmHWM; unlike ru_maxrss it is neither carried over from
    the parent across exec nor a lifetime maximum)."""
    with open("/proc/self/status") as fh:
        return next((int(ln.split()[1]) * 1024 for ln in fh if ln.startswith("VmHWM:")), 0)


def reset_own_peak_rss() -> None:
    """Start this process's peak over from its current resident memory."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def run_timed(
    cmd: Sequence[str],
    log: Path,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    poll_s: float = 0.25,
) -> ProcResult:
    """Run `cmd` with output to `log`; time it and sample its tree's memory."""
    log.parent.mkdir(parents=True, exist_ok=True)
    peak = [0, 0]
    with log.open("wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
        done = threading.Event()

        def sample() -> None:
            while not done.wait(poll_s):
                total, single = tree_rss(proc.pid)
                peak[0], peak[1] = max(peak[0], total), max(peak[1], single)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        code = proc.wait()
        seconds = time.perf_counter() - started
        done.set()
        sampler.join()
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    return ProcResult(code, seconds, peak[0], peak[1], log, lines[-1] if lines else "")
