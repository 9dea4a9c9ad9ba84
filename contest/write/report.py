"""What a write reports: per batch and in all, for people (summary, timeline, log lines)
and for machines (JSON)."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, field

from contest.errors import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError, unwrap_spark_error

log = logging.getLogger("contest.write")


@dataclass
class BatchResult:
    batch: str
    version: int
    rows: int = 0
    files: int = 0
    bytes: int = 0
    shuffled: bool = False
    parts: int = 0  # a big batch's parts, or a batch's pieces (0: one a row group)
    write_s: float = 0.0
    commit_s: float = 0.0
    start_s: float = 0.0
    end_s: float = 0.0
    commit_id: str | None = None
    commit_retries: int = 0
    null_keys_dropped: int = 0
    skipped: bool = False  # --resume: its version was already committed
    error: str | None = None
    bad_input: bool = False  # the error is the input's (exit 2), not the run's


@dataclass
class WriteReport:
    table: str
    path: str
    batches: list[BatchResult] = field(default_factory=list)
    wall_s: float = 0.0
    # What to do after a failure, as the summary line says it.
    retry_hint: str = "rerun with --resume to finish"

    @property
    def ok(self) -> bool:
        return all(b.error is None for b in self.batches)

    @property
    def exit_code(self) -> int:
        """0 all committed; 2 when every failure is bad input (a file, a NULL key); else 1."""
        if self.ok:
            return EXIT_OK
        return EXIT_USAGE if all(b.bad_input for b in self.failed) else EXIT_FAILED

    @property
    def failed(self) -> list[BatchResult]:
        return [b for b in self.batches if b.error is not None]

    def summary(self) -> str:
        """One line: how many committed, skipped and failed, and the first failure."""
        done = sum(1 for b in self.batches if b.commit_id)
        skipped = sum(1 for b in self.batches if b.skipped)
        line = (
            f"wrote {self.table}: {done} of {len(self.batches)} batches committed"
            + (f", {skipped} skipped (already committed)" if skipped else "")
            + f" in {self.wall_s:.3f} s"
        )
        if self.failed:
            names = ", ".join(b.batch for b in self.failed)
            line += (
                f"; FAILED {len(self.failed)} ({names}), nothing committed for them: "
                f"{self.failed[0].error} -- {self.retry_hint}"
            )
        return line

    def warnings(self) -> list[str]:
        """One line per batch committed with no rows (an empty version)."""
        return [
            f"{b.batch} (version {b.version}) had no rows: committed as an empty version"
            for b in self.batches
            if b.commit_id and b.rows == 0
        ]

    def to_dict(self) -> dict:
        return {
            "table": self.table,
            "path": self.path,
            "ok": self.ok,
            "failed": [b.batch for b in self.failed],
            "wall_s": round(self.wall_s, 3),
            "batches": [
                {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(b).items()}
                for b in self.batches
            ],
        }


def timeline(report: WriteReport, width: int = 50) -> str:
    """One bar per batch over the job's wall time: overlapping bars ran together."""
    total = max(report.wall_s, 1e-9)
    lines = []
    for b in sorted(report.batches, key=lambda r: r.start_s):
        a = int(b.start_s / total * width)
        z = max(a + 1, int(b.end_s / total * width))
        mark = "x" if b.error else "-" if b.skipped else "#"
        lines.append(
            f"  {b.batch:>15} v{b.version:<4} |{' ' * a}{mark * (z - a)}"
            f"{' ' * (width - z)}| {b.start_s:6.2f}-{b.end_s:6.2f}s"
        )
    return "\n".join(lines)


def fail(res: BatchResult, exc: BaseException) -> None:
    """Record a batch's failure: one line naming the cause (also when it was raised
    inside a Spark task), and whether it is the input's fault."""
    unwrapped = unwrap_spark_error(exc)
    cause = unwrapped if unwrapped is not None else exc
    lines = [ln.strip() for ln in str(cause).splitlines() if ln.strip()]
    res.error = lines[0][:500] if lines else type(cause).__name__
    res.bad_input = isinstance(cause, UsageError)


def log_batch(r: BatchResult) -> None:
    if r.error:
        log.error("%s v%d: FAILED, nothing committed: %s", r.batch, r.version, r.error)
        return
    if r.skipped:
        log.info("%s v%d: already committed, skipped", r.batch, r.version)
        return
    log.info(
        "%s v%d: %d rows, %d files, %d bytes, %s, write %.2fs, commit %.3fs%s",
        r.batch,
        r.version,
        r.rows,
        r.files,
        r.bytes,
        _layout(r),
        r.write_s,
        r.commit_s,
        f", {r.null_keys_dropped} NULL-key rows dropped" if r.null_keys_dropped else "",
    )


def _layout(r: BatchResult) -> str:
    if r.shuffled:
        return f"repartitioned by key into {r.parts} parts" if r.parts else "repartitioned by key"
    return f"no shuffle, {r.parts} parts by row range" if r.parts else "no shuffle"
