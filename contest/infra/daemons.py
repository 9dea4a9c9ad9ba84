"""Background servers the project starts (Spark standalone daemons, the S3 server):
started in their own session with output to a log, found again by the pid kept in a
state file, stopped by that pid's process group only."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from contest.errors import RunError


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spawn(cmd: Sequence[str], log: Path, env: Mapping[str, str], cwd: Path) -> int:
    """Start `cmd` detached (its own session: a Ctrl-C of the caller does not reach
    it, and `stop` can signal its whole group); returns its pid."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            list(cmd),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    return proc.pid


def alive(pid: int) -> bool:
    """The process runs (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    if state == "Z":
        _reap(pid)
        return False
    return True


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def stop(pid: int, timeout: float = 20.0) -> str:
    """SIGTERM to the process group `pid` leads, SIGKILL after `timeout`."""
    if not alive(pid):
        return "not running"
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return "not running"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return "stopped"
        time.sleep(0.2)
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return "killed"


def get_json(url: str, timeout: float = 2.0) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.load(resp)


def answers(url: str) -> bool:
    """Something answers HTTP at `url` (any status: an S3 server says 403)."""
    try:
        urllib.request.urlopen(url, timeout=1).read()
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False
    return True


def read_state(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def write_state(path: Path, state: dict, private: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=1) + "\n")
    if private:
        tmp.chmod(0o600)
    tmp.replace(path)


def wait_until(check, timeout: float, what: str, pid: int, log: Path) -> None:
    """Poll `check()` until true; fail in one line when the process died or time ran out."""
    deadline = time.monotonic() + timeout
    while not check():
        if not alive(pid):
            raise RunError(f"{what}: the process exited; see {log}")
        if time.monotonic() > deadline:
            raise RunError(f"{what}: not ready after {timeout:.0f} s; see {log}")
        time.sleep(0.3)
