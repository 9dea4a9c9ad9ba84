"""Which batches a peer table holds: a small ledger in the table's folder.

A peer format's table does not know the contest's batches, so `contest write --append
--only N` could merge batch N twice (its `requests` counted twice, silently) or merge
an older batch after a newer one (the older `name` winning). The ledger records each
batch's version as `pending` before it is applied and `done` after its commit, so a
write refuses, before anything is written: a version the table holds, a version whose
write stopped half-way (it may or may not be in the table), and, for a format that
applies batches in commit order, a version older than the newest it holds.

The file starts with `_`, the mark of a hidden file to Spark and the formats: no
reader takes it for data, and Delta's VACUUM leaves it alone.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path

from contest.data.batches import Batch
from contest.errors import DataError

LEDGER = "_contest_batches.json"
PENDING, DONE = "pending", "done"
_LOCK = threading.Lock()  # batches applied from a thread pool mark the one file


def load(table: Path) -> dict[int, dict[str, str]] | None:
    """version -> {"batch": name, "state": pending|done}; None when the table has no
    ledger (written before there was one, or not by this harness)."""
    path = table / LEDGER
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a batch ledger ({exc})") from None
    return {int(v): dict(entry) for v, entry in raw.items()}


def refusal(
    ledger: dict[int, dict[str, str]], batches: Sequence[Batch], in_order: bool
) -> str | None:
    """Why these batches must not be applied to a table holding `ledger`, or None.
    `in_order`: the format applies batches in commit order (a key's last write wins)."""
    for b in sorted(batches, key=lambda b: b.version):
        entry = ledger.get(b.version)
        if entry and entry.get("state") == DONE:
            return f"version {b.version} ({b.name}) is already applied"
        if entry:
            return (
                f"version {b.version} ({b.name}) was being applied when a write stopped: "
                "it may be in the table or not"
            )
    done = [v for v, e in ledger.items() if e.get("state") == DONE]
    if in_order and done and batches:
        oldest = min(batches, key=lambda b: b.version)
        if oldest.version < max(done):
            return (
                f"version {oldest.version} ({oldest.name}) is older than version {max(done)} "
                "the table holds, and this format applies batches in commit order"
            )
    return None


def check(table: Path, batches: Sequence[Batch], in_order: bool) -> None:
    """Refuse (one line) batches the ledger says must not be applied to the table the
    folder holds; a table without a ledger cannot be checked, so it is refused too."""
    ledger = load(table)
    if ledger is None:
        raise DataError(
            f"{table}: the table has no batch ledger ({LEDGER}: written before there was "
            "one, or a write stopped in its first batch), so what it holds is unknown; "
            "nothing written (--replace writes the table again from its first batch)"
        )
    why = refusal(ledger, batches, in_order)
    if why:
        raise DataError(
            f"{table}: {why}; nothing written (--replace writes the table again from its "
            "first batch)"
        )


def mark(table: Path, batch: Batch, state: str) -> None:
    """Record the batch's state; replaced atomically, so a crash leaves the old ledger
    or the new one, never half of one. A batch whose apply failed stays `pending`: an
    error may come after the format's commit, so it is not known to be absent."""
    with _LOCK:
        ledger = load(table) or {}
        ledger[batch.version] = {"batch": batch.name, "state": state}
        path = table / LEDGER
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps({str(v): ledger[v] for v in sorted(ledger)}, indent=1))
        os.replace(tmp, path)
