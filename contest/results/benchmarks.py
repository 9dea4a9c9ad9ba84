"""The typed record of each benchmark's results file (`results/<stem>.jsonl`, one line
per measured row), each read from every shape committed so far.

`sitting` is when the invocation that measured a row started (stamped by
`contest.sitting.Sitting.record`); lines from before it existed have none, and
the renderers group those by their own rule. `stamp` (contest/results/stamp.py): the
machine, commit, load and noise of the interval that measured the row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from contest.results.labels import UNKNOWN, Labels, scale_label, scale_of_data
from contest.results.record import Record
from contest.results.shown import shown, shown_property
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
class ReadBenchRow:
    """One read variant of a `contest bench read` sitting, as a row of its own: the
    median time with its spread over the rounds."""

    sitting: str = field(metadata=shown("sitting", fmt="time", chart="series"))
    variant: str = field(metadata=shown("variant", chart="x"))
    rows: int = field(metadata=shown("rows", fmt="int"))
    repeat: int = field(metadata=shown("n", fmt="count", chart="n"))
    median_s: float = field(metadata=shown("median", unit="s", fmt="f3", chart="y"))
    min_s: float = field(metadata=shown("min", unit="s", chart="low", column=False))
    max_s: float = field(metadata=shown("max", unit="s", chart="high", column=False))

    @shown_property("min–max", unit="s", fmt="range3")
    def spread(self) -> tuple[float, float]:
        return self.min_s, self.max_s

    vs_default: float = field(metadata=shown("vs default", fmt="x3"))
    scale: float | None = None


@dataclass(frozen=True, kw_only=True)
class ReadBenchRecord(BenchRecord):
    """`contest bench read`: every read variant of one table."""

    what: ClassVar[str] = "read bench record"
    rows: int
    cores: int
    repeat: int
    variants: dict[str, ReadVariant]
    scale: float | None = None

    @classmethod
    def rows_of(
        cls, records: Sequence[ReadBenchRecord]
    ) -> list[tuple[ReadBenchRecord, ReadBenchRow]]:
        """A row per variant, fastest first; a line without a sitting is named by its
        rows."""
        return [
            (
                r,
                ReadBenchRow(
                    sitting=r.sitting or f"{r.rows} rows",
                    variant=name,
                    rows=r.rows,
                    repeat=r.repeat,
                    median_s=v.median_s,
                    min_s=v.min_s,
                    max_s=v.max_s,
                    vs_default=v.vs_default,
                    scale=r.scale,
                ),
            )
            for r in records
            for name, v in sorted(r.variants.items(), key=lambda kv: kv[1].median_s)
        ]


@dataclass(frozen=True, kw_only=True)
class CompactRecord(BenchRecord):
    """`contest bench compact`: the read before and after a compaction."""

    what: ClassVar[str] = "compact record"
    when: str = field(metadata=shown("when", unit="(UTC)", fmt="time"))

    @shown_property("scale")
    def scale_text(self) -> str:
        """The scale, or the one its data folder names (older lines)."""
        return scale_label(self.scale) if self.scale is not None else scale_of_data(self.data)

    data: str
    rows: int = field(metadata=shown("rows", fmt="int"))
    cores: int
    repeat: int = field(metadata=shown("n", fmt="count"))
    files_before: int
    files_after: int
    files_per_bucket_before: float
    files_per_bucket_after: float

    @shown_property("files/bucket", fmt="arrow")
    def files_per_bucket(self) -> tuple[float, float]:
        return self.files_per_bucket_before, self.files_per_bucket_after

    compact_s: float
    read_before_s: list[float]
    read_after_s: list[float]
    median_before_s: float
    median_after_s: float

    @shown_property("read s before [min–max]", fmt="spread2")
    def before(self) -> tuple[float, float | None, float | None]:
        return (
            self.median_before_s,
            min(self.read_before_s, default=None),
            max(self.read_before_s, default=None),
        )

    @shown_property("read s after [min–max]", fmt="spread2")
    def after(self) -> tuple[float, float | None, float | None]:
        return (
            self.median_after_s,
            min(self.read_after_s, default=None),
            max(self.read_after_s, default=None),
        )

    speedup: float = field(metadata=shown("speed-up", fmt="x2"))
    scale: float | None = None

    @property
    def labels(self) -> Labels:
        """`contest bench compact` measures the optimized pipeline only."""
        return Labels("optimized", self.scale_text, UNKNOWN, UNKNOWN, self.when or None)


@dataclass(frozen=True, kw_only=True)
class DuckDBRecord(BenchRecord):
    """`contest bench duckdb`: one round of one contender (optimized, duckdb or the floor).
    Older lines have no `sitting` (a round 1 of optimized begins one); the duckdb
    contender's lines time one query (`query_s`), optimized's its write and read apart, the
    floor's its I/O process and its two Spark starts."""

    what: ClassVar[str] = "duckdb record"
    sitting: str | None = field(default=None, metadata=shown("sitting", fmt="time"))
    contender: str = field(metadata=shown("contender"))
    round: int = field(metadata=shown("round", fmt="count"))
    seconds: float = field(metadata=shown("seconds", fmt="s1"))
    correct: bool = field(metadata=shown("correct", fmt="check"))
    rows: int | None = None
    data: str | None = None
    # A user's files (workload.payload = "own"): each one's name, bytes and SHA-256.
    data_files: list[dict[str, Any]] | None = None
    cores: int | None = None
    peak_process_rss_bytes: int | None = field(
        default=None, metadata=shown("peak RSS", unit="GB", fmt="gb")
    )
    # The whole process tree's peak (JVM and Python workers); older lines have none.
    peak_rss_bytes: int | None = None
    write_s: float | None = None
    read_s: float | None = None
    query_s: float | None = None
    # DuckDB's key ranges, one query each (older lines: one query, no figure).
    parts: int | None = None
    # The floor (contest/benchmarks/duckdb/floor.py): its I/O process and its two Spark starts.
    io_s: float | None = None
    starts_s: float | None = None
    # Noise during the contender's processes: other work's highest mean share of the CPUs.
    outside_share: float | None = None
    # An optimized run under other settings (`--variant KEY=VALUE`), beside the default.
    variant: str | None = None
    # The batches read into the page cache just before this contender's run, untimed (0: too
    # large to stay cached; older lines: none, the cache as the previous run left it).
    read_ahead_bytes: int | None = None
    # Why a contender's process failed (then not correct, its seconds those until it did).
    error: str | None = None
    # How the duckdb contender ran. Its memory: "defaults" (none set: DuckDB's own limit, as
    # users run it), "equal" (optimized's peak process-tree memory) or "oracle" (the
    # oracle's budget); older lines have none and ran at the oracle's budget.
    duckdb_memory: str | None = None
    # The limit set, in bytes (None: DuckDB's default), and the limit as DuckDB reported it.
    memory_limit: int | None = None
    memory_limit_setting: str | None = None
    threads: int | None = None
    duckdb_version: str | None = None

    @classmethod
    def upgrade(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """Lines written before the glossary (issue 75) name the contender `engine`."""
        if "engine" in raw and "contender" not in raw:
            raw["contender"] = raw.pop("engine")
        return raw

    @property
    def label(self) -> str:
        """The contender, with its variant when it ran under one (DuckDB's memory when it
        is not its defaults: the rows of each stay apart)."""
        if self.variant:
            return f"{self.contender} [{self.variant}]"
        if self.duckdb_memory not in (None, "defaults"):
            return f"{self.contender} [{self.duckdb_memory} memory]"
        return self.contender

    @property
    def at_oracle_budget_before(self) -> bool:
        """A duckdb line from before DuckDB ran at its defaults: capped at the oracle's
        memory budget (its lines say nothing of memory)."""
        return self.contender == "duckdb" and self.duckdb_memory is None

    @property
    def labels(self) -> Labels:
        return Labels(self.contender, scale_of_data(self.data))

    @classmethod
    def rows_of(cls, records: Sequence[DuckDBRecord]) -> list[tuple[DuckDBRecord, DuckDBRecord]]:
        """Each round with its sitting: older lines have none, and a round 1 of optimized
        begins one ("sitting 1", "sitting 2", ...)."""
        out, n = [], 0
        for r in records:
            if r.sitting is None and r.round == 1 and r.contender == "optimized":
                n += 1
            out.append((r, dataclasses.replace(r, sitting=r.sitting or f"sitting {n}")))
        return out


@dataclass(frozen=True, kw_only=True)
class ScaleRecord(BenchRecord):
    """`contest bench scale`: one scale of the optimized pipeline. The oldest lines
    carry one `peak_process_rss_bytes` besides the per-job peaks."""

    what: ClassVar[str] = "scale record"
    scale: float = field(metadata=shown("scale", fmt="scale"))
    rows: int | None = field(metadata=shown("rows", fmt="int"))
    cores: int
    correct: bool = field(metadata=shown("correct"))
    write_s: float | None = field(default=None, metadata=shown("write", unit="s", fmt="s1"))
    read_s: float | None = field(default=None, metadata=shown("read", unit="s", fmt="s1"))
    rows_per_core_s: float | None = field(default=None, metadata=shown("rows/core/s", fmt="int"))
    write_inprocess_s: float | None = None
    read_inprocess_s: float | None = None
    s_per_million_rows: float | None = field(default=None, metadata=shown("s / M rows", fmt="f3"))

    @shown_property("peak RSS", unit="GB", fmt="gb")
    def peak_rss_bytes(self) -> int | None:
        """The larger job's peak, or the one figure older lines have."""
        peaks = [p for p in (self.write_peak_process_rss_bytes, self.read_peak_process_rss_bytes)]
        known = [p for p in peaks if p is not None]
        return max(known) if known else self.peak_process_rss_bytes

    peak_process_rss_bytes: int | None = None
    write_peak_process_rss_bytes: int | None = None
    read_peak_process_rss_bytes: int | None = None
    harness_peak_rss_bytes: int | None = None
    stored_bytes: int | None = field(default=None, metadata=shown("stored", unit="GB", fmt="gb"))
    files_per_bucket: float | None = field(default=None, metadata=shown("files/bucket", fmt="s1"))
    error: str | None = None
    when: str = field(default="", metadata=shown("when", unit="(UTC)", fmt="time"))

    @property
    def series(self) -> str:
        """The sitting the scale was measured in (older lines: their own time)."""
        return self.sitting or self.when or UNKNOWN

    @property
    def labels(self) -> Labels:
        """`contest bench scale` measures the optimized pipeline only."""
        return Labels("optimized", scale_label(self.scale), when=self.when or None)


@dataclass(frozen=True, kw_only=True)
class CommitPathRecord(BenchRecord):
    """`contest bench commits`: one commit path, one round."""

    what: ClassVar[str] = "commit path record"
    sitting: str | None = field(default=None, metadata=shown("sitting", fmt="time"))
    path: str = field(metadata=shown("path"))
    writers: int = field(metadata=shown("writers", fmt="count"))
    commits: int
    seconds: float
    commits_per_s: float = field(metadata=shown("commits/s", fmt="f1"))
    retries: int = field(metadata=shown("retries", fmt="count"))
    lost: int = field(metadata=shown("lost", fmt="count"))
    duplicated: int
    errors: int
    round: int = field(metadata=shown("round", fmt="count"))
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class ReplayRecord(BenchRecord):
    """`contest bench replay`: one generated history merged in the driver and through
    Spark, then merged again."""

    what: ClassVar[str] = "metadata replay record"
    sitting: str | None = field(default=None, metadata=shown("sitting", fmt="time"))
    commits: int = field(metadata=shown("commits", fmt="int"))
    generate_s: float
    driver_s: float = field(metadata=shown("driver", unit="s (n=1)", fmt="f3"))
    driver_peak_rss_mb: float
    distributed_s: float = field(metadata=shown("distributed", unit="s (n=1)", fmt="f3"))
    identical: bool = field(metadata=shown("identical", fmt="check"))
    second_run_s: float
    second_run_changed: bool
    cores: int | None = None
    when: str = ""


@dataclass(frozen=True, kw_only=True)
class NativeMergeRecord(BenchRecord):
    """`python -m contest.benchmarks.merge_micro`: one variant of one microbenchmark
    (`read.merge` over a bucket's files, or a per-row one with `us_per_row`)."""

    what: ClassVar[str] = "native merge record"
    bench: str = field(metadata=shown("microbenchmark"))
    variant: str = field(metadata=shown("variant"))
    median_s: float = field(metadata=shown("median", unit="s", fmt="f4"))
    ratio: float = field(metadata=shown("ratio", fmt="f3"))
    exact: bool = field(metadata=shown("exact", fmt="check"))
    rounds: int = field(metadata=shown("n", fmt="count"))
    load: list[float]

    @shown_property("load", fmt="s1")
    def load1(self) -> float | None:
        """The one-minute load average when the variant ran."""
        return self.load[0] if self.load else None

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
    name: str = field(metadata=shown("experiment"))
    title: str = field(metadata=shown("what", fmt="long"))
    recovery: str
    trials: int = field(default=0, metadata=shown("trials", fmt="count"))
    failures_observed: int = 0
    lost: int = field(default=0, metadata=shown("rows lost", fmt="count"))
    destroyed: int = field(default=0, metadata=shown("destroyed", fmt="count"))
    half_commits: int = field(default=0, metadata=shown("half commits", fmt="count"))
    orphans_left: int = field(default=0, metadata=shown("orphans left", fmt="count"))
    orphans_removed: int = 0
    recovered: int = field(default=0, metadata=shown("recovered", fmt="count"))
    not_one_line: int = 0
    not_run: str | None = None
    expected_losses: bool = False
    notes: list[str] = field(default_factory=list)
    details: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = field(default=0.0, metadata=shown("seconds", fmt="s1"))
    goal_met: bool = field(default=False, metadata=shown("goal met", fmt="met"))
    when: str = field(default="", metadata=shown("when", unit="(UTC)", fmt="time"))
    git_commit: str | None = field(default=None, metadata=shown("commit", fmt="commit"))
    scale: float | None = field(default=None, metadata=shown("scale", fmt="scale"))
    seed: int | None = None
    cores: int | None = None
