"""The typed record of each benchmark's results file (`results/<stem>.jsonl`, one line
per measured row), each read from every shape committed so far.

`sitting` is when the invocation that measured a row started (stamped by
`contest.benchmarks.base.Sitting.record`); lines from before it existed have none, and
the renderers group those by their own rule. `stamp` (contest/results/stamp.py): the
machine, commit, load and noise of the interval that measured the row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from contest.results.record import Record
from contest.results.stamp import Stamp


@dataclass(frozen=True, kw_only=True)
class BenchRecord(Record):
    """What every benchmark's line has besides its own figures: its sitting (when the
    invocation started) and its stamp (machine, commit, load, the interval's noise)."""

    sitting: str | None = None
    stamp: Stamp | None = None


@dataclass(frozen=True, kw_only=True)
class ReadVariant(Record):
    """One read variant's times over the rounds (`read_bench.jsonl`'s `variants`)."""

    median_s: float
    min_s: float
    max_s: float
    rows_per_core_s: float
    vs_default: float


@dataclass(frozen=True, kw_only=True)
class ReadBenchRecord(BenchRecord):
    """`contest bench read`: every read variant of one table."""

    what: ClassVar[str] = "read bench record"
    rows: int
    cores: int
    repeat: int
    variants: dict[str, ReadVariant]
    scale: float | None = None


@dataclass(frozen=True, kw_only=True)
class CompactRecord(BenchRecord):
    """`contest bench compact`: the read before and after a compaction."""

    what: ClassVar[str] = "compact record"
    when: str
    data: str
    rows: int
    cores: int
    repeat: int
    files_before: int
    files_after: int
    files_per_bucket_before: float
    files_per_bucket_after: float
    compact_s: float
    read_before_s: list[float]
    read_after_s: list[float]
    median_before_s: float
    median_after_s: float
    speedup: float
    scale: float | None = None


@dataclass(frozen=True, kw_only=True)
class DuckDBRecord(BenchRecord):
    """`contest bench duckdb`: one round of one engine (optimized, duckdb or the floor).
    Older lines have no `sitting` (a round 1 of optimized begins one); the duckdb
    engine's lines time one query (`query_s`), optimized's its write and read apart, the
    floor's its I/O process and its two Spark starts."""

    what: ClassVar[str] = "duckdb record"
    engine: str
    round: int
    seconds: float
    correct: bool
    rows: int | None = None
    data: str | None = None
    cores: int | None = None
    peak_process_rss_bytes: int | None = None
    # The whole process tree's peak (JVM and Python workers); older lines have none.
    peak_rss_bytes: int | None = None
    write_s: float | None = None
    read_s: float | None = None
    query_s: float | None = None
    # DuckDB's key ranges, one query each (older lines: one query, no figure).
    parts: int | None = None
    # The floor (contest/benchmarks/floor.py): its I/O process and its two Spark starts.
    io_s: float | None = None
    starts_s: float | None = None
    # Noise during the engine's processes: other work's highest mean share of the CPUs.
    outside_share: float | None = None
    # An optimized run under other settings (`--variant KEY=VALUE`), beside the default.
    variant: str | None = None
    # The batches read into the page cache just before this engine's run, untimed (0: too
    # large to stay cached; older lines: none, the cache as the previous run left it).
    read_ahead_bytes: int | None = None
    # Why an engine's process failed (then not correct, its seconds those until it did).
    error: str | None = None

    @property
    def label(self) -> str:
        """The engine, with its variant when it ran under one."""
        return f"{self.engine} [{self.variant}]" if self.variant else self.engine


@dataclass(frozen=True, kw_only=True)
class ScaleRecord(BenchRecord):
    """`contest bench scale`: one scale of the optimized pipeline. The oldest lines
    carry one `peak_process_rss_bytes` besides the per-job peaks."""

    what: ClassVar[str] = "scale record"
    scale: float
    rows: int | None
    cores: int
    correct: bool
    write_s: float | None = None
    read_s: float | None = None
    rows_per_core_s: float | None = None
    write_inprocess_s: float | None = None
    read_inprocess_s: float | None = None
    s_per_million_rows: float | None = None
    peak_process_rss_bytes: int | None = None
    write_peak_process_rss_bytes: int | None = None
    read_peak_process_rss_bytes: int | None = None
    harness_peak_rss_bytes: int | None = None
    stored_bytes: int | None = None
    files_per_bucket: float | None = None
    error: str | None = None
    when: str = ""

    @property
    def peak_rss_bytes(self) -> int | None:
        """The larger job's peak, or the one figure older lines have."""
        peaks = [p for p in (self.write_peak_process_rss_bytes, self.read_peak_process_rss_bytes)]
        known = [p for p in peaks if p is not None]
        return max(known) if known else self.peak_process_rss_bytes


@dataclass(frozen=True, kw_only=True)
class CommitPathRecord(BenchRecord):
    """`contest bench commits`: one commit path, one round."""

    what: ClassVar[str] = "commit path record"
    path: str
    writers: int
    commits: int
    seconds: float
    commits_per_s: float
    retries: int
    lost: int
    duplicated: int
    errors: int
    round: int
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class ReplayRecord(BenchRecord):
    """`contest bench replay`: one generated history merged in the driver and through
    Spark, then merged again."""

    what: ClassVar[str] = "metadata replay record"
    commits: int
    generate_s: float
    driver_s: float
    driver_peak_rss_mb: float
    distributed_s: float
    identical: bool
    second_run_s: float
    second_run_changed: bool
    cores: int | None = None
    when: str = ""


@dataclass(frozen=True, kw_only=True)
class NativeMergeRecord(BenchRecord):
    """`python -m contest.benchmarks.merge_micro`: one variant of one microbenchmark
    (`read.merge` over a bucket's files, or a per-row one with `us_per_row`)."""

    what: ClassVar[str] = "native merge record"
    bench: str
    variant: str
    median_s: float
    ratio: float
    exact: bool
    rounds: int
    load: list[float]
    memory_bytes: int | None = None
    bucket: int | None = None
    files: int | None = None
    rows_out: int | None = None
    rows: int | None = None
    us_per_row: float | None = None


@dataclass(frozen=True, kw_only=True)
class FaultRecord(BenchRecord):
    """`contest bench faults`: one experiment's counts and its goal."""

    what: ClassVar[str] = "fault record"
    name: str
    title: str
    recovery: str
    trials: int = 0
    failures_observed: int = 0
    lost: int = 0
    destroyed: int = 0
    half_commits: int = 0
    orphans_left: int = 0
    orphans_removed: int = 0
    recovered: int = 0
    not_one_line: int = 0
    not_run: str | None = None
    expected_losses: bool = False
    notes: list[str] = field(default_factory=list)
    details: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    goal_met: bool = False
    when: str = ""
    git_commit: str | None = None
    scale: float | None = None
    seed: int | None = None
    cores: int | None = None
