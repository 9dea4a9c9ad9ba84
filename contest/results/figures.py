"""The ratio figures a sitting's records give, recomputed from them alone: what a figure
cited by hand in results/ (`2.12x (sitting 2026-12-01T14:44:47Z)`) must be one of, at
the rounding it shows (tests/contest/results/test_citations.py holds every citation to
it). Each results file's records have their own rule, by the registry's name: the
comparisons its page makes (the reference over each strategy round by round, an engine
over another, a scale against another, a variant against its default), never every
pair of numbers (that would match any figure).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from contest.results import registry
from contest.results.disclosure import sitting_of
from contest.results.intervals import Ratio, geometric_mean, paired_ratio
from contest.results.runs import RunRecord
from contest.results.sittings import REFERENCE, groups, kept, summarize
from contest.results.workloads import PhaseRecord, head_reads

# A figure's name (what over what, which end of its interval) and its value.
Figures = dict[str, float]


def _interval(out: Figures, name: str, ratio: Ratio | None) -> None:
    """A round-by-round ratio's median and its interval's ends."""
    if ratio is None:
        return
    iv = ratio.interval
    out[f"{name} (median)"] = iv.median
    out[f"{name} (low)"] = iv.low
    out[f"{name} (high)"] = iv.high


def _both_ways(out: Figures, name: str, a: float | None, b: float | None) -> None:
    """a over b and b over a (a page may name either way round)."""
    if a and b:
        out[name] = a / b
        out[f"inverse of {name}"] = b / a


def _median(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def runs(records: Sequence[RunRecord]) -> Figures:
    """Evaluations: a sitting's (rounds) reference over each strategy round by round,
    both ways, each peer's tuned over its defaults row, the geometric mean; runs without
    rounds (pooled, a sweep): the median score of each strategy or case against the
    reference's or each other case's at the same scale."""
    out: Figures = {}
    rounds = [r for r in records if r.compare_round is not None]
    for g in groups(rounds):
        s = summarize(g)
        at = f"scale {s.scale:g}, {s.shape}, codec {s.codec}: " if s.scale else f"{s.shape}: "
        for row in s.rows:
            if row.ratio is not None:
                _interval(out, f"{at}{REFERENCE} / {row.strategy}", row.ratio)
                inverse = Ratio(row.ratio.b, row.ratio.a, _inverted(row.ratio))
                _interval(out, f"{at}{row.strategy} / {REFERENCE}", inverse)
        for t in s.two_rows:
            _interval(out, f"{at}{t.strategy} tuned / defaults", t.ratio)
        if s.peer_ratios:
            out[f"{at}geometric mean"] = geometric_mean(s.peer_ratios)
        # Each round's ratio, the values the interval is taken over.
        by_round = kept(g)
        ref = by_round.get(REFERENCE, {})
        for strategy, mine in by_round.items():
            for n, r in mine.items():
                if strategy != REFERENCE and n in ref:
                    _both_ways(
                        out,
                        f"{at}{REFERENCE} / {strategy}, round {n}",
                        ref[n].rows_per_core_s,
                        r.rows_per_core_s,
                    )
    pooled = [r for r in records if r.compare_round is None and r.correct]
    by: dict[tuple[float | None, str], list[RunRecord]] = {}
    for r in pooled:
        by.setdefault((r.scale, r.case_key or r.strategy), []).append(r)
    scores = {k: _median(r.rows_per_core_s for r in rs) for k, rs in by.items()}
    for (scale, a), sa in scores.items():
        for (other, b), sb in scores.items():
            if other == scale and a < b:
                _both_ways(out, f"{a} / {b}, scale {scale}", sa, sb)
    return out


def _inverted(ratio: Ratio) -> Any:
    iv = ratio.interval
    return type(iv)(1 / iv.median, 1 / iv.high, 1 / iv.low, iv.n, iv.confidence)


def duckdb(records: Sequence[Any]) -> Figures:
    """`contest bench duckdb`: every engine (as labelled: a variant, DuckDB's memory)
    over every other, round by round on speed (1 / seconds), and on median seconds."""
    by: dict[str, dict[int, float]] = {}
    for r in records:
        if r.correct and r.seconds > 0:
            by.setdefault(r.label, {})[r.round] = 1 / r.seconds
    out: Figures = {}
    for a, ra in by.items():
        for b, rb in by.items():
            if a != b:
                _interval(out, f"{a} / {b}", paired_ratio(a, b, ra, rb))
                med_a, med_b = (
                    _median(1 / v for v in ra.values()),
                    _median(1 / v for v in rb.values()),
                )
                if med_a and med_b:
                    out[f"{b} seconds / {a} seconds (medians)"] = med_b / med_a
    return out


def scale(records: Sequence[Any]) -> Figures:
    """`contest bench scale`: each scale's cost per row and score against another's."""
    out: Figures = {}
    for a in records:
        for b in records:
            if a.scale < b.scale:
                _both_ways(
                    out,
                    f"s/M rows, {a.scale} / {b.scale}",
                    a.s_per_million_rows,
                    b.s_per_million_rows,
                )
                _both_ways(
                    out, f"rows/core/s, {b.scale} / {a.scale}", b.rows_per_core_s, a.rows_per_core_s
                )
    return out


def fields(*names: str) -> Callable[[Sequence[Any]], Figures]:
    """A benchmark whose records hold their ratio (a variant's against the default's):
    the field, and its inverse; `variants` of a read bench's record too."""

    def figures(records: Sequence[Any]) -> Figures:
        out: Figures = {}
        for n, r in enumerate(records):
            values = [r, *(getattr(r, "variants", None) or {}).values()]
            for holder in values:
                for name in names:
                    v = getattr(holder, name, None)
                    if isinstance(v, int | float) and v:
                        _both_ways(out, f"{name} of record {n}", float(v), 1.0)
        return out

    return figures


def workloads(records: Sequence[PhaseRecord]) -> Figures:
    """Each run's last head read over its first, and over each read between (a page's
    "last / first", or "after 120 / after 10": what deltas piling up cost), per
    lane (a strategy, and its maintenance policy where the run had one: each policy is a
    table of its own), both ways."""
    out: Figures = {}
    runs: dict[tuple[str, str], list[PhaseRecord]] = {}
    for r in records:
        runs.setdefault((r.run_id, r.lane), []).append(r)
    for (run, lane), phases in runs.items():
        reads = head_reads(sorted(phases, key=lambda p: p.step))
        for n, earlier in enumerate(reads[:-1]):
            _both_ways(
                out,
                f"{lane} last read / read {n + 1}, run {run}",
                reads[-1].seconds,
                earlier.seconds,
            )
    return out


def meta_replay(records: Sequence[Any]) -> Figures:
    """The driver against the distributed merge, and a size's time against another's."""
    out: Figures = {}
    for n, r in enumerate(records):
        _both_ways(out, f"distributed / driver, record {n}", r.distributed_s, r.driver_s)
    return out


# By the registry's name (contest/results/registry.py); a file not here gives none, so
# a figure cited from it fails the citation test until its rule is written.
RULES: dict[str, Callable[[Sequence[Any]], Figures]] = {
    "runs": runs,
    "cluster": runs,
    "sweeps": runs,
    "peer_sittings": runs,
    "duckdb": duckdb,
    "scale": scale,
    "compact": fields("speedup"),
    "read_bench": fields("vs_default"),
    "native_merge": fields("ratio"),
    "streaming": fields("last_over_first"),
    "meta_replay": meta_replay,
    "workloads": workloads,
}


def by_sitting(root: Path) -> dict[str, Figures]:
    """Every sitting's figures, by its id (a file's lines without one: the file's,
    `sweeps/codec/runs`), from every results file under `root`."""
    out: dict[str, Figures] = {}
    for kind, path in registry.every_file(root):
        rule = RULES.get(kind.name)
        if rule is None:
            continue
        source = path.relative_to(root).with_suffix("").as_posix()
        parts: dict[str, list[Any]] = {}
        for r in kind.read(path):
            parts.setdefault(sitting_of(r, source), []).append(r)
        for sitting, records in parts.items():
            out.setdefault(sitting, {}).update(
                {f"{source}: {k}": v for k, v in rule(records).items()}
            )
    return out
