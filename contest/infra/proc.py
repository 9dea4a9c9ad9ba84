"""Child processes, in one place: a whole process run as the contest timed it (wall
time, exit code, the peak memory of its process tree: JVM and Python workers
together), this process's own peak, and children in their own process group that the
fault experiments kill on purpose.

Every child dies with the process that started it, however that one ends: an
exception or Ctrl-C kills the child's whole group on the way out, a normal exit kills
what is left (atexit), and a parent killed outright (SIGKILL, `os._exit`, as
pytest-timeout's thread method ends a run) takes the child with it through Linux's
parent-death signal; the child's JVM, started by pyspark on a pipe, exits when the
child does."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from contest.errors import RunError
from contest.infra import timeline
from contest.infra.noise import JobNoise, NoiseMeter

PR_SET_PDEATHSIG = 1
_PRCTL: Any = None
try:  # resolved here, not in the forked child (no lookups between fork and exec)
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # not Linux: the finalizers still hold
    pass


def _die_with_parent() -> None:
    """In the child, before exec: SIGKILL when the thread that started it dies."""
    if _PRCTL is not None:
        _PRCTL(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _child_options() -> dict:
    """Popen options every child gets: its own process group (killed whole), and the
    parent-death signal when started from the main thread (the signal follows the
    starting thread, so a worker thread's child would die with the thread)."""
    opts: dict = {"start_new_session": True}
    if threading.current_thread() is threading.main_thread() and _PRCTL is not None:
        opts["preexec_fn"] = _die_with_parent
    return opts


@dataclass
class ProcResult:
    returncode: int
    seconds: float
    peak_rss_bytes: int
    peak_process_rss_bytes: int  # the biggest single process (the 16 GB rule)
    log: Path
    last_line: str
    # What else the machine did while the job ran (None: the job ended before a sample).
    noise: JobNoise | None = None
    # Seconds spent making the command before the process started (resolving its JVM
    # libraries), not timed: reported apart.
    prepare_s: float = 0.0
    # Stopped at its time cap (run_cap_s): its tree killed, its returncode the kill's.
    timed_out: bool = False
    # Wall-clock moments (time.time()) the process was started and seen to exit.
    launched_at: float = 0.0
    exited_at: float = 0.0

    @property
    def timeline(self) -> dict[str, float]:
        """Its phases from its log's marks (contest/infra/timeline.py), or none."""
        return timeline.job_phases(self.log, self.launched_at, self.exited_at)

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


@dataclass
class Watch:
    """What `watched` saw of a process tree while a block ran: its peak memory (the
    tree's sum, its biggest process) and the machine's noise beside it."""

    meter: NoiseMeter
    peak_rss_bytes: int = 0
    peak_process_rss_bytes: int = 0


@contextlib.contextmanager
def watched(root: int, servers: Sequence[int] = (), poll_s: float = 0.25) -> Iterator[Watch]:
    """Samples `root`'s tree's memory and the machine's noise (`servers`' trees count as
    the tree's) every `poll_s` while the block runs: a timed process's whole life
    (run_timed), or one command of a long-lived application (contest/workload/
    application.py)."""
    watch = Watch(NoiseMeter(root, tuple(servers)))
    watch.meter.start(time.perf_counter())
    done = threading.Event()

    def memory() -> None:
        total, single = tree_rss(root)
        watch.peak_rss_bytes = max(watch.peak_rss_bytes, total)
        watch.peak_process_rss_bytes = max(watch.peak_process_rss_bytes, single)

    def sample() -> None:
        memory()  # a block shorter than one poll still has a reading
        while not done.wait(poll_s):
            memory()
            watch.meter.sample(time.perf_counter())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield watch
    finally:
        done.set()
        sampler.join()
        # The end's reading: a block shorter than a poll (a warm command of a lane's
        # application) has its noise measured too, over its whole span.
        watch.meter.sample(time.perf_counter())


def last_line(log: Path) -> str:
    """A log's last line that is not blank and not a timeline mark."""
    lines = [
        ln
        for ln in log.read_text(errors="replace").splitlines()
        if ln.strip() and not ln.startswith(timeline.LINE_PREFIX)
    ]
    return lines[-1] if lines else ""


def run_timed(
    cmd: Sequence[str],
    log: Path,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    poll_s: float = 0.25,
    servers: Sequence[int] = (),
    cap_s: float | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ProcResult:
    """Run `cmd` with output to `log`; time it, sample its tree's memory and the
    machine's noise (contest/infra/noise.py; `servers`' trees count as the job's). Past
    `cap_s` seconds its whole tree is killed and the result says `timed_out`. `on_start`
    is given its process id (its group's too) once it has started."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        started, launched_at = time.perf_counter(), time.time()
        # Its own process group: an interrupted run kills the job's whole tree (the
        # spark-submit JVM and its Python workers), not only the process it started.
        proc = subprocess.Popen(
            list(cmd),
            stdout=out,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            **_child_options(),
        )
        if on_start is not None:
            on_start(proc.pid)
        timed_out = False
        with watched(proc.pid, servers, poll_s) as watch:
            try:
                code = proc.wait(timeout=cap_s or None)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(proc)  # waits for it: its returncode is the kill's
                code = proc.returncode
            except BaseException:  # interrupted (Ctrl-C, SIGTERM): no job left running
                kill_group(proc)
                raise
            seconds, exited_at = time.perf_counter() - started, time.time()
    return ProcResult(
        code,
        seconds,
        watch.peak_rss_bytes,
        watch.peak_process_rss_bytes,
        log,
        last_line(log),
        watch.meter.result(),
        timed_out=timed_out,
        launched_at=launched_at,
        exited_at=exited_at,
    )


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt while the block runs (in the main thread), so a
    terminated run unwinds like a Ctrl-C one and stops its children on the way out."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


# -- children in their own process group (killed on purpose by the fault experiments) --

_SPAWNED: list[subprocess.Popen] = []  # every child, so an interrupted run stops them


def spawn(cmd: Sequence[str], log: Path, env: Mapping[str, str], cwd: Path) -> subprocess.Popen:
    """A command in its own process group (its JVM and Python workers with it), stdout
    and stderr to `log` and `log`.err."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out, log.with_suffix(".err").open("wb") as err:
        proc = subprocess.Popen(
            list(cmd), stdout=out, stderr=err, env=dict(env), cwd=cwd, **_child_options()
        )
    _SPAWNED.append(proc)
    return proc


def spawn_piped(cmd: Sequence[str], env: Mapping[str, str], cwd: Path) -> subprocess.Popen:
    """A command in its own process group that talks through text pipes (its stdin and
    stdout; stderr discarded)."""
    proc = subprocess.Popen(
        list(cmd),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=dict(env),
        cwd=cwd,
        **_child_options(),
    )
    _SPAWNED.append(proc)
    return proc


def run_captured(
    cmd: Sequence[str],
    *,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 1800.0,
) -> subprocess.CompletedProcess:
    """`subprocess.run(cmd, capture_output=True, text=True)` for a child that must not
    outlive this process: its own group, killed whole on a timeout or any exception
    (subprocess.run kills only the child, not its JVM), and the parent-death signal."""
    proc = subprocess.Popen(
        list(cmd),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=dict(env) if env is not None else None,
        **_child_options(),
    )
    _SPAWNED.append(proc)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException as exc:
        kill_group(proc)
        if isinstance(exc, subprocess.TimeoutExpired):
            raise RunError(f"{proc.args!r} ran over {timeout:g} s: killed") from None
        raise
    finally:
        if proc in _SPAWNED and proc.poll() is not None:
            _SPAWNED.remove(proc)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def stop_spawned() -> list[int]:
    """Kill every spawned child still running (an interrupted run, a test's end, this
    process's exit): the pids of those that were."""
    stopped = []
    while _SPAWNED:
        proc = _SPAWNED.pop()
        if proc.poll() is None:
            stopped.append(proc.pid)
            try:
                kill_group(proc, timeout=10.0)
            except (RunError, OSError):
                continue  # what could be killed was; the next one still gets its turn
    return stopped


atexit.register(stop_spawned)


def kill_group(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """SIGKILL the whole process group and wait until none of it is left."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise RunError(f"process group {proc.pid} still alive {timeout:g} s after SIGKILL")


def wait_bounded(proc: subprocess.Popen, timeout: float = 600.0) -> int:
    """The child's exit code; past `timeout` its group is killed and the run fails."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise RunError(f"{proc.args!r} ran over {timeout:g} s: killed") from None
    except BaseException:  # interrupted while waiting (Ctrl-C, a test's timeout)
        kill_group(proc)
        raise
