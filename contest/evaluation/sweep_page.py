"""A sweep's results page: each case's median and spread over its quiet, correct runs,
the verdict (a best case only when its range clears every other's), the best case's
settings as a config file, and a chart per varied setting. Pure over the sweep's
records, so `contest report` rebuilds it from a committed runs file."""

from __future__ import annotations

import json
import statistics
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contest.evaluation.report import Spread
from contest.evaluation.sweep import Sweep, case_key, case_label, case_settings
from contest.infra.noise import BUSY_RULE, NOISE_NOT_RECORDED
from contest.results.runs import RunRecord, cpu_models


@dataclass
class CaseSummary:
    label: str
    settings: dict[str, Any]
    runs: int
    correct: int
    median: float | None
    low: float | None
    high: float | None
    errors: list[str]
    busy: int = 0  # runs taken on a busy machine (timings suspect)
    unmeasured: int = 0  # runs from before per-job noise was recorded: not judged
    busy_only: bool = False  # every correct run was busy: the median is of those
    counted: int | None = None  # the runs the median is of (None: every correct one)

    @property
    def n(self) -> int:
        return self.correct if self.counted is None else self.counted

    @property
    def spread(self) -> Spread:
        return Spread(self.n, self.median, self.low, self.high)


def summarize(sweep: Sweep, records: list[RunRecord]) -> list[CaseSummary]:
    out = []
    for case in sweep.cases:
        keys = {case_key(sweep, case, r) for r in range(sweep.repeat)}
        recs = [r for r in records if r.case_key in keys]
        # A wrong result has no score; a busy run's is suspect: the median is of the
        # correct, quiet runs, and of the busy ones only when no run was quiet (marked).
        right = [r for r in recs if r.correct and r.rows_per_core_s]
        quiet = [r.rows_per_core_s or 0.0 for r in right if not r.busy]
        scores = quiet or [r.rows_per_core_s or 0.0 for r in right]
        out.append(
            CaseSummary(
                case_label(case),
                case_settings(sweep, case),
                len(recs),
                len(right),
                statistics.median(scores) if scores else None,
                min(scores, default=None),
                max(scores, default=None),
                [r.error for r in recs if r.error],
                sum(1 for r in recs if r.busy),
                busy_only=bool(scores) and not quiet,
                counted=len(scores),
                unmeasured=sum(1 for r in recs if not r.noise_recorded),
            )
        )
    return out


def render_table(summaries: list[CaseSummary]) -> str:
    lines = [
        "| case | runs | correct (n) | busy | median rows/core/s | min–max |",
        "|---|---|---|---|---|---|",
    ]
    for s in summaries:
        med = f"{s.median:,.0f}" if s.median else "-"
        rng = f"{s.low:,.0f}–{s.high:,.0f}" if s.low else "-"
        if s.n == 1:
            rng += " (1 run)"
        if s.busy_only:
            med += " (busy runs only)"
        note = f" (error: {s.errors[0][:80]})" if s.errors and not s.correct else ""
        busy = "?" if s.runs and s.unmeasured == s.runs else str(s.busy)
        if 0 < s.unmeasured < s.runs:
            busy += f" of {s.runs - s.unmeasured}"
        lines.append(f"| {s.label}{note} | {s.runs} | {s.correct} | {busy} | {med} | {rng} |")
    lines += [
        "",
        "busy: runs taken on a busy machine, left out of the medians unless every correct "
        f"run of the case was busy (marked). The one busy rule: {BUSY_RULE}. `?`: "
        f"{NOISE_NOT_RECORDED} (runs from before the records carried per-job noise, not "
        "judged by another window); `k of n`: of the runs that recorded it.",
    ]
    return "\n".join(lines)


@dataclass(frozen=True)
class Verdict:
    """The sweep's answer: the best case only where its runs beat every other case's
    beyond their spread (the README's rule: medians count only where min–max ranges do
    not overlap); `top` is the highest median either way, `text` says which it is."""

    best: CaseSummary | None
    top: CaseSummary | None
    text: str


