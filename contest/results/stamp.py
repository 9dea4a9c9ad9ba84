"""What every benchmark record carries about where and how quietly it was measured
(`contest.benchmarks.base.Sitting.record` stamps it): the machine, the commit, the load
average and the noise of the interval that produced the record (other work's share of
the CPUs and the steal, measured throughout, `contest.infra.noise.Background`). Lines
from before it existed have none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from contest.infra.noise import measured_busy
from contest.results.record import Record


@dataclass(frozen=True, kw_only=True)
class Stamp(Record):
    what: ClassVar[str] = "benchmark stamp"
    machine_id: str
    git_commit: str = ""
    dirty: bool | None = None
    load1: float | None = None
    interval_s: float | None = None
    outside_share: float | None = None
    peak_outside_share: float | None = None
    steal_share: float | None = None

    @property
    def busy(self) -> str | None:
        """Why the interval's timings are suspect (the evaluation's busy rule), or None;
        None too when no noise was measured."""
        return measured_busy(self.outside_share, self.peak_outside_share, self.steal_share)

    def summary(self) -> str:
        """`3% / 60% over 1.5 min busy`: other work's share of the CPUs over the stamp's
        interval (mean / 2-s peak), and `busy` by the evaluation's rule; `-` when no
        noise was measured."""
        if self.outside_share is None:
            return "-"
        cell = f"{self.outside_share:.0%} / {(self.peak_outside_share or 0):.0%}"
        if self.interval_s:
            cell += f" over {self.interval_s / 60:.1f} min"
        return cell + (" busy" if self.busy else "")
