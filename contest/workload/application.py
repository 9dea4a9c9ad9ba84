"""A lane's one long-lived application, seen from the workload runner: started once
(spark-submit for a Spark strategy, this Python for a native library: the run's own
launch, contest/evaluation/jobs.py), then asked for each commit, read and maintenance
as a pipeline would ask its session, each command timed from here, its tree's memory
and the machine's noise sampled while it runs (contest/infra/proc.py, `watched`). The
application's side is contest/cli/application.py.

The first command pays the JVM's and Spark's start (the lane's base upsert); every
later one runs warm. A command's outcome is a ProcResult whose log is the command's own
(its report line and one-line error read as a job's are); the application's whole life
is one more, from `stop`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from io import BufferedRWPair
from pathlib import Path

from contest.errors import PhaseError
from contest.evaluation import jobs
from contest.evaluation.run import Run
from contest.infra.noise import TreeCpu
from contest.infra.postgres import local_server_pids
from contest.infra.proc import ProcResult, last_line, watched

# How long the application may take to connect back (its process's start: Python's
# imports, not Spark's, which starts with the first command).
CONNECT_TIMEOUT_S = 120.0
# How long a stopped application may take to end (its session's stop) before it is killed.
STOP_TIMEOUT_S = 60.0
# The stage name of its entry point (jobs.job_script: contest/workload/__main__.py).
STAGE = "workload"
# Before a lane's command, the other applications are given up to SETTLE_S to go quiet
# (below QUIET_SHARE of one CPU over a SETTLE_WINDOW_S window): a JVM that has answered
# still does its asynchronous work for a moment (GC, Spark's cleaner), which the next
# lane's short command would otherwise time as its noise (results/notes/longevity.md).
SETTLE_S, SETTLE_WINDOW_S, QUIET_SHARE = 2.0, 0.1, 0.05
# How often the application's whole process is sampled (its peak memory): rarely, as
# each of its commands is watched closely (`call`), and a run holds an application per
# lane, whose samplers at a job's 0.25 s took most of a core of this process.
WHOLE_POLL_S = 5.0


class Application:
    """One lane's application: `start`, then `call` per command, then `stop`."""

    def __init__(self, run: Run, log: Path) -> None:
        self.run, self.log = run, log
        self.pid: int | None = None
        self.whole: ProcResult | None = None  # the application's process, once it ended
        self._thread: threading.Thread | None = None
        self._conn: socket.socket | None = None
        self._stream: BufferedRWPair | None = None
        self._failure: BaseException | None = None

    def _launch(self, port: int) -> None:
        run = self.run
        assert run.config_file is not None
        try:
            self.whole = jobs.run_job(
                run.cfg,
                STAGE,
                run.record.cores,
                run.config_file,
                run.env,
                self.log,
                ["--connect", f"127.0.0.1:{port}"],
                run.record.master,
                run.submit_opts,
                cap_s=None,  # a long run's life is not one job's time cap
                on_start=self._started,
                poll_s=WHOLE_POLL_S,
            )
        except BaseException as exc:  # recorded: the runner's next call says why
            self._failure = exc

    def _started(self, pid: int) -> None:
        self.pid = pid

    def _ended(self) -> str:
        """Why the application is gone, in one line."""
        if self._failure is not None:
            return f"the application could not start: {self._failure}"
        if self.whole is None:
            return f"the application stopped answering (log {self.log})"
        cause = jobs.failure_cause(self.whole)
        return f"the application exited {self.whole.returncode}: {cause} (log {self.log})"

    def start(self) -> Application:
        """Launch it and wait until it has connected back."""
        with socket.create_server(("127.0.0.1", 0)) as listener:
            listener.settimeout(0.5)
            port = listener.getsockname()[1]
            self._thread = threading.Thread(
                target=self._launch, args=(port,), name=f"app-{self.run.strategy}", daemon=True
            )
            self._thread.start()
            deadline = time.monotonic() + CONNECT_TIMEOUT_S
            while True:
                try:
                    conn, _ = listener.accept()
                    break
                except TimeoutError:
                    if not self._thread.is_alive():
                        raise PhaseError(self._ended()) from None
                    if time.monotonic() > deadline:
                        self.kill()
                        raise PhaseError(
                            f"the application did not connect within {CONNECT_TIMEOUT_S:.0f} s "
                            f"(log {self.log})"
                        ) from None
        conn.settimeout(None)
        stream = conn.makefile("rwb")
        self._conn, self._stream = conn, stream
        hello = stream.readline()
        if not hello:
            raise PhaseError(self._ended())
        return self

    def call(self, argv: list[str], log: Path) -> ProcResult:
        """`contest ARGV` in the application, its output in `log`, timed from here."""
        if self._stream is None or self.pid is None:
            raise PhaseError(self._ended())
        request = json.dumps({"argv": argv, "log": str(log)}).encode() + b"\n"
        servers = local_server_pids(self.run.cfg)
        launched_at, started = time.time(), time.perf_counter()
        with watched(self.pid, servers) as watch:
            try:
                self._stream.write(request)
                self._stream.flush()
                line = self._stream.readline()
            except OSError:
                line = b""
            seconds, exited_at = time.perf_counter() - started, time.time()
        if not line:  # the application died: the lane's end, with its own why
            self._close()
            if self._thread is not None:
                self._thread.join(STOP_TIMEOUT_S)
            raise PhaseError(self._ended())
        reply = json.loads(line)
        return ProcResult(
            int(reply["exit"]),
            seconds,
            watch.peak_rss_bytes,
            watch.peak_process_rss_bytes,
            log,
            last_line(log) if log.exists() else "",
            watch.meter.result(),
            launched_at=launched_at,
            exited_at=exited_at,
        )

    def _close(self) -> None:
        for closing in (self._stream, self._conn):
            if closing is not None:
                try:
                    closing.close()
                except OSError:
                    pass
        self._stream = self._conn = None

    def stop(self) -> ProcResult | None:
        """Ask it to stop (its session stopped), wait for its end: its whole process's
        result, or None when it was killed for not ending."""
        if self._stream is not None:
            try:
                self._stream.write(b'{"stop": true}\n')
                self._stream.flush()
            except OSError:
                pass
        self._close()
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT_S)
            if self._thread.is_alive():
                self.kill()
                self._thread.join(STOP_TIMEOUT_S)
                return None
        return self.whole

    def kill(self) -> None:
        """Its whole process group (started in a session of its own), at once."""
        if self.pid is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def settle(pids: tuple[int, ...]) -> float:
    """Wait until the other lanes' applications (their process ids) are quiet, their
    trees' CPU below QUIET_SHARE of one CPU over a window, at most SETTLE_S: the seconds
    waited, untimed. None running: no wait."""
    if not pids:
        return 0.0
    tree = TreeCpu(pids)
    started = time.perf_counter()
    before = tree.total()
    while time.perf_counter() - started < SETTLE_S:
        time.sleep(SETTLE_WINDOW_S)
        now = tree.total()
        if now - before < QUIET_SHARE * SETTLE_WINDOW_S:
            break
        before = now
    return time.perf_counter() - started
