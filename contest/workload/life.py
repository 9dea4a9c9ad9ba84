"""A longevity run's table life on the page: per lane (strategy and policy) how its jobs
ran, what each commit adds to a read (seconds per 100 commits, from the reads' slope),
what its maintenance cost, its total time, what its table holds at the end (files in
its folder, its metadata, its disk), and, for a policy that compacts every N commits,
the table age from which that pays for itself, judged by the same strategy's `none`
lane's growth in the same run."""

from __future__ import annotations

from collections.abc import Sequence

from contest.results.workloads import PhaseRecord, head_reads
from contest.workload.maintenance import parse_policy
from contest.workload.metrics import growth_per_commit, pays_off_from

MAINTENANCE = ("compact", "vacuum")


def growth(phases: Sequence[PhaseRecord]) -> float | None:
    """Seconds a commit adds to a head read, from the lane's reads after its base."""
    points = [
        (p.batches_applied, p.seconds)
        for p in head_reads(phases)
        if p.seconds is not None and p.batches_applied > 1
    ]
    return growth_per_commit(points)


def maintenance_cost(phases: Sequence[PhaseRecord]) -> tuple[int, float | None]:
    """How many maintenance runs (a compaction and its expiry together) and their mean
    seconds; (0, None) for none."""
    done = [p for p in phases if p.phase in MAINTENANCE and p.ok and not p.skipped]
    runs = sum(1 for p in done if p.phase == "compact") or (1 if done else 0)
    return runs, (sum(p.seconds or 0.0 for p in done) / runs if runs else None)


def total_seconds(phases: Sequence[PhaseRecord]) -> float:
    """Commits, reads and maintenance: the lane's own work (its application's start is
    in its first commit)."""
    kinds = ("upsert", "read", "changes", *MAINTENANCE)
    return sum(p.seconds or 0.0 for p in phases if p.phase in kinds and not p.skipped)


def read_every(phases: Sequence[PhaseRecord]) -> int | None:
    """Commits between the lane's plain reads (the smallest gap seen)."""
    seen = sorted({p.batches_applied for p in head_reads(phases)})
    gaps = [b - a for a, b in zip(seen, seen[1:], strict=False) if b > a]
    return min(gaps) if gaps else None


def _n(value: float | int | None, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def life_cells(phases: Sequence[PhaseRecord], none_growth: float | None) -> list[str]:
    last = phases[-1]
    ends = [p for p in phases if p.data_files is not None]
    end = ends[-1] if ends else None
    commits = sum(1 for p in phases if p.phase == "upsert" and p.ok and p.batch_first)
    runs, cost = maintenance_cost(phases)
    every = None
    if last.policy and last.policy.startswith("every:"):
        every = parse_policy(last.policy, "policy").every
    pays = None
    if every and cost is not None:
        pays = pays_off_from(cost, none_growth, every, read_every(phases) or 1)
    grown = growth(phases)
    meta = "-"
    if end is not None and end.metadata_rows is not None:
        meta = f"{end.metadata_rows:,} rows"
    elif end is not None and end.metadata_files is not None:
        meta = f"{end.metadata_files:,} files"
    return [
        {"one": "one application", "per-phase": "per phase"}.get(last.application or "", "-"),
        str(commits),
        _n(None if grown is None else grown * 100, "{:+.3f}"),
        f"{runs} x {cost:.2f}" if cost is not None else "-",
        f"{total_seconds(phases):.1f}",
        "-" if end is None else f"{end.data_files} / {end.delete_files}",
        meta,
        _n(None if end is None or end.data_bytes is None else end.data_bytes / 1e6, "{:,.1f}"),
        _n(pays, "{:,.0f}"),
    ]


def life_table(runs: dict[tuple[str, str], list[PhaseRecord]]) -> list[str]:
    """The section, for runs whose lanes name a policy (a longevity run with
    `maintenance`); nothing otherwise."""
    lanes = {k: v for k, v in runs.items() if v and v[-1].policy}
    if not lanes:
        return []
    none = {
        (run_id, v[-1].strategy): growth(v)
        for (run_id, _), v in lanes.items()
        if v[-1].policy == "none"
    }
    return [
        "",
        "## The table's life",
        "",
        "Per lane: how its jobs ran; its commits after the base; what a commit adds to a "
        "head read (s per 100 commits: the median slope over every pair of its reads, so one "
        "slow read does not tilt it); its maintenance "
        "runs (a compaction and its expiry) and their mean seconds; its total seconds "
        "(commits, reads, maintenance); at the end, its folder's data / delete-and-log "
        "files, its metadata (PostgreSQL rows, or log and metadata files) and its data MB "
        "(live or not yet expired); and for `every:N`, the table age (commits) from which "
        "compacting every N pays for itself: a compaction at commit c takes c commits' "
        "growth (the same strategy's `none` lane's) off each read of its cycle. `-`: not "
        "measured, or reads that do not grow.",
        "",
        "| run | lane | jobs | commits | read s per 100 commits | maintenance | total s "
        "| files at the end, data / delete | metadata at the end | data MB at the end "
        "| compacting pays from commit |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {run_id} | {lane} | "
            + " | ".join(life_cells(v, none.get((run_id, v[-1].strategy))))
            + " |"
            for (run_id, lane), v in lanes.items()
        ),
    ]
