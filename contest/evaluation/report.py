"""Benchmark records: medians, ratios, the results table and chart."""

from __future__ import annotations

import statistics
import textwrap
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contest.infra.noise import BUSY_RULE, NOISE_NOT_RECORDED
from contest.results.intervals import Interval
from contest.results.runs import RunRecord, load_records
from contest.results.sittings import REFERENCE, is_defaults, kept, newest, summarize

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
        spreads[name] = Spread.of(r.rows_per_core_s for r in good)
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
        "runs taken on a busy machine, whose timings are suspect.",
        f"The one busy rule: {BUSY_RULE}.",
        f"`?`: {NOISE_NOT_RECORDED} (runs from before the records carried per-job noise, "
        "not judged by another window); `2 of 3`: of the runs that recorded it.",
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
    sittings = load_sittings(out_dir)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("| scale"))
    lines[at:at] = [
        "## Headline",
        "",
        "Only from sittings (`contest bench peers --results results`): the newest at each "
        "scale, data shape and codec. `optimized`'s median rows/core/s over the sitting's "
        "quiet, correct rounds with its distribution-free interval, and its ratio to the "
        "fastest peer of the same sitting (a format's own merge or LakeSoul's stock "
        "libraries, not the harness's own baselines), taken round by round (page: "
        "`peer_sittings.md`, each sitting's full disclosure beside it). Each line names "
        "its sitting's CPU: absolute figures differ between machines (and between hosts "
        "under one VM id), so only a sitting's own ratios compare.",
        "",
        *sitting_headlines(sittings),
        "",
        "## History: every published run, pooled (not a comparison)",
        "",
        "Medians over every published run of a strategy, across commits, sittings and "
        "machine loads: how the figures moved, not how the strategies compare.",
        "",
    ]
    chart = out_dir / "rows_per_core_s.png"
    if sittings:
        _chart(chart_groups(sittings), chart, SITTING_TITLE)
    else:
        _chart(groups, chart, HISTORY_TITLE)
    lines += ["", f"![rows per core per second]({chart.name})", ""]
    notes = out_dir / "NOTES.md"
    if notes.exists():
        lines += [notes.read_text().rstrip(), ""]
    readme = out_dir / "README.md"
    readme.write_text("\n".join(lines))
    return readme, chart


HEADLINE_STRATEGY = REFERENCE
SITTING_TITLE = (
    "Contest score, newest sitting per scale: median, min–max over its quiet, correct rounds, n"
)
HISTORY_TITLE = (
    "History (every published run pooled, not a comparison): median, min–max whisker, "
    "n correct runs"
)
PREFERRED_SHAPE = "contest / contest files"


def load_sittings(folder: Path) -> list[RunRecord]:
    """The published sittings' runs (`peer_sittings.jsonl`), none when not there."""
    path = folder / "peer_sittings.jsonl"
    return load_records(path) if path.is_file() else []


def _score(iv: Interval) -> str:
    if iv.n < 2:
        return f"**{iv.median:,.0f} rows/core/s** (single run)"
    return (
        f"**{iv.median:,.0f} rows/core/s** [{iv.low:,.0f}–{iv.high:,.0f}] n={iv.n} "
        f"({iv.confidence:.0%})"
    )


def sitting_headlines(records: Sequence[RunRecord]) -> list[str]:
    """One headline line per (scale, data shape, codec), from its newest sitting only:
    optimized's median with its interval and optimized / the fastest peer of
    that sitting, round by round. No sitting: no headline figure, said in one line."""
    if not records:
        return [
            "- no sitting published yet: no headline figure (`contest bench peers "
            "--results results` makes one); the pooled runs are history."
        ]
    lines = []
    for (scale, shape, codec), recs in sorted(
        newest(records).items(), key=lambda kv: (kv[0][0] or 0.0, kv[0][1], kv[0][2])
    ):
        s = summarize(recs)
        ref = s.row(REFERENCE)
        where = f"scale {scale:g}, {shape}, codec {codec}" if scale is not None else shape
        if ref is None or ref.score is None:
            lines.append(f"- {where}: no quiet, correct `{REFERENCE}` run (sitting `{s.sitting}`)")
            continue
        peer = s.fastest_peer
        versus = (
            f"; {REFERENCE} / the fastest of the sitting's {s.peers} peers ({peer.strategy}):"
            f" {peer.ratio.text()}"
            if peer is not None and peer.ratio is not None
            else ""
        )
        lines.append(f"- {where}: {_score(ref.score)}{versus} (sitting `{s.sitting}`, {s.cpu})")
    return lines


