"""`results/costs.md` and `costs.png`: the newest sitting of `contest bench costs` as
fitted lines, crossovers, measured points and timelines."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from pathlib import Path

from contest.benchmarks.costs.model import Line, crossover, fit, medians
from contest.infra.timeline import PHASE_OF
from contest.results.costs import BARE, CostRecord
from contest.results.sittings import REFERENCE
from contest.sitting import sittings

WHOLE = "whole"  # a run's jobs together: write + read, or DuckDB's one process
PHASES = list(PHASE_OF.values())


def table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(str(c) for c in row) + " |" for row in rows),
    ]


def runs(records: Sequence[CostRecord]) -> dict[str, list[tuple[float, float]]]:
    """Per contender, (rows, seconds) of each correct run as a whole: its jobs' seconds
    summed per (scale, round)."""
    whole: dict[tuple[str, float, int], list[CostRecord]] = {}
    for r in records:
        whole.setdefault((r.contender, r.scale, r.round), []).append(r)
    out: dict[str, list[tuple[float, float]]] = {}
    for (name, _, _), jobs in whole.items():
        if all(j.correct and j.seconds is not None for j in jobs):
            out.setdefault(name, []).append((jobs[0].rows, sum(j.seconds or 0 for j in jobs)))
    return out


def lines(records: Sequence[CostRecord]) -> dict[tuple[str, str], Line]:
    """The fitted line of each (contender, job), and of each contender's whole run."""
    points: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r in records:
        if r.correct and r.seconds is not None:
            points.setdefault((r.contender, r.job), []).append((r.rows, r.seconds))
    for name, pts in runs(records).items():
        points[(name, WHOLE)] = pts
    fitted = {key: fit(medians(pts)) for key, pts in points.items()}
    return {key: line for key, line in fitted.items() if line is not None}


def rows_per_scale(records: Sequence[CostRecord]) -> float:
    known = [r.rows / r.scale for r in records if r.rows and r.scale]
    return statistics.median(known) if known else 1.0


def render(records: Sequence[CostRecord]) -> str:
    out = [
        "# What a run costs, and from which size each contender wins",
        "",
        "Each contender at several scales of the same data, interleaved and rotated "
        "round by round, every result checked by the oracle (`contest bench costs`). Each "
        "job's median seconds are fitted as fixed + per-row x rows (least squares on "
        "relative error: the smallest scales set the fixed part); the fit's error is its "
        "largest miss of a median. A strategy's jobs are whole spark-submit (or Python) "
        "processes as the contest times them; DuckDB at its defaults is one Python "
        "process. Only correct runs count.",
        "",
    ]
    groups = sittings(records)
    if not groups:
        return "\n".join([*out, "No sitting yet."]) + "\n"
    return "\n".join([*out, *sitting_section(groups[-1])]) + "\n"


def sitting_section(records: Sequence[CostRecord]) -> list[str]:
    first = records[0]
    rounds = max(r.round for r in records)
    names = list(dict.fromkeys(r.contender for r in records))
    fitted = lines(records)
    per_scale = rows_per_scale(records)
    out = [
        f"## Sitting {first.sitting} ({len(names)} contenders, up to {rounds} rounds a scale)",
        "",
        "### Fitted lines",
        "",
    ]
    fits = []
    for (name, job), line in sorted(fitted.items(), key=lambda kv: names.index(kv[0][0])):
        fits.append(
            (
                name,
                job,
                f"{line.fixed_s:.2f}",
                f"{line.per_million_s:.3f}",
                f"{line.error:.0%}",
                line.points,
            )
        )
    out += table(("contender", "job", "fixed s", "s per M rows", "fit error", "scales"), fits)
    out += ["", f"### Where {REFERENCE} wins (whole runs)", ""]
    ours = fitted.get((REFERENCE, WHOLE))
    wins = []
    for name in names:
        theirs = fitted.get((name, WHOLE))
        if name in (REFERENCE, BARE) or ours is None or theirs is None:
            continue
        cross = crossover(ours, theirs)
        wins.append((name, "the same line" if cross is None else cross.says(per_scale)))
    out += table(("against", f"{REFERENCE} is faster"), wins) if wins else ["Not measured."]
    floor = fitted.get((BARE, WHOLE))
    if ours is not None and floor is not None:
        out += [
            "",
            f"{REFERENCE}'s fixed part is {ours.fixed_s:.1f} s, "
            f"{ours.fixed_s - floor.fixed_s:.1f} s above two bare Spark starts with the "
            f"same levers ({BARE}: {floor.fixed_s:.1f} s, a trivial job each), which is "
            "what a run on Spark cannot go below here.",
        ]
    out += ["", "### Measured: whole-run seconds, median [min-max] (n)", ""]
    by_name = runs(records)
    scales = sorted({r.scale for r in records})
    measured = []
    for scale in scales:
        rows = next(r.rows for r in records if r.scale == scale)
        cells: list[object] = [f"{scale:g}", f"{rows:,}"]
        for name in names:
            got = [s for n, s in by_name.get(name, []) if n == rows]
            cells.append(
                f"{statistics.median(got):.1f} [{min(got):.1f}-{max(got):.1f}] ({len(got)})"
                if got
                else "-"
            )
        measured.append(cells)
    out += table(("scale", "rows", *names), measured)
    smallest = scales[0] if scales else None
    out += ["", f"### Timelines at scale {smallest:g}: median seconds of each phase", ""]
    timelines = []
    for name in names:
        for job in dict.fromkeys(r.job for r in records if r.contender == name):
            mine = [
                r
                for r in records
                if r.contender == name and r.job == job and r.scale == smallest and r.correct
            ]
            if not mine:
                continue
            cells = [name, job, f"{statistics.median(r.seconds or 0 for r in mine):.2f}"]
            for phase in PHASES:
                got = [r.phases[phase] for r in mine if phase in r.phases]
                cells.append(f"{statistics.median(got):.2f}" if got else "-")
            timelines.append(cells)
    out += table(("contender", "job", "wall", *PHASES), timelines)
    out += [
        "",
        "Phases (contest/infra/timeline.py), each from the job's own marks: launch "
        "(spark-submit's script and launcher JVM), jvm (the driver JVM up to the Python "
        "driver), imports (the driver's imports and arguments), context (Spark's context "
        "and session), plan (the driver's work before the first task), tasks (first task "
        "launched to last stage done), finish (commit, publish), stop (the session's "
        "stop), exit (the processes' exit). A native job has no jvm or context; DuckDB's "
        "process prints no marks.",
    ]
    return out


def chart(records: Sequence[CostRecord], path: Path) -> None:
    """Whole-run seconds against rows, log-log: each contender's points and fitted line."""
    groups = sittings(records)
    if not groups:
        return
    import matplotlib  # deferred: matplotlib is slow to import; only the plots need it

    matplotlib.use("Agg")
    # deferred: matplotlib is slow to import; only the plots need it
    import matplotlib.pyplot as plt

    mine = groups[-1]
    fitted = lines(mine)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in runs(mine).items():
        shown = ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=12, label=name)
        line = fitted.get((name, WHOLE))
        if line is not None:
            low, high = min(p[0] for p in pts), max(p[0] for p in pts)
            xs = [low * (high / low) ** (i / 40) for i in range(41)]
            ax.plot(xs, [line.seconds(x) for x in xs], color=shown.get_facecolor()[0])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("input rows")
    ax.set_ylabel("seconds, whole run")
    ax.set_title("Fixed + per-row cost of each contender")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
