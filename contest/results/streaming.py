"""The typed records of `results/streaming.jsonl` (`contest bench stream`): one line per
kill trial or replay (`kind` fault), per freshness rate (`kind` freshness), per
commit-cost measurement (`kind` metadata) or per boundary-kill or symlink trial (`kind`
boundary), each of one format. `stream_record` reads a
line into the record its kind names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from contest.results.labels import Labels
from contest.results.record import NotARecord, Record
from contest.results.shown import shown, shown_property
from contest.results.stamp import Stamp


@dataclass(frozen=True, kw_only=True)
class StreamRecord(Record):
    """What every line of the streaming file has: the kind, the format, when and where
    it was measured, whether the result was exact, and the load around the sitting
    (older lines have none)."""

    kind: str
    format: str = field(metadata=shown("format", place=-2))
    exact: bool = field(metadata=shown("exact", fmt="check", place=1))
    when: str = ""
    host: str = ""
    master: str | None = None
    sitting: str | None = None

    @shown_property("sitting", fmt="time", place=-1)
    def sitting_text(self) -> str:
        """The sitting, or when the line was written (older lines)."""
        return self.sitting or self.when or "unknown"

    problems: list[str] = field(default_factory=list)
    micro_batches: int | None = None
    # A peer format's sink (`stream.sink`: own, foreach-batch); older lines have none.
    sink: str | None = None
    load_1m_start: float | None = None
    load_1m_end: float | None = None
    stamp: Stamp | None = None

    @shown_property("load", fmt="load", place=2)
    def load_range(self) -> tuple[float | None, float | None]:
        """The one-minute load average at the sitting's start and end."""
        return self.load_1m_start, self.load_1m_end

    @property
    def labels(self) -> Labels:
        return Labels(machine=self.host or "unknown", when=self.when or None)


@dataclass(frozen=True, kw_only=True)
class StreamFault(StreamRecord):
    """A kill trial or replay: files fed and consumed, commits doubled, batches replayed;
    a peer's sink also counts its table's commits and the keys lost or doubled."""

    what: ClassVar[str] = "streaming fault record"
    table: ClassVar[str] = "stream_faults"  # the dashboard's table
    case: str

    @shown_property("case", fmt="long", place=-2)
    def case_text(self) -> str:
        return self.case

    trials: int = field(metadata=shown("trials", fmt="count"))

    @shown_property("files fed / consumed", fmt="pair")
    def files_fed_consumed(self) -> tuple[int | None, int | None]:
        return self.files_fed, self.files_consumed

    files_consumed: int | None
    double_commits: int = field(metadata=shown("double commits", fmt="count"))
    batches_replayed: int = field(metadata=shown("replays skipped", fmt="count"))
    rows: int
    lost_files: int | None = field(default=None, metadata=shown("lost", fmt="count"))
    files_fed: int | None = None
    kills_after_a_commit: int | None = None
    replayed_batch: int | None = None
    table_commits: int | None = field(default=None, metadata=shown("table commits", fmt="count"))
    lost_keys: int | None = field(default=None, metadata=shown("keys lost", fmt="count"))
    double_keys: int | None = field(default=None, metadata=shown("keys twice", fmt="count"))
    # How the micro-batches were counted again after a fix (one sitting's note).
    micro_batches_recounted: str | None = None


@dataclass(frozen=True, kw_only=True)
class StreamFreshness(StreamRecord):
    """Freshness at one feed rate: seconds from a file's arrival to its rows being
    visible (p50, p99, max), and the throughput."""

    what: ClassVar[str] = "streaming freshness record"
    table: ClassVar[str] = "stream_freshness"  # the dashboard's table
    rate_files_s: float
    rows_per_file: int

    @shown_property("feed (files/s × rows)", fmt="feed")
    def feed(self) -> tuple[float, int]:
        return self.rate_files_s, self.rows_per_file

    rows_per_s_fed: float
    files: int = field(metadata=shown("files (n)", fmt="count"))
    micro_batches: int | None = field(default=None, metadata=shown("micro-batches", fmt="count"))
    visible: int
    freshness_p50_s: float = field(metadata=shown("p50", unit="s", fmt="f2"))
    freshness_p99_s: float = field(metadata=shown("p99", unit="s", fmt="f2"))
    freshness_max_s: float | None = field(default=None, metadata=shown("max", unit="s", fmt="f2"))
    rows_per_s: float | None = field(default=None, metadata=shown("rows/s", fmt="int"))
    rows_per_core_s: float | None = field(default=None, metadata=shown("rows/core/s", fmt="int"))
    cores: int | None = None


@dataclass(frozen=True, kw_only=True)
class StreamMetadata(StreamRecord):
    """The cost of a micro-batch commit as the table's history grows."""

    what: ClassVar[str] = "streaming metadata record"
    table: ClassVar[str] = "stream_metadata"  # the dashboard's table
    history_commits: int = field(metadata=shown("commits before", fmt="int"))
    micro_batches: int | None = field(default=None, metadata=shown("micro-batches", fmt="int"))
    window: int
    commit_ms_first: float = field(metadata=shown("first window", unit="ms", fmt="f3"))
    commit_ms_last: float = field(metadata=shown("last window", unit="ms", fmt="f3"))
    last_over_first: float
    commit_ms_p99: float = field(metadata=shown("p99", unit="ms", fmt="f3"))
    head_snapshot_bytes: int = field(metadata=shown("head snapshot bytes", fmt="int"))


@dataclass(frozen=True, kw_only=True)
class StreamBoundary(StreamRecord):
    """Kills at the format's own commit boundary (`--boundary-kills`), or the symlinked
    source trial: the windows the kills landed in, files fed, replays skipped."""

    what: ClassVar[str] = "streaming boundary record"
    table: ClassVar[str] = "stream_faults"  # the dashboard's table
    case: str
    trials: int
    windows: dict[str, int]
    files_fed: int
    batches_replayed: int
    rows: int | None = None
    # Replays the format's own reader did not honour, repaired its way and written again.
    batches_repaired: int = 0

    @property
    def case_text(self) -> str:
        """The case, with the windows the kills landed in."""
        windows = ", ".join(f"{k}: {v}" for k, v in sorted(self.windows.items()))
        return f"{self.case} ({windows})" if windows else self.case

    @property
    def files_fed_consumed(self) -> tuple[int | None, int | None]:
        return self.files_fed, None


STREAM_KINDS: dict[str, type[StreamRecord]] = {
    "boundary": StreamBoundary,
    "fault": StreamFault,
    "freshness": StreamFreshness,
    "metadata": StreamMetadata,
}


def series_key(r: StreamRecord) -> tuple[str, str, float | None, str | None]:
    """What one row of a format's results stands for: its kind, the feed rate of a
    freshness record, the case of a kill trial (several per format and kind; a peer's
    sink apart: contest/benchmarks/stream/peers.py, `sink_of`)."""
    rate = r.rate_files_s if isinstance(r, StreamFreshness) else None
    case = r.case if isinstance(r, StreamFault | StreamBoundary) else None
    return r.format, r.kind, rate, case


def stream_record(raw: dict[str, Any]) -> StreamRecord:
    """A streaming line as the record of its kind."""
    kind = raw.get("kind")
    if kind not in STREAM_KINDS:
        raise NotARecord(f"unknown streaming kind {kind!r} (known: {', '.join(STREAM_KINDS)})")
    return STREAM_KINDS[kind].from_dict(raw)
