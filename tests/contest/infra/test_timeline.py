"""A timed job's timeline: its marks' log line read back, the phases between the marks
present (consecutive, so they sum to the span), clocks a little apart clamped, and a
job that printed no marks has no phases."""

import subprocess
import sys
import time

import pytest

from contest.infra import timeline
from contest.infra.proc import run_timed


def test_phases_are_the_spans_between_the_marks_present_in_order():
    noted = {
        timeline.LAUNCHED: 100.0,
        timeline.JVM: 100.4,
        timeline.PYTHON: 101.0,
        timeline.SESSION: 101.5,
        timeline.CONTEXT: 102.5,
        timeline.FIRST_TASK: 102.75,
        timeline.LAST_TASK: 104.0,
        timeline.STOP: 104.25,
        timeline.STOPPED: 104.5,
        timeline.EXITED: 105.0,
    }
    phases = timeline.phases(noted)
    assert phases == {
        "launch": 0.4,
        "jvm": 0.6,
        "imports": 0.5,
        "context": 1.0,
        "plan": 0.25,
        "tasks": 1.25,
        "finish": 0.25,
        "stop": 0.25,
        "exit": 0.5,
    }
    assert sum(phases.values()) == pytest.approx(5.0)


def test_a_native_job_has_no_jvm_or_context_and_still_sums_to_its_span():
    noted = {
        timeline.LAUNCHED: 10.0,
        timeline.PYTHON: 10.1,
        timeline.FIRST_TASK: 10.9,
        timeline.LAST_TASK: 12.0,
        timeline.EXITED: 12.3,
    }
    phases = timeline.phases(noted)
    assert list(phases) == ["launch", "imports", "tasks", "finish"]
    assert sum(phases.values()) == pytest.approx(2.3)


def test_a_mark_a_little_before_the_one_before_is_clamped_not_reordered():
    phases = timeline.phases({timeline.LAUNCHED: 5.0, timeline.PYTHON: 4.99, timeline.EXITED: 6})
    assert phases == {"launch": 0.0, "imports": 1.0}


def test_the_first_mark_of_a_name_wins(monkeypatch):
    monkeypatch.setattr(timeline, "_marks", {})
    timeline.mark(timeline.STOP, 1.0)
    timeline.mark(timeline.STOP, 2.0)
    assert timeline.marks() == {timeline.STOP: 1.0}


def test_a_jobs_log_line_is_read_back_and_is_not_its_last_line(tmp_path):
    """run_timed: the marks a child printed become its phases between the parent's own
    launch and exit moments, summing to its wall time; the marks' line is not what a
    failure would quote as the job's last line."""
    code = (
        "import time; from contest.infra import timeline; timeline.start(); "
        "timeline.mark(timeline.FIRST_TASK); time.sleep(0.3); timeline.mark(timeline.LAST_TASK); "
        "print('the job said this last', flush=True); timeline.print_marks()"
    )
    job = run_timed([sys.executable, "-c", code], tmp_path / "job.log")
    assert job.ok and job.last_line == "the job said this last"
    phases = job.timeline
    assert list(phases) == ["launch", "imports", "tasks", "finish"]
    assert phases["tasks"] >= 0.29
    assert sum(phases.values()) == pytest.approx(job.seconds, abs=0.05)


def test_a_job_without_marks_has_no_timeline(tmp_path):
    job = run_timed([sys.executable, "-c", "print('no marks')"], tmp_path / "job.log")
    assert job.ok and job.timeline == {}
    assert timeline.read_marks(tmp_path / "absent.log") == {}


def test_a_process_start_is_its_stat_lines_ticks_against_the_time_since_boot():
    # A command name with spaces and a parenthesis: the fields are counted after its `)`.
    fields = ["S"] + ["0"] * 18 + ["123456"] + ["0"] * 30
    stat = "4242 (python (x) y) " + " ".join(fields)
    # Started 1234.56 s after boot; it is now 1300 s after boot, 10,000 s on the wall clock.
    at = timeline.process_start(stat, since_boot=1300.0, now=10_000.0, ticks=100)
    assert at == pytest.approx(10_000.0 - (1300.0 - 1234.56))


def test_the_python_mark_lies_between_the_launch_and_the_first_statement(tmp_path):
    # psutil's create_time counted from the kernel's whole-second boot time was up to a
    # second early: before the parent had even launched the process.
    script = tmp_path / "first.py"
    script.write_text(
        "import time\nfirst = time.time()\nfrom contest.infra import timeline\n"
        "timeline.mark_python_start()\nprint(first, timeline.marks()['python'])\n"
    )
    before = time.time()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    first, python = map(float, done.stdout.split())
    tick = 0.011  # the kernel counts a process's start in ticks of 10 ms
    assert before - tick <= python <= first + tick
