"""Erasure checks for change tables: which rows may no longer be on disk after a
compaction and a vacuum. Each row of the test's change files carries a marker of its
own (its `hostname`), so a row from before a key's last delete is found wherever a
file still holds it, whatever the format did to the other columns."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.parquet as pq

MARKER = "hostname"
KEY = "uuid"


def forbidden(batches: list[list[dict]], delete: str = "delete") -> tuple[set, set]:
    """(keys whose last row is a delete, markers of rows at or before a live key's
    last delete): batches in version order, rows in file order."""
    last_delete: dict[str, int] = {}
    rows = [r for batch in batches for r in batch]
    for i, r in enumerate(rows):
        if r["op"] == delete:
            last_delete[r[KEY]] = i
    last_op = {r[KEY]: r["op"] for r in rows}
    gone = {k for k, op in last_op.items() if op == delete}
    stale = {
        r[MARKER]
        for i, r in enumerate(rows)
        if r[KEY] not in gone and i <= last_delete.get(r[KEY], -1) and r.get(MARKER)
    }
    return gone, stale


def parquet_files(root: Path, skip: tuple[str, ...] = ()) -> list[Path]:
    """Every Parquet file under the table's folder, its metadata folders (`skip`) left
    out: the live files and whatever else is still on disk."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        out += [Path(folder) / n for n in files if n.endswith(".parquet")]
    return sorted(out)


def leftovers(
    root: Path, gone: set, stale: set, skip: tuple[str, ...] = (), tombstones: bool = False
) -> list[str]:
    """One line per file row that should have been erased: a deleted key's row
    (tombstones included, unless `tombstones`: a deleted key's row without a payload
    may stay) or a row from before a live key's last delete. Files without the key
    column (Iceberg's position deletes) name no key."""
    found = []
    for path in parquet_files(root, skip):
        names = pq.read_schema(path).names
        if KEY not in names:
            continue
        cols = [KEY] + ([MARKER] if MARKER in names else [])
        for r in pq.read_table(path, columns=cols).to_pylist():
            tombstone = tombstones and r[KEY] in gone and r.get(MARKER) is None
            if (r[KEY] in gone and not tombstone) or r.get(MARKER) in stale:
                found.append(f"{path.relative_to(root)}: {r}")
    return found
