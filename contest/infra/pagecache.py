"""Reading a run's input batches into the page cache before it, untimed, so that every
engine of a sitting starts from the same state. Without it the first run after the data
was generated (or after a peer's large write evicted the batches) reads them from memory
or from disk by chance of its place in the round (results/peers.md, "Order, not drift";
results/notes/duckdb.md: the first run of a sitting is its slowest). A folder larger
than half the available memory is left alone: it would not stay cached, and reading it
would only evict the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

CHUNK = 8 << 20


@dataclass(frozen=True)
class ReadAhead:
    """What one read-ahead did: the bytes it read (0 when left alone) and why not."""

    files: int
    bytes: int
    seconds: float
    skipped: str | None = None


def fits(total: int, available: int) -> bool:
    """Whether `total` bytes are worth reading ahead with `available` bytes free: at
    most half, so the batches stay cached beside the job that reads them."""
    return total <= available // 2


def read_ahead(folder: Path, say: Callable[[str], None], available: int | None = None) -> ReadAhead:
    """Read every file under `folder` once (into the page cache); `available` defaults
    to the machine's available memory."""
    if not folder.is_dir():
        return ReadAhead(0, 0, 0.0, skipped=f"{folder} is not a local folder")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    total = sum(p.stat().st_size for p in files)
    room = psutil.virtual_memory().available if available is None else available
    if not fits(total, room):
        why = f"{total / 1e9:.1f} GB, over half the {room / 1e9:.1f} GB of memory available"
        say(f"page cache: {folder.name} not read ahead ({why})")
        return ReadAhead(len(files), 0, 0.0, skipped=why)
    started = time.monotonic()
    buf = bytearray(CHUNK)
    done = 0
    for path in files:
        with path.open("rb", buffering=0) as f:
            while n := f.readinto(buf):
                done += n
    seconds = time.monotonic() - started
    say(f"page cache: {folder.name} read ahead ({done / 1e9:.2f} GB in {seconds:.1f} s, untimed)")
    return ReadAhead(len(files), done, seconds)
