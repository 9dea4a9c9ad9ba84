"""The typed records of `results/streaming.jsonl` (`contest bench stream`): one line per
kill trial or replay (`kind` fault), per freshness rate (`kind` freshness), per
commit-cost measurement (`kind` metadata) or per boundary-kill or symlink trial (`kind`
boundary), each of one format. `stream_record` reads a
line into the record its kind names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from contest.results.record import NotARecord, Record
from contest.results.stamp import Stamp


@dataclass(frozen=True, kw_only=True)
class StreamRecord(Record):
    """What every line of the streaming file has: the kind, the format, when and where
    it was measured, whether the result was exact, and the load around the sitting
    (older lines have none)."""

    kind: str
    format: str
    exact: bool
    when: str = ""
    host: str = ""
    master: str | None = None
    sitting: str | None = None
    problems: list[str] = field(default_factory=list)
    micro_batches: int | None = None
    # A peer format's sink (`stream.sink`: own, foreach-batch); older lines have none.
    sink: str | None = None
    load_1m_start: float | None = None
    load_1m_end: float | None = None
    stamp: Stamp | None = None


@dataclass(frozen=True, kw_only=True)
class StreamFault(StreamRecord):
    """A kill trial or replay: files fed and consumed, commits doubled, batches replayed;
    a peer's sink also counts its table's commits and the keys lost or doubled."""

    what: ClassVar[str] = "streaming fault record"
    case: str
    trials: int
    files_consumed: int | None
    double_commits: int
    batches_replayed: int
    rows: int
    lost_files: int | None = None
    files_fed: int | None = None
    kills_after_a_commit: int | None = None
    replayed_batch: int | None = None
    table_commits: int | None = None
    lost_keys: int | None = None
    double_keys: int | None = None
    # How the micro-batches were counted again after a fix (one sitting's note).
    micro_batches_recounted: str | None = None


@dataclass(frozen=True, kw_only=True)
class StreamFreshness(StreamRecord):
    """Freshness at one feed rate: seconds from a file's arrival to its rows being
    visible (p50, p99, max), and the throughput."""

    what: ClassVar[str] = "streaming freshness record"
    rate_files_s: float
    rows_per_file: int
    rows_per_s_fed: float
    files: int
    visible: int
    freshness_p50_s: float
    freshness_p99_s: float
    freshness_max_s: float | None = None
    rows_per_s: float | None = None
    rows_per_core_s: float | None = None
    cores: int | None = None


@dataclass(frozen=True, kw_only=True)
class StreamMetadata(StreamRecord):
    """The cost of a micro-batch commit as the table's history grows."""

    what: ClassVar[str] = "streaming metadata record"
    history_commits: int
    window: int
    commit_ms_first: float
    commit_ms_last: float
    last_over_first: float
    commit_ms_p99: float
    head_snapshot_bytes: int


@dataclass(frozen=True, kw_only=True)
class StreamBoundary(StreamRecord):
    """Kills at the format's own commit boundary (`--boundary-kills`), or the symlinked
    source trial: the windows the kills landed in, files fed, replays skipped."""

    what: ClassVar[str] = "streaming boundary record"
    case: str
    trials: int
    windows: dict[str, int]
    files_fed: int
    batches_replayed: int
    rows: int | None = None


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
