"""`results/duckdb.md`: the newest sitting of each data set of `contest bench duckdb`, each
contender's median with its interval, the ratios round by round, and how DuckDB ran
(its memory, threads, key ranges and version), from typed records of any age."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from contest.benchmarks.duckdb.reference import DEFAULTS, MEMORY
from contest.infra.memory_bound import PROCESS_TREE_BOUND_BYTES, over_bound
from contest.infra.noise import BUSY_RULE, measured_busy
from contest.results.benchmarks import DuckDBRecord
from contest.results.disclosure import disclosure_name
from contest.results.intervals import median_interval, paired_ratio
from contest.sitting import sittings

ENGINES = ("optimized", "duckdb", "floor")

INTRO = (
    "The newest sitting of each data set (a scale and a data shape: the harness's own "
    "generator, pyarrow's defaults, or zstd files of 128Ki-row row groups), newest first. "
    "Seconds are whole processes (optimized: write + read spark-submit; DuckDB: one Python "
    "process; the floor: every batch read once, the result's rows written once, two trivial "
    "spark-submits). Each median with its distribution-free interval and n; each ratio taken "
    "round by round inside the sitting (contest/results/intervals.py); noise: the highest "
    "share of the CPUs other work took during a contender's processes (`busy` by the one "
    f"rule: {BUSY_RULE}); a row that recorded only its stamp's window shows it as "
    "`window`, not judged. A contender that ran in key ranges says how many in its name."
)

CHANGED = (
    "**How DuckDB runs.** The DuckDB row is DuckDB as users run it: at its defaults, no "
    "memory limit set (DuckDB's own: 80% of the machine's memory), one query (no key "
    "ranges), threads = the sitting's cores, spilling under the work folder; it is exempt "
    "from the harness's 8 GB bound on a process tree (contest/infra/memory_bound.py). "
    "Sittings before this capped it at the oracle's memory budget (at most 4 GiB, the "
    "budget of a checker, not of a reference), which made it spill at scale 1 and split it "
    "into key ranges at scale 10: their rows say so (*capped at the oracle's budget, older "
    "sittings*) until each data set is measured again. A row held at optimized's peak "
    "process-tree memory (`--duckdb-variant equal`) is an equal-memory comparison beside "
    "the defaults row, never in its place."
)


@dataclass(frozen=True)
class Summary:
    """One sitting: its data and cores, each contender's runs and median, the ratio."""

    data: str | None
    cores: int | None
    rounds: int
    median_s: dict[str, float | None]
    ratio_duckdb_to_optimized: float | None
    # Each contender's median over the floor's (None without a floor in the sitting).
    over_floor: dict[str, float | None]
    all_correct: bool
    runs: dict[str, list[DuckDBRecord]]


def summarize(records: Sequence[DuckDBRecord]) -> Summary:
    """Medians per contender and the ratio, over one sitting's records: a variant of
    optimized is a contender of its own after it, a DuckDB row under a memory limit one of
    its own after DuckDB's defaults row (never mixed with it)."""
    labels = {r.label for r in records}
    runs = {
        e: [r for r in records if r.label == e]
        for e in (
            "optimized",
            *sorted(x for x in labels if x.startswith("optimized [")),
            "duckdb",
            *sorted(x for x in labels if x.startswith("duckdb [")),
            "floor",
        )
    }
    med = {e: median_of([r.seconds for r in rs if r.correct]) for e, rs in runs.items()}
    ratio = med["duckdb"] / med["optimized"] if med["optimized"] and med["duckdb"] else None
    first = records[0] if records else None
    floor = med["floor"]
    over = {e: round(m / floor, 3) if m and floor else None for e, m in med.items()}
    return Summary(
        data=first.data if first else None,
        cores=first.cores if first else None,
        rounds=len(runs["optimized"]),
        median_s=med,
        ratio_duckdb_to_optimized=round(ratio, 3) if ratio else None,
        over_floor=over,
        all_correct=all(r.correct for r in records),
        runs=runs,
    )


