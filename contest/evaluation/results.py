"""Benchmark records: medians, ratios, the results table and chart."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from contest.evaluation.records import RunRecord, load_records

Metric = Callable[[RunRecord], float | None]
METRICS: dict[str, Metric] = {
    "write_s": lambda r: r.write_s,
    "read_s": lambda r: r.read_s,
    "merge_s": lambda r: r.merge_s,
    "rows_per_core_s": lambda r: r.rows_per_core_s,
}


def load_runs(path: Path) -> list[RunRecord]:
    return load_records(path)


def median_of(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


@dataclass(frozen=True)
class Spread:
    """A median with what says how far to trust it: the number of runs and their range."""

    n: int
    median: float | None
    low: float | None
    high: float | None

    @classmethod
    def of(cls, values: Iterable[float | None]) -> Spread:
        known = [v for v in values if v is not None]
        if not known:
            return cls(0, None, None, None)
        return cls(len(known), statistics.median(known), min(known), max(known))

    def overlaps(self, other: Spread) -> bool:
        if None in (self.low, self.high, other.low, other.high):
            return True
        return not (self.high < other.low or other.high < self.low)  # type: ignore[operator]

    def render(self, fmt: Callable[[float], str]) -> str:
        """`median [min–max]`, or `median (1 run)`: no median without its spread."""
        if self.median is None or self.low is None or self.high is None:
            return "-"
        if self.n == 1:
            return f"{fmt(self.median)} (1 run)"
        return f"{fmt(self.median)} [{fmt(self.low)}–{fmt(self.high)}]"

    def to_dict(self) -> dict[str, float | int | None]:
        return {"n": self.n, "median": self.median, "min": self.low, "max": self.high}


def ratio_note(a: Spread, b: Spread) -> str:
    """What a ratio of two medians is worth: from a single run it is no measured
    difference; with overlapping ranges it is none either (the README's rule)."""
    if min(a.n, b.n) < 2:
        return "single run: not a measured difference"
    if a.overlaps(b):
        return "min-max ranges overlap: no significant difference"
    return ""


def busy_note(records: Sequence[RunRecord]) -> str | None:
    """One line naming the runs taken on a busy machine, or None."""
    busy = [r for r in records if r.busy]
    if not busy:
        return None
    first = busy[0]
    return (
        f"busy machine: {len(busy)} of {len(records)} run(s) ({first.strategy}: {first.busy}"
        + (", ..." if len(busy) > 1 else "")
        + "): their timings are suspect"
    )


def compare_table(records: Sequence[RunRecord]) -> tuple[str, dict]:
    """Per strategy the median [min–max] of each metric over correct runs, n and how
    many runs were on a busy machine; the ratios optimized/baseline, each with what it
    is worth."""
    by: dict[str, list[RunRecord]] = defaultdict(list)
    for r in records:
        by[r.strategy].append(r)
    summary: dict = {"strategies": {}}
    header = ["strategy", "runs", "ok", "busy", "write s", "read s", "merge s", "rows/core/s"]
    rows = []
    spreads: dict[str, Spread] = {}
    for name, recs in by.items():
        good = [r for r in recs if r.correct]
        med = {k: Spread.of(map(get, good)) for k, get in METRICS.items()}
        spreads[name] = med["rows_per_core_s"]
        busy = sum(1 for r in recs if r.busy)
        summary["strategies"][name] = {
            "runs": len(recs),
            "correct": len(good),
            "busy": busy,
            **{k: v.median for k, v in med.items()},
            "spread": {k: v.to_dict() for k, v in med.items()},
        }
        rows.append(
            [name, str(len(recs)), str(len(good)), str(busy)]
            + [med[k].render(_num) for k in ("write_s", "read_s", "merge_s", "rows_per_core_s")]
        )
    widths = [max(len(x) for x in col) for col in zip(header, *rows, strict=True)]
    lines = [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )
        for row in [header, *rows]
    ]
    ratios, notes = {}, {}
    opt = spreads.get("optimized")
    for name, sp in spreads.items():
        if name != "optimized" and opt and opt.median and sp.median:
            key = f"optimized/{name}"
            ratios[key] = round(opt.median / sp.median, 2)
            if note := ratio_note(opt, sp):
                notes[key] = note
    summary["ratios"], summary["ratio_notes"] = ratios, notes
    if ratios:
        lines.append(
            "ratios (median rows/core/s): "
            + ", ".join(
                f"{k} = {v}x" + (f" ({notes[k]})" if k in notes else "") for k, v in ratios.items()
            )
        )
    if flagged := busy_note(records):
        lines.append(flagged)
    return "\n".join(lines), summary


