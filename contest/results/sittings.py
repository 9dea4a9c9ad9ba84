"""A peer sitting's records summarised (`contest bench peers`): per strategy the runs that
count (the last correct, quiet attempt of each round), the median score with its
distribution-free interval, and the reference's ratio to each, taken round by round
within the sitting. Pure: the benchmark's page and the results' headline and chart
(`contest report`) are both rendered from it, so they cannot disagree.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from contest.results.intervals import Interval, Ratio, median_interval, paired_ratio
from contest.results.runs import RunRecord, cpu_models

REFERENCE = "optimized"
# This harness's own strategies: the reference and the contest's baselines (the design
# without its optimizations). Every other strategy is a peer, the one a user would pick
# instead (a format's own merge, LakeSoul's stock libraries), and only a peer is the one
# to beat; a `:defaults` row is its peer's.
OWN = frozenset({REFERENCE, "baseline-mor", "baseline-cow"})
# A peer's row at its format's documented defaults: `<strategy>:defaults`
# (contest/evaluation/strategies.py, `variant_name`).
DEFAULTS_ROW = ":defaults"


def is_defaults(strategy: str) -> bool:
    return strategy.endswith(DEFAULTS_ROW)


def kept(records: Sequence[RunRecord]) -> dict[str, dict[int, RunRecord]]:
    """Per strategy and round, the run that counts: the last attempt that was correct
    and quiet (none when every attempt of the round was busy or wrong)."""
    out: dict[str, dict[int, RunRecord]] = {}
    for r in records:
        if r.compare_round is None or not r.correct or r.busy:
            continue
        out.setdefault(r.strategy, {})[r.compare_round] = r
    return out


@dataclass(frozen=True)
class Row:
    """One strategy in one sitting."""

    strategy: str
    attempts: int
    score: Interval | None  # rows/core/s over the kept runs
    write_s: float | None
    read_s: float | None
    peak_tree_bytes: int | None
    ratio: Ratio | None  # the reference over this strategy, round by round


@dataclass(frozen=True)
class TwoRows:
    """A peer at its tuned preset and at its format's documented defaults in one sitting
    (ClickBench's two rows): `ratio` is tuned over defaults in the rounds both ran."""

    strategy: str
    tuned: Row
    defaults: Row
    ratio: Ratio | None


@dataclass(frozen=True)
class SittingSummary:
    sitting: str
    scale: float | None
    shape: str
    codec: str
    rounds_planned: int | None
    rounds_run: int
    strategies: list[str]
    once: list[str]
    rows: list[Row]
    excluded: list[str]
    commits: list[str]
    resumed: bool
    # The CPU models the sitting ran on (one, as resume enforces): a VM may keep its id
    # while its host changes, so figures compare only within a sitting.
    cpus: list[str] = field(default_factory=list)
    # Each peer that ran with its `:defaults` row too.
    two_rows: list[TwoRows] = field(default_factory=list)

    @property
    def cpu(self) -> str:
        return " / ".join(self.cpus) or "CPU not recorded"

    @property
    def peer_ratios(self) -> list[float]:
        """The reference over each other strategy's preset (a `:defaults` row is its
        peer's second row, not another strategy: ClickBench's summary counts it apart)."""
        return [
            r.ratio.interval.median
            for r in self.rows
            if r.strategy != REFERENCE and r.ratio is not None and not is_defaults(r.strategy)
        ]

    def row(self, strategy: str) -> Row | None:
        return next((r for r in self.rows if r.strategy == strategy), None)

    @property
    def peers(self) -> int:
        """How many peers' presets the sitting ran (a sitting may leave some out)."""
        rows = [r.strategy for r in self.rows]
        return len({s for s in rows if s not in OWN and not is_defaults(s)})

    @property
    def fastest_peer(self) -> Row | None:
        """The peer (not one of the harness's own strategies) with the highest median
        score: the one to beat."""
        others = [r for r in self.rows if r.strategy not in OWN and r.score is not None]
        return max(others, key=lambda r: r.score.median if r.score else 0.0, default=None)


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def summarize(records: Sequence[RunRecord]) -> SittingSummary:
    """One sitting's records (one scale, one data shape): medians, intervals, ratios."""
    first = records[0]
    by_round = kept(records)
    plan = first.sitting_settings
    planned = list(plan.strategies)
    order = [s for s in planned if any(r.strategy == s for r in records)] or list(
        dict.fromkeys(r.strategy for r in records)
    )
    ref = {n: r.rows_per_core_s or 0.0 for n, r in by_round.get(REFERENCE, {}).items()}
    rows = []
    for name in order:
        runs = list(by_round.get(name, {}).values())
        scores = [r.rows_per_core_s for r in runs if r.rows_per_core_s]
        mine = {n: r.rows_per_core_s or 0.0 for n, r in by_round.get(name, {}).items()}
        peaks = [max(r.write_peak_rss_bytes or 0, r.read_peak_rss_bytes or 0) for r in runs]
        rows.append(
            Row(
                strategy=name,
                attempts=sum(1 for r in records if r.strategy == name),
                score=median_interval(scores) if scores else None,
                write_s=_median([r.write_s for r in runs if r.write_s is not None]),
                read_s=_median([r.read_s for r in runs if r.read_s is not None]),
                peak_tree_bytes=max(peaks) if peaks else None,
                ratio=None if name == REFERENCE else paired_ratio(REFERENCE, name, ref, mine),
            )
        )
    two_rows = []
    for row in rows:
        tuned = next((t for t in rows if row.strategy == t.strategy + DEFAULTS_ROW), None)
        if tuned is not None:
            per_round = {
                name: {n: r.rows_per_core_s or 0.0 for n, r in by_round.get(name, {}).items()}
                for name in (tuned.strategy, row.strategy)
            }
            ratio = paired_ratio(tuned.strategy, row.strategy, *per_round.values())
            two_rows.append(TwoRows(tuned.strategy, tuned, row, ratio))
    excluded = []
    for r in records:
        if not r.correct:
            detail = (r.error or r.check or "").strip()[:120]
            why = f"wrong or failed ({r.failed_phase or 'check'}: {detail})"
        elif r.busy:
            why = f"busy: {r.busy}"
        else:
            continue
        excluded.append(f"{r.strategy}, round {r.compare_round}, attempt {r.attempt}: {why}")
    return SittingSummary(
        sitting=first.sitting or "",
        scale=sitting_scale(first),
        shape=first.data_shape,
        codec=plan.codec,
        rounds_planned=plan.rounds,
        rounds_run=len({r.compare_round for r in records}),
        strategies=order,
        once=[s for s in plan.once if s in order],
        rows=rows,
        excluded=excluded,
        commits=sorted({r.git_commit + ("+dirty" if r.git_dirty else "") for r in records}),
        resumed=any(r.sitting_settings.resumed for r in records),
        cpus=cpu_models(records),
        two_rows=two_rows,
    )


def groups(records: Sequence[RunRecord]) -> list[list[RunRecord]]:
    """Records by sitting, scale and data shape, in the order first seen."""
    out: dict[tuple[str, float | None, str], list[RunRecord]] = {}
    for r in records:
        out.setdefault((r.sitting or "", r.scale, r.data_shape), []).append(r)
    return list(out.values())


def newest(records: Sequence[RunRecord]) -> dict[tuple[float | None, str, str], list[RunRecord]]:
    """The newest sitting of each (scale, data shape, codec): what a page shows."""
    out: dict[tuple[float | None, str, str], list[RunRecord]] = {}
    for g in sorted(groups(records), key=lambda g: g[0].sitting or ""):
        out[(sitting_scale(g[0]), g[0].data_shape, g[0].sitting_settings.codec)] = g
    return out


def sitting_scale(r: RunRecord) -> float | None:
    """A run's contest scale, or None for a user's files (their shape names them)."""
    return None if r.data_files else r.scale