def median_of(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def run_seconds(r: DuckDBRecord) -> str:
    """A run's seconds, with the write and read (the floor's I/O and starts) apart; a
    failed one's error."""
    if r.error:
        return f"failed after {r.seconds:.1f} ({r.error})"
    parts = (r.write_s, r.read_s) if r.io_s is None else (r.io_s, r.starts_s)
    split = f" ({parts[0]:.1f} + {parts[1]:.1f})" if None not in parts else ""
    return f"{r.seconds:.1f}{split}"


def new_sitting(r: DuckDBRecord) -> bool:
    """An old record (no `sitting`) begins one when it is round 1 of optimized."""
    return r.round == 1 and r.contender == "optimized"


def render(records: Sequence[DuckDBRecord]) -> str:
    groups = sittings(records, starts=new_sitting)
    lines = ["# Optimized pipeline against a single-process DuckDB merge", "", INTRO, ""]
    lines += [CHANGED, ""]
    for group in reversed(newest_per_data(groups)):
        lines += sitting_section(group)
    return "\n".join(lines).rstrip("\n") + "\n"


def newest_per_data(groups: Sequence[Sequence[DuckDBRecord]]) -> list[Sequence[DuckDBRecord]]:
    """The newest sitting of each data folder, in the order of their sittings."""
    newest: dict[str | None, Sequence[DuckDBRecord]] = {}
    for group in groups:
        if group:
            newest.pop(group[0].data, None)
            newest[group[0].data] = group
    return list(newest.values())


def noise_cell(rs: Sequence[DuckDBRecord]) -> str:
    """Other work's highest share of the CPUs during the contender's own processes, judged
    by the one busy rule; else the highest over the rows' stamps' windows, marked as
    such and not judged (the window holds the gaps between engines too)."""
    own = [r.outside_share for r in rs if r.outside_share is not None]
    if own:
        busy = measured_busy(max(own), None, None)
        return f"{max(own):.0%}" + (" busy" if busy else "")
    window = [r.stamp.outside_share for r in rs if r.stamp and r.stamp.outside_share is not None]
    return f"window {max(window):.0%}" if window else "-"


def by_round(rs: Sequence[DuckDBRecord]) -> dict[int, float]:
    """Speed (1 / seconds) per round: what `paired_ratio` compares."""
    return {r.round: 1 / r.seconds for r in rs if r.seconds > 0 and r.correct}


def memory_of(rs: Sequence[DuckDBRecord]) -> str | None:
    """How DuckDB's memory was set in these rows, for the contender's label: its defaults,
    a limit, or (a line from before DuckDB ran at its defaults) the oracle's budget."""
    if any(r.at_oracle_budget_before for r in rs):
        return "capped at the oracle's budget, older sittings"
    kinds = {r.duckdb_memory for r in rs if r.duckdb_memory}
    if not kinds:
        return None
    return "defaults" if kinds == {DEFAULTS} else ", ".join(sorted(kinds)) + " memory"


def contender_name(name: str, rs: Sequence[DuckDBRecord]) -> str:
    """The contender's label on the page: for DuckDB, how its memory was set, and when it
    ran in key ranges (another reference than one query) how many."""
    if not rs or rs[0].contender != "duckdb":
        return name
    how = [x for x in (memory_of(rs),) if x]
    parts = max((r.parts or 1) for r in rs)
    if parts > 1:
        how.append(f"{parts} key ranges")
    return f"duckdb ({'; '.join(how)})" if how else "duckdb"


def gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def how_duckdb_ran(name: str, rs: Sequence[DuckDBRecord]) -> str:
    """One line: DuckDB's version, threads, memory limit and queries in these rows."""
    r = rs[-1]
    if r.at_oracle_budget_before:
        memory = "memory_limit the oracle's budget (at most 4 GiB; not recorded then)"
    elif r.duckdb_memory == DEFAULTS:
        own = f": {r.memory_limit_setting}" if r.memory_limit_setting else ""
        memory = f"memory_limit not set (DuckDB's default{own})"
    else:
        kind = MEMORY.get(r.duckdb_memory or "")
        what = kind.shown if kind is not None else r.duckdb_memory
        # As DuckDB reported the limit set, else the bytes set (a failed run's line).
        limits = {x.memory_limit_setting or gib(x.memory_limit) for x in rs if x.memory_limit}
        memory = f"memory_limit {', '.join(sorted(limits)) or '-'} ({what})"
    parts = max((x.parts or 1) for x in rs)
    queries = f"{parts} key ranges, one query each" if parts > 1 else "one query"
    version = f"DuckDB {r.duckdb_version}" if r.duckdb_version else "DuckDB (version not recorded)"
    threads = r.threads or r.cores
    return (
        f"- {contender_name(name, rs)}: {version}, threads {threads or '-'}, {memory}, {queries}."
    )


def peak_cell(rs: Sequence[DuckDBRecord]) -> str:
    """The biggest process's peak and the process tree's (GB), the tree marked when over
    the bound that holds the contender (contest/infra/memory_bound.py)."""
    rss = f"{max((r.peak_process_rss_bytes or 0) for r in rs) / 1e9:.2f}"
    trees = [r.peak_rss_bytes for r in rs if r.peak_rss_bytes]
    if not trees:
        return rss + ", -"
    rss += f", {max(trees) / 1e9:.2f}"
    if over_bound(rs[0].contender, max(trees)):
        rss += f" (over the {PROCESS_TREE_BOUND_BYTES / 1e9:.0f} GB bound)"
    return rss


def sitting_section(records: Sequence[DuckDBRecord]) -> list[str]:
    """One sitting: its engines' medians with intervals, runs and noise, the ratios round
    by round, and how DuckDB ran."""
    summary = summarize(records)
    first = records[0]
    stamp = first.stamp
    where = f"sitting {first.sitting}" if first.sitting else "sitting"
    if stamp is not None and stamp.git_commit:
        where += f", git {stamp.git_commit}" + (" (dirty)" if stamp.dirty else "")
    cpu = stamp.cpu_model if stamp is not None else None
    where += f", CPU: {cpu or 'not recorded'}"
    if first.sitting:
        page = disclosure_name(first.sitting, "duckdb")
        where += f", full disclosure: [{page}]({page})"
    lines = [
        f"## `{summary.data}`",
        "",
        f"{where}; cores: {summary.cores} (local[N] and DuckDB's threads); "
        f"{summary.rounds} interleaved round(s).",
        "",
        "| contender | median s [interval] n | runs (s) | peak RSS (GB): process, tree | noise "
        "| correct |",
        "|---|---|---|---|---|---|",
    ]
    for name, rs in summary.runs.items():
        if not rs:
            continue
        good = [r.seconds for r in rs if r.correct]
        iv = median_interval(good) if good else None
        med = "-" if iv is None else f"{iv.median:.1f}"
        med += f" [{iv.low:.1f}-{iv.high:.1f}] n={iv.n}" if iv is not None and iv.n > 1 else ""
        secs = ", ".join(run_seconds(r) for r in rs)
        noise = noise_cell(rs)
        ok = all(r.correct for r in rs)
        row = f"| {contender_name(name, rs)} | {med} | {secs} | {peak_cell(rs)} | {noise} | {ok} |"
        lines.append(row)
    duckdbs = [(n, rs) for n, rs in summary.runs.items() if n.startswith("duckdb") and rs]
    if duckdbs:
        lines += ["", "How DuckDB ran:", ""]
        lines += [how_duckdb_ran(name, rs) for name, rs in duckdbs]
    lines += [""]
    opt = by_round(summary.runs["optimized"])
    for name, rs in duckdbs:
        duck = paired_ratio("optimized", name, opt, by_round(rs))
        if duck is not None:
            lines += [
                f"{contender_name(name, rs)} / optimized, round by round (>= 1.0: optimized "
                f"is at least as fast): **{duck.text()}**",
                "",
            ]
    for name, rs in summary.runs.items():
        if name.startswith("optimized [") and rs:
            r = paired_ratio(name, "optimized", by_round(rs), opt)
            if r is not None:
                lines += [
                    f"{name}: optimized's seconds over its, round by round (> 1: the "
                    f"variant is faster): **{r.text()}**",
                    "",
                ]
    floor = by_round(summary.runs["floor"])
    if floor:
        over = [("optimized", "optimized", summary.runs["optimized"])]
        over += [(name, contender_name(name, rs), rs) for name, rs in duckdbs]
        ratios = [(label, paired_ratio("floor", e, floor, by_round(rs))) for e, label, rs in over]
        text = ", ".join(f"{label} **{r.text()}**" for label, r in ratios if r is not None)
        lines += [f"Over the floor, round by round: {text}. The floor's runs are I/O + starts.", ""]
    return lines
