"""The page of the stream kill trials at each format's own commit boundary
(contest/trials/stream/boundary.py): its table in streaming.md."""

from __future__ import annotations

from collections.abc import Sequence

from contest.results.streaming import StreamBoundary, StreamRecord
from contest.trials.stream.boundary import BOTH, EMPTY_INSTANT, TABLE_ONLY


def _label(r: StreamRecord) -> str:
    """The row's format, and a peer's sink (older lines name none: the format's default
    then, the only sink it had)."""
    if not r.sink or r.format.startswith("lakesoul"):
        return r.format
    return f"{r.format}, {r.sink}"


def render_boundary(rows: Sequence[StreamRecord]) -> list[str]:
    """The boundary-kill table (empty when none ran)."""
    cases = [r for r in rows if isinstance(r, StreamBoundary)]
    if not cases:
        return []
    lines = [
        "",
        "## Kills at each format's own commit boundary, and a symlinked source",
        "",
        "`--boundary-kills N`: the bench polls the table's own commit record every few "
        "milliseconds (LakeSoul's commit row in PostgreSQL, Delta's `_delta_log` file, "
        "Hudi's completed instant, Paimon's snapshot file) and kill -9s the stream the "
        "moment a new one appears (no pause after the commit), restarts it from its "
        "checkpoint while the feed goes on (2 files/s), then drains the folder and "
        "compares the table with the oracle over every fed file. Windows: what the kill "
        f"left: `{TABLE_ONLY}` (the replay window), `{BOTH}` (the kill came later), "
        f"`{EMPTY_INSTANT}` (Hudi 1.0.2's completed instant created, not yet filled). "
        "Then a new checkpoint over the same folder through a symlink; then new tables "
        "each killed at their first commit record (the table's creation and first "
        "commit), and a table killed at its commits after `contest compact`. A replay is "
        "verified, never assumed: before a sink skips a batch as committed, the format's "
        "own reader reads that commit; one it does not honour is repaired the format's "
        "way and written again (`replays repaired`), or the stream stops in one line. "
        "Correctness, not timing.",
        "",
        "| format | case | sitting | kills | windows the kills landed in | files fed "
        "| replays skipped | replays repaired | table = oracle |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in cases:
        windows = ", ".join(f"{k}: {v}" for k, v in sorted(r.windows.items()))
        verdict = "yes" if r.exact else "NO: " + "; ".join(r.problems)
        lines.append(
            f"| {_label(r)} | {r.case} | {r.sitting or '-'} | {r.trials} "
            f"| {windows or '-'} | {r.files_fed} | {r.batches_replayed} "
            f"| {r.batches_repaired} | {verdict} |"
        )
    return lines
