"""The one way a trial breaks a run at a moment its child's log tells
(`broken_when_logged`), and the faults' reference run before the kills
(`Ctx.reference`), on a plain Python child: no JVM, no server."""

from __future__ import annotations

import os
import random
import sys

from contest.trials.breaks import broken_when_logged, read_text
from contest.trials.faults.context import Ctx

# A child that logs a line on stderr every 0.05 s, 200 of them (10 s when left alone).
LINES = [
    sys.executable,
    "-c",
    "import sys, time\n"
    "for i in range(200):\n"
    "    print(f'committed {i}', file=sys.stderr, flush=True)\n"
    "    time.sleep(0.05)\n",
]


def _committed(n: int):
    return lambda text: text.count("committed ") >= n


def test_a_child_is_killed_once_its_log_tells_the_moment(tmp_path):
    log = tmp_path / "logs" / "trial.log"
    kill, text = broken_when_logged(
        LINES, log, dict(os.environ), tmp_path, _committed(3), within_s=30
    )
    assert not kill.finished and kill.at_s < 9  # killed, not ended by itself
    assert 3 <= text.count("committed ") < 200
    assert text == read_text(log.with_suffix(".err"))
    assert read_text(tmp_path / "absent.err") == ""


def test_the_reference_run_times_the_whole_command_and_its_first_moment(tmp_path):
    ctx = Ctx(
        None, None, None, tmp_path, tmp_path, tmp_path, tmp_path, dict(os.environ),
        random.Random(0), print,
    )  # fmt: skip
    short = [sys.executable, "-c", "import sys, time; time.sleep(0.3); print('committed 0', "
             "file=sys.stderr, flush=True); time.sleep(0.3)"]  # fmt: skip
    ref = ctx.reference(short, tmp_path / "logs", _committed(1))
    assert ref.code == 0 and ref.err == tmp_path / "logs" / "reference.err"
    assert ref.moment_s is not None and 0.2 < ref.moment_s < ref.seconds
    failed = ctx.reference([sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "f")
    assert failed.code == 3 and failed.moment_s is None
