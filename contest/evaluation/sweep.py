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
import os
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from contest.config import Config, load_config, override
from contest.engines import operator_refusal
from contest.errors import ConfigError, UsageError, toml_error
from contest.evaluation.data_cache import cached_data
from contest.evaluation.evaluate import evaluate
from contest.evaluation.progress import is_terminal
from contest.evaluation.strategies import (
    DEFAULT_SCALE,
    is_strategy,
    preset,
    round_order,
    strategy_names,
)
from contest.infra.machine import check_local_cores, cpu_model, machine_id
from contest.infra.pagecache import read_ahead
from contest.results.runs import RunRecord, append_records, load_records, other_cpu

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
    path: Path,
    env: Mapping[str, str],
    overrides: Mapping[str, Any] | None = None,
    data: str | None = None,
) -> Sweep:
    """Parse and check a sweep file; every case is validated before anything runs.
    `data`: a folder every case runs on instead of the file's (`--data`)."""
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
    if data:
        raw["data"] = data
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
        # A bad key, or an operator the strategy's format cannot merge: refused here,
        # before any data is generated, not as a failed run at the end of each case.
        why = operator_refusal(case_config(sweep, case, env))  # raises naming the key
        if why:
            raise ConfigError(f"{path}: sweep case {case_label(case)}: {why}")
    return sweep


def case_settings(sweep: Sweep, case: Mapping[str, Any]) -> dict[str, Any]:
    return {**sweep.base, **{k: v for k, v in case.items() if k != "label"}}


def case_config(sweep: Sweep, case: Mapping[str, Any], env: Mapping[str, str]) -> Config:
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
    return [(i, r) for r in range(repeat) for i in round_order(list(range(cases)), r + 1)]


def sweep_progress(done: int, total: int, elapsed_s: float) -> str:
    """`sweep 3/8 runs done, 4.0 min elapsed, ~6.7 min left`: the sweep's progress as
    a line of its own, so that a log (not only a terminal's bar) shows it."""
    text = f"sweep {done}/{total} runs done, {elapsed_s / 60:.1f} min elapsed"
    if done:
        text += f", ~{elapsed_s / done * (total - done) / 60:.1f} min left"
    return text


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
