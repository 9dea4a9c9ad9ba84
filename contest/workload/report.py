"""A workload's records rendered: a markdown page (every phase, and the degradation
rate per strategy with and without compaction) and charts beside it: read time
against batches applied (the longevity curve, compactions marked), write time per
batch, files per bucket."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contest.infra.noise import BUSY_RULE
from contest.results.intervals import Interval
from contest.results.workloads import PhaseRecord, head_reads, read_kind
from contest.workload.life import life_table
from contest.workload.metrics import (
    degradation_between_compactions,
    degradation_interval,
    degradation_overall,
)


def by_run(records: Sequence[PhaseRecord]) -> dict[tuple[str, str], list[PhaseRecord]]:
    """(run id, lane) -> its phases in order: a lane is a strategy, with its maintenance
    policy where the run named them (`delta-rs (every:20)`: each its own table)."""
    out: dict[tuple[str, str], list[PhaseRecord]] = defaultdict(list)
    for r in records:
        out[(r.run_id, r.lane)].append(r)
    return {k: sorted(v, key=lambda r: r.step) for k, v in out.items()}


def degradation(
    phases: Sequence[PhaseRecord], field: str = "seconds"
) -> tuple[float | None, float | None]:
    """(overall, between compactions) degradation rates of a run's plain reads, of
    their process's seconds or (`job_seconds`) the read's own."""
    kinds = ["skipped" if p.skipped else p.phase for p in phases]  # no compaction ran
    values = [getattr(p, field) if p.phase == "read" and p.ok else None for p in phases]
    return degradation_overall(kinds, values), degradation_between_compactions(kinds, values)


def change_interval(phases: Sequence[PhaseRecord]) -> Interval | None:
    """The median change between successive reads (compactions apart) and its interval."""
    kinds = ["skipped" if p.skipped else p.phase for p in phases]
    values = [p.seconds if p.phase == "read" and p.ok else None for p in phases]
    return degradation_interval(kinds, values)


def _interval(iv: Interval | None) -> str:
    """`+1.2% [-0.5%, +3.0%] n=7 (98%)`; one pair: `(single pair)`."""
    if iv is None:
        return "-"
    if iv.n < 2:
        return f"{_pct(iv.median)} (single pair)"
    return f"{_pct(iv.median)} [{_pct(iv.low)}, {_pct(iv.high)}] n={iv.n} ({iv.confidence:.0%})"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:+.1f}%"


def _n(v: float | int | None, fmt: str = "{:,.3f}") -> str:
    return "-" if v is None else fmt.format(v)


def most_noise(measured: Sequence[PhaseRecord]) -> tuple[float, float, float]:
    """The highest other-work mean share, 2-s peak share and steal over phases whose
    noise was measured."""
    return (
        max((r.outside_share or 0.0 for r in measured), default=0.0),
        max((r.peak_outside_share or 0.0 for r in measured), default=0.0),
        max((r.steal_share or 0.0 for r in measured), default=0.0),
    )


def noise_lines(records: Sequence[PhaseRecord]) -> list[str]:
    """What else the machine did during the phases' jobs, and which were busy (none
    for lines from before noise was measured)."""
    measured = [r for r in records if r.outside_share is not None]
    if not measured:
        return []
    busy = [r for r in measured if r.busy]
    mean, peak, steal = most_noise(measured)
    return [
        f"Noise measured during {len(measured)} phases' jobs (other work's share of the "
        f"CPUs, contest/infra/noise.py): mean at most {mean:.1%}, 2-s peak at most "
        f"{peak:.0%}, steal at most {steal:.1%}; {len(busy)} busy "
        f"(marked in the phases table; the one rule: {BUSY_RULE}).",
        "",
    ]


def markdown(workload: str, records: Sequence[PhaseRecord], charts: Sequence[str]) -> str:
    runs = by_run(records)
    lines = [f"# Workload `{workload}`", ""]
    # Each run's own conditions (a page holds every run of the workload).
    ids = list(dict.fromkeys(r.run_id for r in records))
    for run_id in ids:
        mine = [r for r in records if r.run_id == run_id]
        loads = [r.load1 for r in mine if r.load1 is not None]
        lines += [
            (f"Run {run_id}: m" if len(ids) > 1 else "M")
            + f"achine {mine[0].machine_id}, scale {mine[0].scale}, commit "
            f"{mine[0].git_commit}; 1-minute load during the phases "
            f"{min(loads, default=0):.1f}-{max(loads, default=0):.1f} (a shared machine: "
            "timings indicative only).",
            "",
        ]
        lines += noise_lines(mine)
    lines += auto_lines(runs)
    lines += summary_table(runs)
    lines += [
        "## Degradation rate",
        "",
        "LST-Bench's definition: the mean relative change between successive reads; "
        "'overall' counts every pair, 'between compactions' leaves out pairs a "
        "compaction separates; of the read process's seconds, and of the read's own "
        "(`job s`: its job's figure, JVM and Spark start and stop left out). How sure: "
        "the median change between successive reads (compactions apart) with its "
        "distribution-free interval over the run's own read pairs.",
        "",
        "| run | strategy | reads | all correct | overall | between compactions "
        "| overall, job s | between compactions, job s | median change [interval] |",
        "|---|---|---:|---|---:|---:|---:|---:|---|",
    ]
    for (run_id, strategy), phases in runs.items():
        reads = [
            p
            for p in phases
            if p.phase in ("read", "concurrent-read", "changes") and not p.skipped and not p.refused
        ]
        overall, between = degradation(phases)
        job_overall, job_between = degradation(phases, "job_seconds")
        correct = all(p.correct for p in reads) and all(p.ok for p in phases)
        state = "yes" if correct else "NO"
        if any(p.phase == "refused" for p in phases):
            state = "refused"
        lines.append(
            f"| {run_id} | {strategy} | {len(reads)} | {state} | "
            f"{_pct(overall)} | {_pct(between)} | {_pct(job_overall)} | {_pct(job_between)} "
            f"| {_interval(change_interval(phases))} |"
        )
    lines += [
        "",
        "## Phases",
        "",
        "| run | strategy | step | phase | batches | applied | seconds | job s | rows "
        "| files/bucket | stored MB | peak RSS MB | version | correct |",
        "|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for (run_id, strategy), phases in runs.items():
        for p in phases:
            span = "" if p.batch_first is None else f"{p.batch_first}-{p.batch_last}"
            state = "" if p.correct is None else ("yes" if p.correct else "NO")
            if p.skipped:
                state = f"skipped: {p.skipped}"
            if p.refused:
                state = f"refused: {p.refused}"
            if not p.ok:
                state = f"FAILED: {p.error}"
            if p.busy:
                state = f"{state}; busy: {p.busy}".lstrip("; ")
            lines.append(
                f"| {run_id} | {strategy} | {p.step} | {p.phase} | {span} | {p.batches_applied}"
                f" | {_n(p.seconds)} | {_n(p.job_seconds)} | {_n(p.rows, '{:,}')}"
                f" | {_n(p.files_per_bucket, '{:g}')}"
                f" | {_n(None if p.stored_bytes is None else p.stored_bytes / 1e6, '{:,.1f}')}"
                f" | {_n(None if p.peak_rss_bytes is None else p.peak_rss_bytes / 1e6, '{:,.0f}')}"
                f" | {version_span(p)} | {state} |"
            )
    lines += history_table(runs)
    lines += life_table(runs)
    lines += ["", *(f"![{c}]({c})" for c in charts), ""]
    return "\n".join(lines)


def auto_lines(runs: dict[tuple[str, str], list[PhaseRecord]]) -> list[str]:
    """What each `auto` lane left to its format (its records say it): the format's own
    trigger of compaction and expiry, or that it has none."""
    said = {lane: phases[0].auto_maintenance for (_, lane), phases in runs.items()}
    lines = [f"- {lane}: {text}" for lane, text in said.items() if text]
    return ["Maintenance left to the format (`auto`):", "", *lines, ""] if lines else []


def summary_cells(phases: Sequence[PhaseRecord]) -> list[str]:
    """One strategy's run in a row: its reads (how many exact), the first and the last
    plain read and their ratio (the process's and the job's own seconds), the write per
    batch, the mean compaction, the most files per bucket, what it stored at the end,
    its peak memory, and what else the machine did during its jobs (busy: the
    evaluation's rule, `PhaseRecord.busy`)."""
    reads = [p for p in phases if p.correct is not None]
    plain = head_reads(phases)
    first, last = (plain[0], plain[-1]) if plain else (None, None)
    ups = [
        p
        for p in phases
        # The base (batch 0) apart: its size is not an update batch's.
        if "upsert" in p.phase and p.ok and p.batch_first and p.seconds is not None
    ]
    batches = sum((p.batch_last or 0) - (p.batch_first or 0) + 1 for p in ups)
    compactions = [
        p.seconds for p in phases if p.phase == "compact" and p.ok and not p.skipped and p.seconds
    ]
    files = [p.files_per_bucket for p in phases if p.files_per_bucket is not None]
    stored = next((p.stored_bytes for p in reversed(phases) if p.stored_bytes is not None), None)
    rss = [p.peak_rss_bytes for p in phases if p.peak_rss_bytes is not None]
    measured = [p for p in phases if p.outside_share is not None]

    def read(p: PhaseRecord | None) -> str:
        return "-" if p is None else f"{p.seconds:.2f} ({p.batches_applied})"

    own = "-"
    if first is not None and last is not None and first.job_seconds and last.job_seconds:
        own = f"{first.job_seconds:.2f} -> {last.job_seconds:.2f}"
    ratio = "-"
    if first is not None and last is not None and first.seconds and last.seconds:
        ratio = f"{last.seconds / first.seconds:.2f}"
    exact = "-"
    if reads:
        exact = f"{'yes' if all(p.correct for p in reads) else 'NO'} ({len(reads)})"
    refused = sum(1 for p in phases if p.refused or p.phase == "refused")
    if refused:
        exact += f"; {refused} refused"
    noise = "-"
    if measured:
        mean, peak, _ = most_noise(measured)
        noise = f"{mean:.1%} / {peak:.0%}"
    return [
        exact,
        read(first),
        read(last),
        ratio,
        own,
        _n(sum(p.seconds or 0.0 for p in ups) / batches if batches else None, "{:.2f}"),
        _n(sum(compactions) / len(compactions) if compactions else None, "{:.1f}"),
        _n(max(files, default=None), "{:g}"),
        _n(None if stored is None else stored / 1e6, "{:,.0f}"),
        _n(max(rss) / 1e9 if rss else None, "{:.1f}"),
        noise,
        f"{sum(1 for p in measured if p.busy)} of {len(measured)}" if measured else "-",
    ]


def summary_table(runs: dict[tuple[str, str], list[PhaseRecord]]) -> list[str]:
    """Every strategy's run in one row (the table results/workloads/README.md quotes)."""
    return [
        "## Summary",
        "",
        "The first and last read are reads of the head that answered (a history read, "
        "or a refused one, is in the phases table); write per batch over the upserts "
        "after the base (batch 0); "
        "`-`: not measured.",
        "",
        "| run | strategy | reads exact | first read s (batches) | last read s (batches) "
        "| last / first | own read s, first -> last | write s per update batch | compaction s "
        "| files per bucket, most | stored MB at the end | peak RSS GB "
        "| other work during its jobs, mean / 2-s peak (most) | busy phases |",
        "|---|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|",
        *(
            f"| {run_id} | {strategy} | " + " | ".join(summary_cells(phases)) + " |"
            for (run_id, strategy), phases in runs.items()
        ),
        "",
    ]


def version_span(p: PhaseRecord) -> str:
    """The version a read saw; a change read's `A..B` (after A up to B)."""
    if p.from_version is not None and p.version is not None:
        return f"{p.from_version}..{p.version}"
    return _n(p.version, "{}")


def history_table(runs: dict[tuple[str, str], list[PhaseRecord]]) -> list[str]:
    """Per strategy and read kind: how many reads were answered exactly, refused (in
    the strategy's own one line) or wrong; a strategy refused whole says so."""
    lines = [
        "",
        "## Reads by kind",
        "",
        "| run | strategy | read kind | answered exactly | refused | wrong |",
        "|---|---|---|---:|---:|---:|",
    ]
    for (run_id, strategy), phases in runs.items():
        whole = next((p for p in phases if p.phase == "refused"), None)
        if whole is not None:
            lines.append(f"| {run_id} | {strategy} | every | - | all: {whole.skipped} | - |")
            continue
        counts: dict[str, list[int]] = {}
        for p in phases:
            kind = read_kind(p)
            if kind is None or p.skipped:
                continue
            row = counts.setdefault(kind, [0, 0, 0])
            row[0 if p.correct else 1 if p.refused else 2] += 1
        for kind, (exact, refused, wrong) in counts.items():
            lines.append(f"| {run_id} | {strategy} | {kind} | {exact} | {refused} | {wrong} |")
    return lines


def chart_figure(records: Sequence[PhaseRecord]) -> Any:
    """Four panels: read seconds against batches applied, the process's and the job's
    own (a dotted line where a compaction ran), write seconds per batch, files per
    bucket against batches (only where the files were counted after each step: a peer
    format's are counted at its compactions only, so it has no line there). Each point
    is one phase (n=1: no spread to draw); one legend below the panels, outside the
    data."""
    import matplotlib  # deferred: matplotlib is slow to import; only the plots need it

    matplotlib.use("Agg")
    # deferred: matplotlib is slow to import; only the plots need it
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(20, 5.2))
    for (run_id, strategy), phases in by_run(records).items():
        label = strategy if len({r.run_id for r in records}) == 1 else f"{strategy} {run_id}"
        reads = [p for p in phases if p.phase == "read" and p.ok and p.seconds is not None]
        (line,) = axes[0].plot(
            [p.batches_applied for p in reads], [p.seconds for p in reads], marker="o", label=label
        )
        own = [p for p in reads if p.job_seconds is not None]
        axes[1].plot(
            [p.batches_applied for p in own],
            [p.job_seconds for p in own],
            marker="o",
            color=line.get_color(),
            label=label,
        )
        for p in phases:
            if p.phase == "compact" and p.ok and not p.skipped:
                for ax in axes[:2]:
                    ax.axvline(p.batches_applied, color=line.get_color(), linestyle=":")
        ups = [p for p in phases if "upsert" in p.phase and p.ok and p.batch_first is not None]
        axes[2].plot(
            [p.batches_applied for p in ups],
            [(p.seconds or 0) / (p.batch_last - p.batch_first + 1) for p in ups],  # type: ignore[operator]
            marker=".",
            label=label,
        )
        laid = [p for p in phases if p.files_per_bucket is not None and p.phase != "compact"]
        if laid:
            axes[3].plot(
                [p.batches_applied for p in laid],
                [p.files_per_bucket for p in laid],
                color=line.get_color(),
                label=label,
            )
    titles = (
        "read, whole process (compaction dotted)",
        "read, the job's own (JVM start/stop out)",
        "write per batch",
        "files per bucket (where counted)",
    )
    ylabels = ("seconds (n=1 a point)", "seconds (n=1 a point)", "seconds per batch", "files")
    for ax, title, ylabel in zip(axes, titles, ylabels, strict=True):
        ax.set_title(title, fontsize=11)
        ax.set_xlabel("batches applied")
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), fontsize=9)
    rows = -(-len(labels) // 6) if labels else 0
    fig.tight_layout(rect=(0, 0.06 * rows, 1, 1))
    return fig


def write_report(path: Path, workload: str, records: Sequence[PhaseRecord]) -> list[Path]:
    """`<stem>.md` and `<stem>.png` beside the records file."""
    chart = path.with_suffix(".png")
    # The folder may not exist yet: no phase record written (every strategy refused).
    chart.parent.mkdir(parents=True, exist_ok=True)
    fig = chart_figure(records)
    fig.savefig(chart, dpi=90)
    # deferred: matplotlib is slow to import; only the plots need it
    import matplotlib.pyplot as plt

    plt.close(fig)
    page = path.with_suffix(".md")
    page.write_text(markdown(workload, records, [chart.name]))
    return [page, chart]
