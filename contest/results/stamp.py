"""What every benchmark record carries about where and how quietly it was measured
(`contest.sitting.Sitting.record` stamps it): the machine, the commit, the load
average and the noise of the interval that produced the record (other work's share of
the CPUs and the steal, measured throughout, `contest.infra.noise.Background`), and what
a full disclosure names as a peer sitting's records do: the CPU model, the environment
(machine facts, every library's version, the JVM libraries) and the effective
configuration. Lines from before it existed have none; older stamps have no disclosure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

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
    # The full disclosure (newer stamps): the CPU (a VM may keep its id while its host
    # changes), what `environment()` records for a peer sitting's run with every
    # library's version beside it, and the configuration the rows ran under.
    cpu_model: str | None = None
    environment: dict[str, Any] | None = None
    config: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """As written: an older stamp, without a disclosure, without its empty keys."""
        out = super().to_dict()
        for key in ("cpu_model", "environment", "config"):
            if out.get(key) is None:
                out.pop(key, None)
        return out

    def summary(self) -> str:
        """`3% / 60% over 1.5 min`: other work's share of the CPUs over the stamp's
        interval (mean / 2-s peak), `-` when no noise was measured. No busy verdict: the
        window holds the harness's gaps between jobs, and the one rule judges a job by
        its own noise (`contest.infra.noise.BUSY_RULE`)."""
        if self.outside_share is None:
            return "-"
        cell = f"{self.outside_share:.0%} / {(self.peak_outside_share or 0):.0%}"
        if self.interval_s:
            cell += f" over {self.interval_s / 60:.1f} min"
        return cell