def chart_groups(records: Sequence[RunRecord]) -> dict[tuple[float, str], list[RunRecord]]:
    """Per scale, the kept runs of its newest sitting on the harness's own data shape
    with each strategy's preset codec (else its newest sitting of any shape); each
    strategy's preset only (`:defaults` rows are on the sitting's page)."""
    by_scale: dict[float, list[RunRecord]] = {}
    for (scale, shape, codec), recs in sorted(
        newest(records).items(), key=lambda kv: kv[1][0].sitting or ""
    ):
        if scale is None:
            continue
        preferred = shape == PREFERRED_SHAPE and codec == "preset"
        if preferred or scale not in by_scale:
            by_scale[scale] = recs
    out: dict[tuple[float, str], list[RunRecord]] = defaultdict(list)
    for scale, recs in by_scale.items():
        for strategy, runs in kept(recs).items():
            if not is_defaults(strategy):  # a peer's second row: the sitting page's table
                out[(scale, strategy)] = list(runs.values())
    return out


def _busy_cell(recs: Sequence[RunRecord]) -> str:
    """How many runs were on a busy machine by the per-job noise; `?` when none recorded
    it, `k of n` when only n did."""
    measured = [r for r in recs if r.noise_recorded]
    if not measured:
        return "?"
    busy = str(sum(1 for r in measured if r.busy))
    return busy if len(measured) == len(recs) else f"{busy} of {len(measured)}"


def _cell(v: float) -> str:
    return f"{v:,.1f}"


def _chart(groups: dict[tuple[float, str], list[RunRecord]], path: Path, title: str) -> None:
    # deferred: matplotlib is slow to import; only the plots need it
    import matplotlib.pyplot as plt

    fig = chart_figure(groups, title)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def chart_figure(
    groups: dict[tuple[float, str], list[RunRecord]], title: str = HISTORY_TITLE
) -> Any:
    """One panel per scale, each with its own axis from zero (a scale-0.01 bar does not
    vanish beside scale 1's): a horizontal bar per strategy (names on the left, never
    over each other), its min–max whisker, and `median (n=N)` beside it."""
    import matplotlib  # deferred: matplotlib is slow to import; only the plots need it

    matplotlib.use("Agg")
    # deferred: matplotlib is slow to import; only the plots need it
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    scales = sorted({s for s, _ in groups})
    strategies = sorted({st for _, st in groups}, reverse=True)  # top-down alphabetical
    fig, axes = plt.subplots(
        1,
        max(len(scales), 1),
        figsize=(1.8 + 4.2 * max(len(scales), 1), 0.9 + 0.42 * max(len(strategies), 1)),
        sharey=True,
        squeeze=False,
    )
    ys = list(range(len(strategies)))
    for ax, scale in zip(axes[0], scales, strict=False):
        sp = [
            Spread.of(r.rows_per_core_s for r in groups.get((scale, st), []) if r.correct)
            for st in strategies
        ]
        values = [x.median or 0.0 for x in sp]
        err = [
            [v - (x.low if x.low is not None else v) for v, x in zip(values, sp, strict=True)],
            [(x.high if x.high is not None else v) - v for v, x in zip(values, sp, strict=True)],
        ]
        colors = ["tab:orange" if st == "optimized" else "tab:blue" for st in strategies]
        ax.barh(ys, values, 0.6, xerr=err, capsize=3, color=colors, ecolor="black")
        top = max((x.high or 0.0 for x in sp), default=0.0) or 1.0
        for y, x, st in zip(ys, sp, strategies, strict=True):
            if x.median is None:
                why = " no correct run" if groups.get((scale, st)) else " not run"
                ax.text(0, y, why, va="center", fontsize=7, color="gray")
                continue
            ax.text(
                (x.high or x.median) + top * 0.02,
                y,
                f"{x.median:,.0f} (n={x.n})",
                va="center",
                fontsize=7,
            )
        ax.set_xlim(0, top * 1.45)
        ax.set_title(f"scale {scale:g}")
        ax.set_xlabel("rows/core/s")
        ax.grid(alpha=0.3, axis="x")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1000:g}k" if v else "0"))
    axes[0][0].set_yticks(ys)
    axes[0][0].set_yticklabels(strategies)
    # Wrapped to the figure's width (one panel is narrower than the title), the figure
    # taller by the lines it wraps to.
    wrapped = textwrap.fill(title, width=int(14 * fig.get_figwidth()))
    fig.set_figheight(fig.get_figheight() + 0.25 * wrapped.count("\n"))
    fig.suptitle(wrapped, fontsize=10)
    fig.tight_layout()
    return fig
