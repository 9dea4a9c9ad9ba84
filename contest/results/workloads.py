"""One typed record per phase of a workload run, as JSON lines: local runs under the
work folder per machine (as `contest evaluate`'s), published ones in
results/workloads/<workload>.jsonl (`contest workload publish`)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contest.errors import DataError
from contest.infra.machine import machine_id
from contest.infra.noise import measured_busy
from contest.results.shown import shown, shown_property

SCHEMA = 1


@dataclass
class PhaseRecord:
    """A phase of one strategy's run; None is "not measured" (a merge has no files,
    a failed phase no rows). `correct` is set for reads only: the result equals the
    oracle at `version` (the batch version the read reports it saw; for a read of the
    head only, a peer's or stock LakeSoul's, the newest batch version upserted).
    `skipped`: why the phase did not run (the strategy has no such operation).
    `policy`: the longevity maintenance policy of its lane (`none`, `every:N`, `auto`),
    each on its own table; None where the workload names none (and in older lines)."""

    workload: str
    run_id: str = field(metadata=shown("run"))
    strategy: str = field(metadata=shown("strategy"))
    step: int  # position in the plan (1-based)
    phase: str  # upsert, read, merge, compact, concurrent-read, concurrent-upsert
    label: str
    round: int = 0  # longevity round (0: an explicit phase)
    policy: str | None = None
    # An `auto` lane's: the format's own trigger of compaction and expiry, in words, or
    # that it has none (contest/workload/maintenance.py).
    auto_maintenance: str | None = None
    # How the lane's jobs ran: "one" long-lived application for all its phases (its
    # first phase pays the start; an `application` record is its whole process), or a
    # process "per-phase"; None in older lines (per phase).
    application: str | None = None
    batch_first: int | None = None
    batch_last: int | None = None
    # batches upserted when the phase ended
    batches_applied: int = field(default=0, metadata=shown("batches applied", fmt="int"))
    seconds: float | None = field(default=None, metadata=shown("seconds", fmt="f2"))
    # A read's own seconds, as its job reports them: JVM and Spark start and stop left
    # out, so what deltas piling up cost stands out of the process's fixed cost.
    job_seconds: float | None = None
    rows: int | None = None
    files_per_bucket: float | None = field(default=None, metadata=shown("files/bucket", fmt="s1"))
    stored_bytes: int | None = None
    # The table's folder after the phase (contest/workload/footprint.py): its data files,
    # its delete, deletion-vector and log files, their bytes, live or not yet expired;
    # its metadata: a peer's log and metadata files, a LakeSoul-style table's rows in
    # PostgreSQL, and their bytes. None where not counted (and in older lines).
    data_files: int | None = None
    delete_files: int | None = None
    data_bytes: int | None = None
    metadata_files: int | None = None
    metadata_rows: int | None = None
    metadata_bytes: int | None = None
    peak_rss_bytes: int | None = None
    version: int | None = None
    correct: bool | None = field(default=None, metadata=shown("correct"))
    ok: bool = True
    error: str | None = None
    skipped: str | None = None
    # A read the strategy refused, in the format's (or the harness's) own one line: a
    # history or change read it cannot answer, never scored as wrong.
    refused: str | None = None
    # A change read's start (`changes`: after `from_version` up to `version`).
    from_version: int | None = None
    scale: float | None = field(default=None, metadata=shown("scale", fmt="scale"))
    when: str = ""
    machine_id: str = ""
    git_commit: str = field(default="", metadata=shown("commit", fmt="commit", place=1))
    # the machine's 1-minute load after the phase
    load1: float | None = field(default=None, metadata=shown("load", fmt="s1"))
    # Measured during the phase's job (contest/infra/noise.py): other work's share of
    # all CPUs (mean, and the highest over any 2 s) and the steal; None for a phase
    # that ran no job (the metadata merge, a skipped phase) and in older lines.
    outside_share: float | None = None
    peak_outside_share: float | None = None
    steal_share: float | None = None
    # The full disclosure (`contest.evaluation.disclosure`, as a benchmark's stamp): the
    # environment (machine facts with the CPU model, every library's version, the JVM
    # libraries) and the strategy's effective configuration, on a lane's first record
    # (and a refused strategy's one record); None on its later ones and in older lines.
    environment: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    schema: int = SCHEMA

    @shown_property("phase", place=-1)
    def phase_text(self) -> str:
        """The phase, marked when it did not run (a peer has no such operation)."""
        return f"{self.phase} (skipped)" if self.skipped else self.phase

    @property
    def lane(self) -> str:
        """The strategy, and its policy where the run named one: a page's row."""
        return f"{self.strategy} ({self.policy})" if self.policy else self.strategy

    @property
    def busy(self) -> str | None:
        """Why the phase's timing is suspect (the evaluation's busy rule), or None."""
        return measured_busy(self.outside_share, self.peak_outside_share, self.steal_share)

    def to_dict(self) -> dict[str, Any]:
        """As written: a record without a disclosure, without its empty keys."""
        out = dataclasses.asdict(self)
        for key in ("environment", "config"):
            if out.get(key) is None:
                out.pop(key)
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> PhaseRecord:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in names})


def local_file(work: Path, workload: str, machine: str | None = None) -> Path:
    """This machine's own workload runs (ignored, like `records.local_runs`)."""
    return work / "results" / (machine or machine_id()) / "workloads" / f"{workload}.jsonl"


def published_file(results: Path, workload: str) -> Path:
    return results / "workloads" / f"{workload}.jsonl"


def append(path: Path, records: Iterable[PhaseRecord]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        for r in records:
            fh.write(json.dumps(r.to_dict(), sort_keys=True) + "\n")


def load(path: Path) -> list[PhaseRecord]:
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(PhaseRecord.from_dict(json.loads(line)))
        except (json.JSONDecodeError, TypeError) as exc:
            raise DataError(f"{path}:{n}: not a workload phase record: {exc}") from None
    return out


def read_kind(p: PhaseRecord) -> str | None:
    """A history read's kind: as of a version, changes between two, the head."""
    if p.phase == "changes":
        return "changes"
    if p.phase == "read":
        return "as of" if "as of" in p.label else "head"
    return None


def head_reads(phases: Sequence[PhaseRecord]) -> list[PhaseRecord]:
    """A run's reads of the head that answered, in order: the first and the last are
    what a workload's page compares (its "last / first")."""
    return [
        p
        for p in phases
        if read_kind(p) == "head" and p.ok and not p.refused and p.seconds is not None
    ]
