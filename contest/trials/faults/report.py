"""An experiment's outcome (its counts and the goal), and the results table."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from contest.results.benchmarks import FaultRecord
from contest.trials.faults.plan import EXPERIMENTS


@dataclass
class Outcome:
    """One experiment's counts; goal: nothing lost, destroyed or half-committed, every
    failure one line, every case recovered by the documented command."""

    name: str
    title: str
    recovery: str  # the documented command
    trials: int = 0
    failures_observed: int = 0
    lost: int = 0  # acknowledged commits lost
    destroyed: int = 0  # user files destroyed
    half_commits: int = 0
    orphans_left: int = 0
    orphans_removed: int = 0
    recovered: int = 0
    not_one_line: int = 0  # failures that were not one line
    not_run: str | None = None
    expected_losses: bool = False  # the unsafe contrast: losses are the point
    notes: list[str] = field(default_factory=list)
    details: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def goal_met(self) -> bool:
        if self.not_run is not None:
            return False
        safe = self.expected_losses or self.lost == 0
        return (
            safe
            and self.destroyed == 0
            and self.half_commits == 0
            and self.not_one_line == 0
            and self.recovered == self.trials
        )

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["goal_met"] = self.goal_met
        d["seconds"] = round(self.seconds, 1)
        return d


def render_markdown(outcomes: Sequence[FaultRecord]) -> str:
    """The results table, each experiment's newest record with the run that measured it."""
    runs = sorted({(o.when, "?" if o.git_commit is None else o.git_commit) for o in outcomes})
    scales = sorted({str(o.scale) for o in outcomes})
    cores = sorted({str(o.cores) for o in outcomes})
    lines = [
        "# Fault injection: nothing lost, nothing silently wrong",
        "",
        "`contest bench faults` (runs "
        + ", ".join(f"{w} at git {c}" for w, c in runs)
        + f"; scale {'/'.join(scales)} data, {'/'.join(cores)} cores, on a shared machine: "
        "correctness counts, not timings). Every killed command is a separate process whose "
        "whole process group gets SIGKILL; recovery runs the documented command's functions.",
        "",
        "| experiment | trials | failures observed | acked commits lost | user files "
        "destroyed | half-commits | orphan files left / removed by `vacuum --retain 0` | "
        "recovered | by | goal |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        if o.not_run is not None:
            lines.append(f"| {o.title} | not run | | | | | | | | {o.not_run.replace('|', '/')} |")
            continue
        goal = "met" if o.goal_met else "NOT MET"
        if o.expected_losses:
            goal += " (losses expected: unsafe mode)"
        lines.append(
            f"| {o.title} | {o.trials} | {o.failures_observed} | {o.lost} | {o.destroyed} "
            f"| {o.half_commits} | {o.orphans_left} / {o.orphans_removed} "
            f"| {o.recovered}/{o.trials} | `{o.recovery}` | {goal} |"
        )
    lines.append("")
    for o in outcomes:
        if o.notes:
            lines += [f"**{o.title}.**", ""]
            lines += [f"- {n}" for n in o.notes]
            lines.append("")
    return "\n".join(lines)


def latest_outcomes(records: Sequence[FaultRecord]) -> list[FaultRecord]:
    """The newest record of each experiment (runs split with --only add up), in the
    order of the experiments."""
    latest: dict[str, FaultRecord] = {}
    for r in records:
        latest.pop(r.name, None)
        latest[r.name] = r
    order = {name: i for i, name in enumerate(EXPERIMENTS)}
    return sorted(latest.values(), key=lambda r: order.get(r.name.removesuffix("_unsafe"), 99))
