"""Which batches a peer table holds: a small ledger in the table's folder.

A peer format's table does not know the contest's batches, so `contest write --append
--only N` could merge batch N twice (its `requests` counted twice, silently) or merge
an older batch after a newer one (the older `name` winning). The ledger records each
batch's version as `pending` before it is applied and `done` after its commit, so a
write refuses, before anything is written: a version the table holds, a version whose
write stopped half-way (it may or may not be in the table), and, for a format that
applies batches in commit order, a version older than the newest it holds.

Each done batch also records the format's id of the commit that holds it (`commit`,
`PeerFormat.commit_id`), the order it was recorded in (`seq`) and, for batches applied
at once by a concurrent format, their `group` (their commits' order among themselves is
unknown): `commit_for` maps a version to the commit holding exactly the batches up to
it, and refuses one no commit holds that way.

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
from contest.errors import DataError, ReadError

LEDGER = "_contest_batches.json"
PENDING, DONE = "pending", "done"
# The format refused the batch's schema change (PeerFormat.evolve): nothing of it was
# written, and no later batch may be applied over the gap it leaves.
REFUSED = "refused"
_LOCK = threading.Lock()  # batches applied from a thread pool mark the one file


Entry = dict[str, object]


def load(table: Path) -> dict[int, Entry] | None:
    """version -> {"batch": name, "state": pending|done, ["commit", "seq", "group"]};
    None when the table has no ledger (written before there was one, or not by this
    harness)."""
    path = table / LEDGER
    try:
        raw = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: not a batch ledger ({exc})") from None
    return {int(v): dict(entry) for v, entry in raw.items()}


def refusal(ledger: dict[int, Entry], batches: Sequence[Batch], in_order: bool) -> str | None:
    """Why these batches must not be applied to a table holding `ledger`, or None.
    `in_order`: the format applies batches in commit order (a key's last write wins)."""
    refused = sorted(v for v, e in ledger.items() if e.get("state") == REFUSED)
    if refused and batches:
        return (
            f"version {refused[0]} ({ledger[refused[0]].get('batch')}) was refused by the "
            f"format ({ledger[refused[0]].get('why', 'its schema change')}): the table "
            "lacks it, and a later batch would be applied over the gap"
        )
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


def mark(
    table: Path,
    batch: Batch,
    state: str,
    commit: str | None = None,
    group: int | None = None,
    why: str | None = None,
) -> None:
    """Record the batch's state (and, done, the commit holding it, `group`: applied at
    once with others); replaced atomically, so a crash leaves the old ledger or the new
    one, never half of one. A batch whose apply failed stays `pending`: an error may come
    after the format's commit, so it is not known to be absent."""
    with _LOCK:
        ledger = load(table) or {}
        entry: Entry = {"batch": batch.name, "state": state}
        if state == DONE:
            entry["seq"] = 1 + max((_int(e.get("seq")) for e in ledger.values()), default=0)
            if commit is not None:
                entry["commit"] = commit
            if group is not None:
                entry["group"] = group
        if why is not None:
            entry["why"] = why
        ledger[batch.version] = entry
        _save(table, ledger)


def set_commit(table: Path, versions: Sequence[int], commit: str) -> None:
    """The commit that holds these (done) versions: the table's newest after a group
    of concurrent batches all committed."""
    with _LOCK:
        ledger = load(table) or {}
        for v in versions:
            if v in ledger:
                ledger[v]["commit"] = commit
        _save(table, ledger)


def _save(table: Path, ledger: dict[int, Entry]) -> None:
    path = table / LEDGER
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({str(v): ledger[v] for v in sorted(ledger)}, indent=1))
    os.replace(tmp, path)


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def commit_for(ledger: dict[int, Entry], version: int) -> str:
    """The commit that holds exactly the batches of versions up to `version` (a read as
    of it), or ReadError saying why none does: no batch at or before it; a batch
    pending or without a recorded commit; a newer batch committed before an older one
    (a concurrent format, or an --append of an older version after a newer one); the
    version inside a group of batches applied at once (their order unknown)."""
    done = {v: e for v, e in ledger.items() if e.get("state") == DONE}
    upto = [v for v in done if v <= version]
    if not upto:
        raise ReadError(f"version {version}: the table holds no batch at or before it")
    pending = sorted(v for v, e in ledger.items() if e.get("state") != DONE and v <= version)
    if pending and ledger[pending[0]].get("state") == REFUSED:
        raise ReadError(
            f"version {pending[0]} was refused by the format "
            f"({ledger[pending[0]].get('why', 'its schema change')}): the table lacks it"
        )
    if pending:
        raise ReadError(f"version {pending[0]} was being applied when a write stopped")
    last = max(upto, key=lambda v: _int(done[v].get("seq")))
    seq = _int(done[last].get("seq"))
    early = sorted(v for v, e in done.items() if v > version and _int(e.get("seq")) <= seq)
    group = done[last].get("group")
    if group is not None:
        inside = sorted(v for v, e in done.items() if e.get("group") == group and v > version)
        if inside:
            members = sorted(v for v, e in done.items() if e.get("group") == group)
            raise ReadError(
                f"version {version}: versions {members[0]}-{members[-1]} were applied at "
                "once (write.threads > 1), committing in an unknown order, so no commit "
                f"holds exactly the batches up to {version}"
            )
    if early:
        raise ReadError(
            f"version {version}: version {early[0]} committed before version {last}, so no "
            f"commit holds exactly the batches up to {version}"
        )
    commit = done[last].get("commit")
    if commit is None:
        raise ReadError(f"version {last}: no commit of the format was recorded for it")
    return str(commit)


def newest(ledger: dict[int, Entry]) -> int | None:
    """The newest version the table holds (what its head read answers)."""
    done = [v for v, e in ledger.items() if e.get("state") == DONE]
    return max(done, default=None)