def verdict(summaries: list[CaseSummary]) -> Verdict:
    ranked = sorted((s for s in summaries if s.median), key=lambda s: -(s.median or 0.0))
    if not ranked:
        return Verdict(None, None, "no case gave a correct result")
    top, rivals = ranked[0], ranked[1:]
    med = f"median {top.median:,.0f} rows/core/s"
    if not rivals:
        only = "the only case" if len(summaries) == 1 else "the only case with a correct result"
        return Verdict(top, top, f"best: {top.label} ({med}; {only})")
    single = [s for s in ranked if s.n < 2]
    if single:
        # A case may have run three times and kept one quiet run: say which it was.
        why = (
            "repeat the sweep on a quiet machine (busy runs are left out)"
            if any(s.correct > s.n for s in single)
            else "repeat the sweep (repeat = 3 or more)"
        )
        return Verdict(
            None,
            top,
            f"no significant difference: {top.label} has the highest median "
            f"({top.median:,.0f} rows/core/s) but {_which(single, ranked)} a single "
            f"counted run: {why}",
        )
    close = [r.label for r in rivals if top.spread.overlaps(r.spread)]
    if close:
        return Verdict(
            None,
            top,
            f"no significant difference: {top.label} has the highest median "
            f"({top.median:,.0f} rows/core/s) but its min–max range overlaps {', '.join(close)}",
        )
    return Verdict(
        top, top, f"best: {top.label} ({med}; its min–max range is above every other case's)"
    )


def _which(single: list[CaseSummary], ranked: list[CaseSummary]) -> str:
    """Names the cases short enough to read: labels carry commas of their own."""
    if len(single) == len(ranked):
        return "every case has"
    if len(single) == 1:
        return f"{single[0].label} has"
    return f"{len(single)} cases have"


def best_case(summaries: list[CaseSummary]) -> CaseSummary | None:
    """The case better than every other beyond the spread of the runs, or None."""
    return verdict(summaries).best


def settings_toml(settings: Mapping[str, Any]) -> str:
    """Dotted settings (`write.parallelism = 4`) as a TOML config file `load_config`
    reads: top-level keys first, then one table per section."""

    def scalar(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, list):
            return "[" + ", ".join(scalar(x) for x in v) + "]"
        return json.dumps(str(v))

    top = [f"{k} = {scalar(v)}" for k, v in sorted(settings.items()) if "." not in k]
    sections: dict[str, list[str]] = {}
    for key, value in sorted(settings.items()):
        if "." in key:
            section, name = key.split(".", 1)
            name = name if "." not in name else json.dumps(name)
            sections.setdefault(section, []).append(f"{name} = {scalar(value)}")
    blocks = ["\n".join(top)] if top else []
    blocks += ["\n".join([f"[{k}]", *v]) for k, v in sections.items()]
    return "\n\n".join(blocks) + "\n"


def best_toml(sweep: Sweep, best: CaseSummary) -> str:
    """The best case as a config file: only the settings the sweep set over its base
    strategy's preset (its [base] and the case), not this shell's ports and folders."""
    return (
        f"# Best case of sweep {sweep.name}: {best.label}, median {best.median:,.0f} "
        f"rows/core/s over {best.n} correct run(s), min-max "
        f"{best.low:,.0f}-{best.high:,.0f}.\n"
        f"# Settings over strategy {sweep.strategy}'s preset; use with\n"
        f"#   contest evaluate --strategy {sweep.strategy} --config best.toml\n"
        + settings_toml(best.settings)
    )


def provenance(records: list[RunRecord]) -> str:
    """Where and when the runs were taken: a sweep compares only within its own runs."""
    if not records:
        return "No run recorded yet."
    whens = sorted(r.when for r in records if r.when)
    commits = sorted({r.git_commit for r in records if r.git_commit})
    cpus = cpu_models(records)
    span = f"{whens[0]} to {whens[-1]}" if whens else "times not recorded"
    return (
        f"Runs {span}; commit {', '.join(commits) or '?'}; "
        f"machine `{records[0].machine_id or '?'}`, CPU: {' / '.join(cpus) or 'not recorded'}."
    )


def runs_a_case(repeat: int, summaries: list[CaseSummary]) -> str:
    """`3 run(s) a case`, or, while a sweep is still being run (its cases hold unequal
    runs), how many it has, and which of the file's cases (added since) never ran: a
    page rebuilt from records must not read as a finished sweep of its file."""
    counts = [s.runs for s in summaries]
    ran = [c for c in counts if c]
    text = f"{repeat} run(s) a case"
    if ran and (min(ran) != max(ran) or max(ran) != repeat):
        done = sum(ran)
        text = (
            f"in progress: {done} of {repeat * len(ran)} runs recorded "
            f"({min(ran)}-{max(ran)} a case), so far"
        )
    if unrun := len(counts) - len(ran):
        text += f"; {unrun} case(s) of the file not run"
    return text


