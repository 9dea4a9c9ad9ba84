"""`contest bench interop`'s records: one table of one format, written by one engine and
read by another (or by its own), checked by the oracle."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from contest.results.benchmarks import BenchRecord
from contest.results.shown import shown

EXACT, WRONG, REFUSED = "exact", "wrong", "refused"
# The table's state when it was read: as its writer left it, or after `contest compact`
# (the format's own compaction) of that table.
WRITTEN, COMPACTED = "written", "compacted"


@dataclass(frozen=True, kw_only=True)
class InteropRecord(BenchRecord):
    """One cell of the interop matrix: `verdict` exact, wrong (with the keys that
    differ, are missing or extra) or refused (the reader's or writer's error, its
    first line). Correctness only: no timings."""

    what: ClassVar[str] = "interop record"
    sitting: str | None = field(default=None, metadata=shown("sitting", fmt="time"))
    family: str = field(metadata=shown("format"))
    writer: str = field(metadata=shown("writer"))
    state: str = field(default=WRITTEN, metadata=shown("table"))
    reader: str = field(metadata=shown("reader"))
    verdict: str = field(metadata=shown("verdict"))
    wrong_keys: int | None = field(default=None, metadata=shown("wrong keys", fmt="count"))
    rows: int | None = None
    error: str = ""
    scale: float | None = None

    @property
    def table(self) -> str:
        """The matrix's row: the writer, and `compacted` after the format's compaction."""
        return self.writer if self.state == WRITTEN else f"{self.writer}, {self.state}"

    @property
    def cell(self) -> str:
        """The matrix's cell: exact, wrong with the count, refused with the error."""
        if self.verdict == WRONG:
            return f"wrong ({self.wrong_keys:,} keys)" if self.wrong_keys else "wrong"
        if self.verdict == REFUSED:
            return f"refused: {self.error}" if self.error else "refused"
        return self.verdict
