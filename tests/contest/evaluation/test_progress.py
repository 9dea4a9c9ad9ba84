"""Progress that reaches a log: a heartbeat line while a phase runs, the Spark UI's
address from a job's log once."""

from __future__ import annotations

import threading
import time

from contest.evaluation.progress import heartbeat, heartbeat_line, spark_ui_address

UI_LINE = "Spark UI: http://127.0.0.1:4041\n"


def test_heartbeat_says_a_line_every_period_when_not_a_terminal(tmp_path):
    said: list[str] = []
    lock = threading.Lock()

    def say(msg: str) -> None:
        with lock:
            said.append(msg)

    log = tmp_path / "job.log"
    log.write_text("starting\n")
    with heartbeat("optimized: write", say, log=log, every_s=0.2, terminal=False, poll_s=0.05):
        time.sleep(0.3)
        log.write_text("starting\n" + UI_LINE)
        time.sleep(0.5)
    beats = [m for m in said if "still running" in m]
    assert len(beats) >= 2 and beats[0] == "optimized: write: still running, 0 s"
    ui = [m for m in said if "Spark UI" in m]
    assert ui == ["optimized: write: Spark UI at http://127.0.0.1:4041"]  # once
    count = len(said)
    time.sleep(0.3)
    assert len(said) == count  # nothing after the body ended


def test_no_heartbeat_lines_when_asked_only_for_the_ui(tmp_path):
    said: list[str] = []
    log = tmp_path / "job.log"
    log.write_text(UI_LINE)
    with heartbeat("x", said.append, log=log, every_s=None, terminal=False, poll_s=0.05):
        time.sleep(0.3)
    assert said == ["x: Spark UI at http://127.0.0.1:4041"]


def test_lines_and_addresses():
    assert heartbeat_line("a", 95.0) == "a: still running, 1 min 35 s"
    assert heartbeat_line("a", 3 * 3600 + 120) == "a: still running, 3 h 2 min"
    assert spark_ui_address(__import__("pathlib").Path("/nonexistent/log")) is None