def _num(v: float) -> str:
    return f"{v:,.1f}" if v >= 100 else f"{v:.3f}"


def write_report(runs_path: Path) -> tuple[Path, Path]:
    """results/README.md (per strategy and scale: n, busy runs, median and min–max) and
    a PNG chart with min–max whiskers."""
    runs = load_runs(runs_path)
    out_dir = runs_path.parent
    groups: dict[tuple[float, str], list[RunRecord]] = defaultdict(list)
    for r in runs:
        if r.scale is not None:
            groups[(r.scale, r.strategy)].append(r)
    lines = [
        "# Results",
        "",
        f"Generated by `contest report` from `{runs_path.name}` (one JSON record per "
        "published evaluation: `contest publish`).",
        "Score = input rows / (cores x (write s + read s)), both jobs timed as whole",
        "`spark-submit` processes, JVM start included; only runs the oracle passed count.",
        "Each median stands beside its min–max over the correct runs (n); `busy` counts",
        "runs taken on a busy machine (load or CPU steal around the timed jobs), whose",
        "timings are suspect (`?`: not recorded, runs from before records carried it).",
        "",
        "| scale | strategy | runs | correct (n) | busy | median rows/core/s [min–max] "
        "| median write s [min–max] | median read s [min–max] | latest (UTC) | latest commit |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (scale, strategy), recs in sorted(groups.items()):
        good = [r for r in recs if r.correct]
        latest = recs[-1]
        commit = latest.git_commit + ("+dirty" if latest.git_dirty else "")
        lines.append(
            f"| {scale:g} | {strategy} | {len(recs)} | {len(good)} "
            f"| {_busy_cell(recs)} "
            f"| {Spread.of(r.rows_per_core_s for r in good).render(_cell)} "
            f"| {Spread.of(r.write_s for r in good).render(_cell)} "
            f"| {Spread.of(r.read_s for r in good).render(_cell)} "
            f"| {latest.when} | {commit} |"
        )
    chart = out_dir / "rows_per_core_s.png"
    _chart(groups, chart)
    lines += ["", f"![rows per core per second]({chart.name})", ""]
    notes = out_dir / "NOTES.md"
    if notes.exists():
        lines += [notes.read_text().rstrip(), ""]
    readme = out_dir / "README.md"
    readme.write_text("\n".join(lines))
    return readme, chart


def _busy_cell(recs: Sequence[RunRecord]) -> str:
    """How many runs were on a busy machine; `?` when none recorded its load."""
    if not any(r.load for r in recs):
        return "?"
    return str(sum(1 for r in recs if r.busy))


def _cell(v: float) -> str:
    return f"{v:,.1f}"


def _chart(groups: dict[tuple[float, str], list[RunRecord]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = sorted({s for s, _ in groups})
    strategies = sorted({st for _, st in groups})
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / max(len(strategies), 1)
    for i, st in enumerate(strategies):
        sp = [
            Spread.of(r.rows_per_core_s for r in groups.get((s, st), []) if r.correct)
            for s in scales
        ]
        values = [x.median or 0 for x in sp]
        err = [
            [v - (x.low if x.low is not None else v) for v, x in zip(values, sp, strict=True)],
            [(x.high if x.high is not None else v) - v for v, x in zip(values, sp, strict=True)],
        ]
        xs = [j + i * width for j in range(len(scales))]
        bars = ax.bar(xs, values, width, label=st, yerr=err, capsize=3)
        labels = [f"{v:,.0f}\nn={x.n}" if v else "" for v, x in zip(values, sp, strict=True)]
        ax.bar_label(bars, labels=labels, fontsize=7)
    ax.set_xticks([j + width * (len(strategies) - 1) / 2 for j in range(len(scales))])
    ax.set_xticklabels([f"scale {s:g}" for s in scales])
    ax.set_ylabel("rows / core / s (median, min–max, correct runs)")
    ax.set_title("Contest score by strategy")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
