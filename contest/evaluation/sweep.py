"""`contest sweep`: parameter tuning as a tool (the design's parameter tuning: README, "Sweeps").

A sweep file names a scale, repetitions, a strategy and the settings to vary, as a
grid or as explicit cases. Each case runs as `contest evaluate` does, so a fast
but wrong case is recorded as wrong and never ranked. Records are appended as JSON
lines; a case already recorded with the same settings is skipped, so an
interrupted sweep resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import statistics
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from contest.config import Config, load_config, override
from contest.errors import ConfigError, UsageError, toml_error
from contest.evaluation.progress import is_terminal
from contest.evaluation.report import Spread
from contest.infra.machine import check_local_cores, cpu_model, machine_id
from contest.infra.pagecache import read_ahead
from contest.results.runs import RunRecord, append_records, cpu_models, load_records, other_cpu

TOP_KEYS = {"name", "scale", "repeat", "strategy", "seed", "cores", "data", "grid", "case", "base"}


@dataclass
class Sweep:
    name: str
    scale: float
    repeat: int
    strategy: str
    seed: int
    cores: int | None
    data: str | None
    base: dict[str, Any]
    cases: list[dict[str, Any]] = field(default_factory=list)
    varied: list[str] = field(default_factory=list)
    # The command line's --set: under every case (where the run happens, not what varies).
    overrides: dict[str, Any] = field(default_factory=dict)


def load_sweep(
    path: Path, env: Mapping[str, str], overrides: Mapping[str, Any] | None = None
) -> Sweep:
    """Parse and check a sweep file; every case is validated before anything runs."""
    from contest.evaluation.strategies import is_strategy, strategy_names

    try:
        raw = tomllib.loads(path.read_text())
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(toml_error(path, exc)) from None
    unknown = sorted(set(raw) - TOP_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key {unknown[0]!r} (known: "
            f"{', '.join(sorted(TOP_KEYS))}; settings go under [grid], [[case]] "
            "or [base])"
        )
    strategy = raw.get("strategy", "optimized")
    if not is_strategy(strategy):
        raise ConfigError(
            f"{path}: strategy {strategy!r} is not one of "
            f"{', '.join(strategy_names(variants=True))}"
        )
    scale = raw.get("scale")
    if raw.get("data") is None and (not isinstance(scale, (int, float)) or scale <= 0):
        raise ConfigError(f"{path}: scale must be a positive number (or give data)")
    repeat = raw.get("repeat", 1)
    if not isinstance(repeat, int) or repeat < 1:
        raise ConfigError(f"{path}: repeat must be a positive integer, got {repeat!r}")
    sweep = Sweep(
        name=str(raw.get("name") or path.stem),
        scale=float(scale or 0),
        repeat=repeat,
        strategy=strategy,
        seed=int(raw.get("seed", 2022)),
        cores=raw.get("cores"),
        data=raw.get("data"),
        base=dict(raw.get("base", {})),
        overrides=dict(overrides or {}),
    )
    grid = raw.get("grid", {})
    explicit = raw.get("case", [])
    if not grid and not explicit:
        raise ConfigError(f"{path}: no [grid] and no [[case]]: nothing to vary")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{path}: grid.{key} must be a non-empty list of values")
    keys = list(grid)
    if keys:
        for combo in itertools.product(*(grid[k] for k in keys)):
            sweep.cases.append(dict(zip(keys, combo, strict=True)))
    for case in explicit:
        if not isinstance(case, dict):
            raise ConfigError(f"{path}: each [[case]] must be a table")
        sweep.cases.append(dict(case))
    sweep.varied = sorted({k for c in sweep.cases for k in c if k != "label"})
    for case in sweep.cases:
        case_config(sweep, case, env)  # raises naming the key
    return sweep


def case_settings(sweep: Sweep, case: Mapping[str, Any]) -> dict[str, Any]:
    return {**sweep.base, **{k: v for k, v in case.items() if k != "label"}}


def case_config(sweep: Sweep, case: Mapping[str, Any], env: Mapping[str, str]) -> Config:
    from contest.evaluation.strategies import preset

    cfg = load_config(env=env, overrides=sweep.overrides, preset=preset(sweep.strategy))
    try:
        return override(cfg, case_settings(sweep, case))
    except ConfigError as exc:
        raise ConfigError(f"sweep case {case_label(case)}: {exc}") from None


def case_label(case: Mapping[str, Any]) -> str:
    if "label" in case:
        return str(case["label"])
    return ", ".join(f"{k}={v}" for k, v in case.items()) or "defaults"


def case_key(sweep: Sweep, case: Mapping[str, Any], rep: int) -> str:
    return json.dumps(
        {
            "strategy": sweep.strategy,
            "scale": sweep.scale,
            "data": sweep.data,
            "seed": sweep.seed,
            "cores": sweep.cores,
            "settings": case_settings(sweep, case),
            "rep": rep,
        },
        sort_keys=True,
    )


def recorded(path: Path) -> dict[str, RunRecord]:
    """The sweep's records by case key (the newest of each)."""
    if not path.exists():
        return {}
    return {r.case_key: r for r in load_records(path) if r.case_key}