def write_outputs(
    sweep: Sweep,
    summaries: list[CaseSummary],
    out_dir: Path,
    env: Mapping[str, str],
    records: list[RunRecord] | None = None,
) -> dict[str, Path]:
    page = out_dir / "README.md"
    paths = {"table": page}
    answer = verdict(summaries)
    best = answer.best
    lines = [
        f"# Sweep {sweep.name}",
        "",
        f"Strategy `{sweep.strategy}`, scale {sweep.scale:g}, "
        f"{runs_a_case(sweep.repeat, summaries)}; rows/core/s of correct runs only.",
        *([] if records is None else ["", provenance(records)]),
        "",
        render_table(summaries),
        "",
    ]
    best_file = out_dir / "best.toml"
    if best:
        paths["best"] = best_file
        best_file.write_text(best_toml(sweep, best))
        lines.append(
            f"**{answer.text}**. Its settings over the base: `{best_file.name}` "
            f"(`contest evaluate --strategy {sweep.strategy} --config {best_file.name}`)."
        )
    else:
        lines.append(f"**{answer.text}**.")
        if best_file.exists() and best_file.read_text().lower().startswith("# best case of sweep"):
            best_file.unlink()  # this tool's own answer from fewer runs: no longer true
    for key in sweep.varied:
        png = out_dir / f"{key.replace('.', '_')}.png"
        if _plot(summaries, key, png):
            paths[key] = png
            lines += ["", f"![{key}]({png.name})"]
    page.write_text("\n".join(lines) + "\n")
    return paths


def _plot(summaries: list[CaseSummary], key: str, path: Path) -> bool:
    fig = sweep_figure(summaries, key)
    if fig is None:
        return False
    # deferred: matplotlib is slow to import; only the plots need it
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def sweep_figure(summaries: list[CaseSummary], key: str) -> Any:
    """Median rows/core/s against `key`'s values, each point with its min–max whisker
    and n, on a y axis from zero: a few percent between single runs stays a few
    percent on the chart. Cases that also differ in other settings are series of
    their own, side by side. The preset (the case that changes no setting) is plotted
    too, at the left, as what each value is compared with; the title and the x label
    are wrapped, never cut, and the legend sits outside the data."""
    cases = [s for s in summaries if key in s.settings and s.median]
    if not cases:
        return None
    presets = [s for s in summaries if not s.settings and s.median]
    import matplotlib  # deferred: matplotlib is slow to import; only the plots need it

    matplotlib.use("Agg")
    # deferred: matplotlib is slow to import; only the plots need it
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter

    labels = (["preset"] if presets else []) + sorted(
        {str(s.settings[key]) for s in cases}, key=_value_order
    )

    def at(s: CaseSummary) -> str:
        return str(s.settings[key]) if key in s.settings else "preset"

    series: dict[str, list[CaseSummary]] = {}
    for s in presets + cases:
        rest = ", ".join(f"{k}={v}" for k, v in sorted(s.settings.items()) if k != key)
        series.setdefault(rest, []).append(s)
    fig, ax = plt.subplots(figsize=(7.4 if len(series) > 1 else 6.4, 4.0))
    step = 0.6 / max(len(series), 1)
    for i, (name, members) in enumerate(series.items()):
        shift = (i - (len(series) - 1) / 2) * step
        xs = [labels.index(at(s)) + shift for s in members]
        ys = [s.median or 0.0 for s in members]
        err = [
            [y - (s.low or y) for y, s in zip(ys, members, strict=True)],
            [(s.high or y) - y for y, s in zip(ys, members, strict=True)],
        ]
        ax.errorbar(xs, ys, yerr=err, fmt="o", capsize=4, label=name or "preset")
        for x, y, s in zip(xs, ys, members, strict=True):
            ax.annotate(f"n={s.n}", (x, y), textcoords="offset points", xytext=(6, -3), fontsize=7)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels)
    ax.set_xlim(-0.6, len(labels) - 0.4)
    ax.set_ylim(0, max(s.high or s.median or 0.0 for s in presets + cases) * 1.15)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("\n".join(textwrap.wrap(key, 60)))
    ax.set_ylabel("rows/core/s (median, min–max)")
    ax.set_title(
        "\n".join(textwrap.wrap(f"rows/core/s against {key} (correct runs; n per point)", 55)),
        fontsize=10,
    )
    ax.grid(alpha=0.3, axis="y")
    if len(series) > 1:
        labelled = [
            "\n".join(textwrap.wrap(str(h.get_label()), 28))
            for h in ax.get_legend_handles_labels()[0]
        ]
        ax.legend(
            ax.get_legend_handles_labels()[0],
            labelled,
            fontsize=7,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
        )
    fig.tight_layout()
    return fig


def _value_order(x: str) -> tuple[bool, float, str]:
    """Numbers in numeric order before any other value."""
    try:
        return (False, float(x), x)
    except ValueError:
        return (True, 0.0, x)
