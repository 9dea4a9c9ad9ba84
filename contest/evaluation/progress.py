"""Progress of long work that also reaches a log: a phase that runs for minutes says
so every `HEARTBEAT_S` seconds when stderr is not a terminal (a log, CI, `nohup`),
where a progress bar would print nothing useful, and a timed job's log is watched for
the Spark UI's address, printed once as soon as the job's session is up.

On a terminal the heartbeat is tqdm's one updating status line instead of a line
every N seconds.
"""

from __future__ import annotations

import contextlib
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from contest.infra.spark import UI_LINE_PREFIX

HEARTBEAT_S = 30.0
# The line a harness session prints once its UI is up.
_UI = re.compile(rf"^{re.escape(UI_LINE_PREFIX)}(https?://\S+)", re.MULTILINE)


def is_terminal() -> bool:
    return sys.stderr.isatty()


def heartbeat_line(what: str, elapsed_s: float) -> str:
    """`<what>: still running, 1 min 30 s`."""
    return f"{what}: still running, {_duration(elapsed_s)}"


def _duration(seconds: float) -> str:
    s = int(seconds)
    if s < 60:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min {s} s"
    h, m = divmod(m, 60)
    return f"{h} h {m} min"


def spark_ui_address(log: Path) -> str | None:
    """The Spark UI's address a job's log names, if it does yet."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return None
    m = _UI.search(text)
    return m.group(1) if m else None


@contextlib.contextmanager
def heartbeat(
    what: str,
    say: Callable[[str], None],
    *,
    log: Path | None = None,
    every_s: float | None = HEARTBEAT_S,
    terminal: bool | None = None,
    poll_s: float = 1.0,
) -> Iterator[None]:
    """While the body runs: a line `what: still running, N s` every `every_s` seconds
    (a status line on a terminal; neither when `every_s` is None), and, when `log` is
    a Spark job's log, its UI's address once it appears there."""
    tty = every_s is not None and (is_terminal() if terminal is None else terminal)
    stop = threading.Event()
    started = time.monotonic()
    bar = None
    if tty:
        # deferred: tqdm is slow to import; only a progress bar on a terminal needs it
        from tqdm import tqdm

        bar = tqdm(total=None, desc=what, bar_format="{desc}: {elapsed}", leave=False)

    def watch() -> None:
        said_ui = log is None
        next_beat = started + every_s if every_s is not None else float("inf")
        while not stop.wait(poll_s):
            now = time.monotonic()
            if not said_ui and log is not None and (url := spark_ui_address(log)):
                say(f"{what}: Spark UI at {url}")
                said_ui = True
            if bar is not None:
                bar.refresh()
            elif now >= next_beat:
                say(heartbeat_line(what, now - started))
                next_beat += every_s or 0.0

    thread = threading.Thread(target=watch, name="heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        if bar is not None:
            bar.close()
