"""`contest bench costs`' record: one timed job of one contender at one scale and round,
with its timeline's phases, what the cost model (contest/benchmarks/costs/model.py) is
fitted to."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from contest.results.benchmarks import BenchRecord
from contest.results.labels import Labels, scale_label
from contest.results.shown import shown

# The jobs of a contender: a strategy's two timed jobs, DuckDB's one process.
WRITE, READ, MERGE = "write", "read", "merge"
# The contenders that are not strategies: DuckDB at its defaults (the reference), and
# two trivial spark-submits with the timed jobs' levers (the floor of a run's fixed part,
# which makes no result to beat).
DUCKDB, BARE = "duckdb", "spark-start"


@dataclass(frozen=True, kw_only=True)
class CostRecord(BenchRecord):
    """One job's seconds (the whole process, as the contest times it) and its phases
    (contest/infra/timeline.py: none for DuckDB's process, which prints no marks)."""

    what: ClassVar[str] = "cost record"
    contender: str = field(metadata=shown("contender"))
    scale: float = field(metadata=shown("scale", fmt="scale"))
    rows: int = field(metadata=shown("rows", fmt="int"))
    cores: int
    round: int = field(metadata=shown("round", fmt="count"))
    job: str = field(metadata=shown("job"))
    seconds: float | None = field(metadata=shown("seconds", unit="s", fmt="f3"))
    correct: bool = field(metadata=shown("correct"))
    phases: dict[str, float] = field(default_factory=dict)
    # The share of the machine's CPU used outside the job while it ran (noise).
    outside_share: float | None = None
    error: str | None = None

    @property
    def labels(self) -> Labels:
        return Labels(self.contender, scale_label(self.scale))
