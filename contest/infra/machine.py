"""What decides whether a timed number can be trusted: which machine took it, how busy
it was around each timed job (load average, CPU steal), and which source ran (commit,
dirty tree). Read from /proc and git; every reader degrades to "unknown" (None or "")
rather than failing a run."""

from __future__ import annotations

import functools
import hashlib
import os
import platform
import re
import socket
import subprocess
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import psutil

from contest.errors import UsageError

STEAL_WINDOW_S = 0.5  # a short sample of CPU steal around a job, untimed


def check_local_cores(cores: int | None, master: str | None, machine: int | None) -> None:
    """Refuse local[N] with more cores than the machine has: the tasks would share the
    cores it has and the score (rows / (cores x seconds)) would divide by N, a figure
    as low as N/machine times too low (the contest's local[4] on a 2-core machine)."""
    if cores is None or master or not machine or cores <= machine:
        return
    raise UsageError(
        f"--cores {cores}: this machine has {machine} cores; local[{cores}] would run "
        f"{cores} tasks on {machine} cores and the score would divide by {cores} (a "
        f"{cores / machine:.1f}x too low rows/core/s): give --cores {machine} or fewer, or "
        f"--master for a cluster with {cores} cores"
    )


def machine_id(etc: Path = Path("/etc/machine-id")) -> str:
    """A stable, file-name-safe id of this machine: the host name and a short hash of
    /etc/machine-id (containers may share a host name, not a machine id)."""
    host = re.sub(r"[^A-Za-z0-9_.-]", "-", socket.gethostname()) or "host"
    try:
        raw = etc.read_text().strip()
    except OSError:
        raw = ""
    return f"{host}-{hashlib.sha256(raw.encode()).hexdigest()[:8]}" if raw else host


def load1() -> float | None:
    """The one-minute load average (runnable processes, ours included)."""
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


def cpu_ticks(stat: Path = Path("/proc/stat")) -> tuple[int, int] | None:
    """(steal, total) jiffies of all CPUs since boot, from the `cpu` line of /proc/stat."""
    ticks = _cpu_line(stat)
    if ticks is None:
        return None
    return (ticks[7] if len(ticks) > 7 else 0), sum(ticks)


def cpu_idle_ticks(stat: Path = Path("/proc/stat")) -> tuple[int, int] | None:
    """(idle + iowait, total) jiffies of all CPUs since boot."""
    ticks = _cpu_line(stat)
    if ticks is None or len(ticks) < 5:
        return None
    return ticks[3] + ticks[4], sum(ticks)


def _cpu_line(stat: Path) -> list[int] | None:
    try:
        with stat.open() as fh:
            fields = fh.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    return [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal


def steal_between(a: tuple[int, int] | None, b: tuple[int, int] | None) -> float | None:
    """The fraction of CPU time the hypervisor took between two samples."""
    if a is None or b is None or b[1] <= a[1]:
        return None
    return round((b[0] - a[0]) / (b[1] - a[1]), 4)


def busy_between(a: tuple[int, int] | None, b: tuple[int, int] | None) -> float | None:
    """The fraction of all CPUs' time spent not idle between two `cpu_idle_ticks`."""
    if a is None or b is None or b[1] <= a[1]:
        return None
    return round(1 - (b[0] - a[0]) / (b[1] - a[1]), 4)


def steal_now(window_s: float = STEAL_WINDOW_S) -> float | None:
    a = cpu_ticks()
    time.sleep(window_s)
    return steal_between(a, cpu_ticks())


@dataclass(frozen=True)
class Sample:
    """The machine at one moment: load average, and over a short window CPU steal and
    the share of all CPUs busy. The window is taken while the harness runs nothing (the
    previous job has exited, the next not started), so the busy share is other work's,
    where the one-minute load average still counts the harness's own last job."""

    load1: float | None
    steal: float | None
    cpu_busy: float | None = None

    @classmethod
    def take(cls, window_s: float = STEAL_WINDOW_S) -> Sample:
        a, ia = cpu_ticks(), cpu_idle_ticks()
        time.sleep(window_s)
        return cls(load1(), steal_between(a, cpu_ticks()), busy_between(ia, cpu_idle_ticks()))


def git_state(source: Path) -> tuple[str, bool | None]:
    """(short commit, whether the work tree has uncommitted changes) of the checkout
    that holds `source`; ("", None) outside a checkout. Changes under results/ do not
    count: the benchmarks append their own records there as they run."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(source), *args], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = (git("rev-parse", "--short", "HEAD") or "").strip()
    if not commit:
        return "", None
    status = git(
        "status", "--porcelain", "--untracked-files=no", "--", ":(top)", ":(top,exclude)results"
    )
    return commit, (None if status is None else bool(status.strip()))


def _field(path: Path, key: str, sep: str) -> str:
    """The value of the first `key<sep>value` line of a file ("" when absent)."""
    try:
        with path.open() as fh:
            for ln in fh:
                name, found, value = ln.partition(sep)
                if found and name.strip() == key:
                    return value.strip().strip('"')
    except OSError:
        pass
    return ""


@functools.cache
def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The CPU's model name: a VM may keep its id while its host changes."""
    return _field(cpuinfo, "model name", ":")


def java_version() -> str:
    """The first line `java -version` prints ("" without a java): the JVM every job runs."""
    try:
        done = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = (done.stderr or done.stdout).strip().splitlines()
    return lines[0].strip() if lines else ""


def disk_of(folder: Path) -> dict[str, object]:
    """The filesystem a folder is on: its device, type, size and free space."""
    try:
        target = folder.resolve()
        while not target.exists():
            target = target.parent
        best = max(
            (p for p in psutil.disk_partitions(all=True) if str(target).startswith(p.mountpoint)),
            key=lambda p: len(p.mountpoint),
            default=None,
        )
        usage = psutil.disk_usage(str(target))
    except (OSError, ImportError):
        return {}
    return {
        "device": best.device if best else "",
        "fstype": best.fstype if best else "",
        "total_bytes": usage.total,
        "free_bytes": usage.free,
    }


def machine_facts(work: Path) -> dict[str, object]:
    """What a full disclosure names of the machine (TPC's, ClickBench's): CPU model and
    cores, memory, the work folder's disk, the OS and kernel, the JVM."""
    try:
        with open("/proc/meminfo") as fh:
            memory = int(fh.readline().split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        memory = 0
    return {
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": memory,
        "disk": disk_of(work),
        "os": _field(Path("/etc/os-release"), "PRETTY_NAME", "=") or platform.platform(),
        "kernel": platform.release(),
        "java": java_version(),
    }


# The distribution whose requirements name every library a figure depends on.
DISTRIBUTION = "lakesoul-contest"


def library_versions(dist: str = DISTRIBUTION) -> dict[str, str]:
    """Python's version and every library the installed package requires (its extras
    left out), at the version installed: what ran a figure, beside the pins that ask
    for it ("not installed" and "" degrade as every reader here does)."""
    out = {"python": platform.python_version()}
    try:
        requires = metadata.requires(dist) or []
    except metadata.PackageNotFoundError:
        return out
    for req in requires:
        name = re.match(r"[A-Za-z0-9_.-]+", req)
        if name is None or "extra ==" in req:
            continue
        try:
            out[name.group(0)] = metadata.version(name.group(0))
        except metadata.PackageNotFoundError:
            out[name.group(0)] = "not installed"
    return out