def run_sweep(
    sweep: Sweep,
    out_dir: Path,
    env: Mapping[str, str],
    work_dir: str | None = None,
    say: Callable[[str], None] = print,
    master: str | None = None,
) -> list[RunRecord]:
    import os

    from contest.evaluation.evaluate import evaluate

    check_local_cores(sweep.cores, master, os.cpu_count())  # refused once, not per case
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = out_dir / "runs.jsonl"
    done = recorded(runs)
    keys = {case_key(sweep, c, i) for c in sweep.cases for i in range(sweep.repeat)}
    why = resume_refusal([r for k, r in done.items() if k in keys], cpu_model())
    if why:
        raise UsageError(f"{runs}: {why}")
    todo = [
        (sweep.cases[i], r)
        for i, r in sweep_order(len(sweep.cases), sweep.repeat)
        if case_key(sweep, sweep.cases[i], r) not in done
    ]
    skipped = len(sweep.cases) * sweep.repeat - len(todo)
    if skipped:
        say(f"{skipped} run(s) already recorded in {runs}: skipped")
    bar = tqdm(total=len(todo), desc=f"sweep {sweep.name}", unit="runs", disable=not is_terminal())
    sweep_started = time.perf_counter()
    for i, (case, rep) in enumerate(todo):
        label = case_label(case)
        say(
            f"case {label} (run {rep + 1}/{sweep.repeat}); "
            + sweep_progress(i, len(todo), time.perf_counter() - sweep_started)
        )
        started = time.perf_counter()
        try:
            cfg = case_config(sweep, case, env)
            if work_dir:
                cfg = dataclasses.replace(cfg, work_dir=work_dir)
            data = case_data(sweep, cfg, say)
            # Every run starts with the batches in the page cache, as in a peer sitting:
            # the first case's first run would otherwise read them colder than the rest.
            read_ahead(data, say)
            rec = evaluate(
                cfg,
                sweep.strategy,
                data=data,
                scale=sweep.scale or None,
                seed=sweep.seed,
                cores=sweep.cores,
                master=master,
                say=say,
            )
        except Exception as exc:  # recorded, and the sweep goes on
            rec = RunRecord(
                sweep.strategy,
                run_id=RunRecord.new_id(),
                error=f"{exc.__class__.__name__}: {exc}",
                total_s=round(time.perf_counter() - started, 3),
                when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                machine_id=machine_id(),
            )
        rec.case_key, rec.case, rec.rep = case_key(sweep, case, rep), label, rep
        rec.settings = case_settings(sweep, case)
        append_records(runs, [rec])
        bar.set_postfix_str(label, refresh=False)
        bar.update(1)
    bar.close()
    return [r for r in recorded(runs).values() if r.case_key in keys]


def case_data(sweep: Sweep, cfg: Config, say: Callable[[str], None]) -> Path:
    """The batches a case's run reads: the sweep's folder, or its workload's generated
    data (cached, so the cases of one workload share it)."""
    from contest.evaluation.data_cache import cached_data
    from contest.evaluation.strategies import DEFAULT_SCALE

    if sweep.data:
        return Path(sweep.data)
    return cached_data(cfg, sweep.scale or DEFAULT_SCALE, sweep.seed, say)


def resume_refusal(done: list[RunRecord], here: str) -> str | None:
    """Why a sweep cannot resume over the runs it recorded, or None: they ran on
    another CPU (a VM keeps its id when it moves host), so its cases would compare
    runs of two machines."""
    where = other_cpu(done, here)
    return f"the sweep's recorded runs {where}: give another --results folder" if where else None


def sweep_order(cases: int, repeat: int) -> list[tuple[int, int]]:
    """(case, run) in the order they run: interleaved, every case's first run before
    any case's second, the cases rotated each time (round_order), so each case sees the
    machine as the others do and none always runs first."""
    from contest.evaluation.strategies import round_order

    return [(i, r) for r in range(repeat) for i in round_order(list(range(cases)), r + 1)]


def sweep_progress(done: int, total: int, elapsed_s: float) -> str:
    """`sweep 3/8 runs done, 4.0 min elapsed, ~6.7 min left`: the sweep's progress as
    a line of its own, so that a log (not only a terminal's bar) shows it."""
    text = f"sweep {done}/{total} runs done, {elapsed_s / 60:.1f} min elapsed"
    if done:
        text += f", ~{elapsed_s / done * (total - done) / 60:.1f} min left"
    return text


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
        lines.append(f"| {s.label}{note} | {s.runs} | {s.correct} | {s.busy} | {med} | {rng} |")
    if any(s.busy for s in summaries):
        lines += [
            "",
            "busy: runs taken on a busy machine (other work or CPU steal during a job): "
            "left out of the medians, unless every correct run of the case was busy "
            "(marked).",
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


SCALE_SUFFIX = "-scale-"


def at_scale(sweep: Sweep, scale: float) -> Sweep:
    """The sweep at another scale: its folder and name say so (`peer-paimon-scale-1`)."""
    return dataclasses.replace(sweep, scale=scale, name=f"{sweep.name}{SCALE_SUFFIX}{scale:g}")


def split_name(folder: str) -> tuple[str, float | None]:
    """A results folder's sweep file stem and the scale it ran at, when not the file's."""
    stem, sep, scale = folder.rpartition(SCALE_SUFFIX)
    try:
        return (stem, float(scale)) if sep and stem else (folder, None)
    except ValueError:
        return folder, None


def as_recorded(sweep: Sweep, scale: float | None, records: list[RunRecord]) -> Sweep:
    """The sweep as its records ran it (`--scale`, `--repeat` are not in its file): a
    page rebuilt from them must count every run."""
    if scale is not None:
        sweep = at_scale(sweep, scale)
    reps = [r.rep + 1 for r in records if r.rep is not None]
    return dataclasses.replace(sweep, repeat=max([sweep.repeat, *reps]))


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
        f"Strategy `{sweep.strategy}`, scale {sweep.scale:g}, {sweep.repeat} run(s) a case;"
        " rows/core/s of correct runs only.",
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
    import textwrap

    cases = [s for s in summaries if key in s.settings and s.median]
    if not cases:
        return None
    presets = [s for s in summaries if not s.settings and s.median]
    import matplotlib

    matplotlib.use("Agg")
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
