"""Noise measured during a job (contest/infra/noise.py): the share arithmetic, the busy
rule, and on real processes that a burner outside the job's tree is counted as noise,
that a server's tree is counted as the job's, and that a child that exits keeps its CPU."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from contest.infra.noise import (
    BUSY_OUTSIDE_SHARE,
    BUSY_PEAK_SHARE,
    BUSY_STEAL_SHARE,
    PEAK_WINDOW_S,
    Background,
    JobNoise,
    NoiseMeter,
    measured_busy,
    outside_share,
)
from contest.infra.proc import run_timed

# Burns `cpu` seconds of this process's own CPU time, then exits.
BURN = "import time,sys\nc=float(sys.argv[1])\nwhile time.process_time()<c: pass\n"


def burner(cpu_s: float) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", BURN, str(cpu_s)])


def noise(**kw: float) -> JobNoise:
    base = dict(wall_s=10.0, cores=2, tree_cpu_s=15.0, outside_cpu_s=0.0, outside_share=0.0)
    base |= dict(peak_outside_share=0.0, steal_share=0.0, samples=40)
    return JobNoise(**{**base, **kw})  # type: ignore[arg-type]


def test_outside_share_splits_busy_time() -> None:
    # 10 s on 2 cores: 20 CPU-seconds; 12 busy, 9 the job's, 1 the harness's: 2 others.
    assert outside_share(12.0, 9.0, 1.0, 10.0, 2) == pytest.approx(0.1)
    # Counters sampled a moment apart: a small negative rest is zero, never below.
    assert outside_share(9.0, 9.5, 0.0, 10.0, 2) == 0.0
    assert outside_share(50.0, 0.0, 0.0, 10.0, 2) == 1.0
    assert outside_share(1.0, 0.0, 0.0, 0.0, 2) == 0.0


class ScriptedMeter(NoiseMeter):
    """A meter whose readings come from a script: per 0.25 s poll, the CPU seconds of
    other work (the job's tree keeps both cores busy throughout)."""

    def __init__(self, outside_per_poll: list[float]) -> None:
        super().__init__(root=0, cores=2, own_apart=False)
        self.script = [0.0, *outside_per_poll]
        self.busy = self.tree_s = 0.0
        self.i = 0

    def _read(self, clock: float) -> tuple[float, float, float, float, float]:
        self.tree_s += 0.5 if self.i else 0.0
        self.busy += (0.5 if self.i else 0.0) + self.script[self.i]
        self.i += 1
        return clock, self.busy, 0.0, self.tree_s, 0.0


def scripted_peak(outside_per_poll: list[float]) -> float:
    meter = ScriptedMeter(outside_per_poll)
    meter.start(0.0)
    for k in range(1, len(outside_per_poll) + 1):
        meter.sample(0.25 * k)
    result = meter.result()
    assert result is not None
    return result.peak_outside_share


def test_the_peak_is_over_windows_of_seconds_not_one_poll() -> None:
    quiet = [0.0] * 40  # 10 s
    # A process of the tree missed between two polls (a launcher's half CPU-second) is
    # one poll's artefact: over a 2 s window it is an eighth of the CPUs, not busy.
    blip = quiet[:8] + [0.5] + quiet[9:]
    assert scripted_peak(blip) == pytest.approx(0.5 / (PEAK_WINDOW_S * 2))
    assert scripted_peak(blip) < BUSY_PEAK_SHARE
    # Other work holding one core for three seconds is a busy peak, however quiet the
    # job's mean (30 s long: a 5% mean).
    held = [0.0] * 40 + [0.25] * 12 + [0.0] * 68
    assert scripted_peak(held) == pytest.approx(0.5) and scripted_peak(held) >= BUSY_PEAK_SHARE
    # A job shorter than a window: its one window is itself.
    assert scripted_peak([0.25] * 4) == pytest.approx(0.5)


def test_busy_rule_names_the_reason() -> None:
    assert noise().busy is None
    assert "during the job" in (noise(outside_share=BUSY_OUTSIDE_SHARE).busy or "")
    assert "at a peak" in (noise(peak_outside_share=BUSY_PEAK_SHARE).busy or "")
    assert "steal" in (noise(steal_share=BUSY_STEAL_SHARE).busy or "")
    assert noise(outside_share=BUSY_OUTSIDE_SHARE * 0.9).busy is None


def test_a_record_without_noise_is_not_called_busy_and_missing_parts_count_as_none() -> None:
    assert measured_busy(None, 0.9, 0.5) is None  # nothing measured: no verdict
    assert measured_busy(0.0, None, None) is None
    assert "at a peak" in (measured_busy(0.0, BUSY_PEAK_SHARE, None) or "")
    assert "steal" in (measured_busy(0.0, None, BUSY_STEAL_SHARE) or "")


def wait_for(flag: Path) -> str:
    """A job's code: idle until `flag` exists (at most a minute)."""
    return (
        "import os,time\n"
        "t=time.time()\n"
        f"while not os.path.exists({str(flag)!r}) and time.time()-t<60: time.sleep(0.05)\n"
    )


def test_a_burner_beside_the_job_is_noise(tmp_path: Path) -> None:
    # The job idles until a process outside its tree has burnt 1 CPU-second.
    flag = tmp_path / "done"

    def burn_then_flag() -> None:
        time.sleep(0.3)
        burner(1.0).wait(timeout=60)
        flag.touch()

    t = threading.Thread(target=burn_then_flag)
    t.start()
    result = run_timed([sys.executable, "-c", wait_for(flag)], tmp_path / "job.log", poll_s=0.1)
    t.join()
    assert result.noise is not None
    # The burner's whole CPU second (it ran inside the job's window), whatever else the
    # machine did: noise only grows with other work.
    assert result.noise.outside_cpu_s >= 0.8
    assert result.noise.tree_cpu_s < 0.5
    assert result.noise.samples >= 10


def test_the_jobs_tree_and_its_servers_are_not_noise(tmp_path: Path) -> None:
    # A server (its pid handed in) burns 1 CPU-second while the job's own child burns 1
    # CPU-second in a grandchild that exits before the job does.
    flag = tmp_path / "done"
    server = burner(1.0)
    job = (
        "import subprocess,sys\n"
        f"subprocess.run([sys.executable,'-c',{BURN!r},'1.0'])\n" + wait_for(flag)
    )

    def flag_when_served() -> None:
        server.wait(timeout=60)
        flag.touch()

    t = threading.Thread(target=flag_when_served)
    t.start()
    result = run_timed(
        [sys.executable, "-c", job], tmp_path / "job.log", poll_s=0.05, servers=[server.pid]
    )
    t.join()
    assert result.noise is not None
    # Both burners count as the job's (the exited grandchild keeps what was seen of it).
    assert result.noise.tree_cpu_s >= 1.6


def test_background_counts_this_process_tree_as_its_own_the_rest_as_noise(tmp_path: Path) -> None:
    """A benchmark's records carry the noise of their interval: what this process and its
    children burn is the benchmark's own; a process outside the tree is noise."""
    done = tmp_path / "done"
    # An orphan (its shell exits at once): outside this process's tree.
    script = tmp_path / "burn.py"
    script.write_text(BURN)
    orphan = f"{sys.executable} {script} 1.0; touch {done}"
    with Background(period_s=0.1) as bg:
        bg.interval()
        burner(1.0).wait(timeout=60)
        own = bg.interval()
        subprocess.run(["sh", "-c", f"({orphan}) >/dev/null 2>&1 &"], check=True)
        t = time.monotonic()
        while not done.exists() and time.monotonic() - t < 60:
            time.sleep(0.05)
        other = bg.interval()
    assert own is not None and other is not None
    assert own.tree_cpu_s >= 0.8  # the child's second is the benchmark's
    assert other.outside_cpu_s >= 0.8 and other.tree_cpu_s < 0.5  # the orphan's is noise
