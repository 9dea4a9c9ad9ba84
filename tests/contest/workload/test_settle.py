"""`settle`: before a lane's command, the other lanes' applications are given a moment
to finish their asynchronous work, so a short command does not time it as its noise;
a quiet one costs no wait, a busy one at most SETTLE_S (real child processes)."""

from __future__ import annotations

import subprocess
import sys
import time

from contest.workload.application import SETTLE_S, settle

BUSY = "import time\nend = time.time() + 30\nwhile time.time() < end: pass"


def test_quiet_applications_cost_no_wait_and_busy_ones_at_most_the_cap():
    assert settle(()) == 0.0
    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    busy = subprocess.Popen([sys.executable, "-c", BUSY])
    try:
        time.sleep(1.0)  # both past their interpreter's start
        assert settle((idle.pid,)) < 0.5  # the first quiet window or the next
        waited = settle((busy.pid, idle.pid))
        assert SETTLE_S <= waited < SETTLE_S + 0.5
    finally:
        for proc in (idle, busy):
            proc.kill()
            proc.wait()
