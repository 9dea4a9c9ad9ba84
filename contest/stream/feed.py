"""`contest stream feed`: contest-shaped parquet files dropped into a folder at a rate.

File i is the generator's batch shape (contest/data/generator.py): file 0 introduces its
keys, every later one is half new keys and half updates of keys of earlier files, so a
stream of them exercises every merge rule (sums, last non-NULL values, "null" names).
Deterministic by (seed, index, rows): a feed that continues a folder numbers on from the
files there. Each file is written under a hidden name (Spark's file source skips names
beginning with "."), then renamed: the source never sees half a file, and the file's
modification time is its landing time (freshness is measured from it).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from contest.data.generator import DICT_COLUMNS, batch_keys, chunk_table
from contest.errors import UsageError

FEED_RE = re.compile(r"^feed-(\d{6})\.parquet$")


@dataclass(frozen=True)
class FeedReport:
    folder: Path
    files: list[Path]
    rows: int
    seconds: float


def feed_name(index: int) -> str:
    return f"feed-{index:06d}.parquet"


def next_key(index: int, rows: int) -> int:
    """Keys files 0..index-1 introduced: file 0 all its rows, later files half."""
    return 0 if index == 0 else rows + (index - 1) * (rows // 2)


def feed_table(index: int, rows: int, seed: int = 2022) -> pa.Table:
    """The rows of feed file `index`, the same for the same arguments."""
    rng = np.random.Generator(np.random.PCG64([seed, index]))
    keys = batch_keys(index, rows, next_key(index, rows), rng)
    crng = np.random.Generator(np.random.PCG64([seed, index, 0, 1]))
    return chunk_table(keys, crng, seed, nulls=False)


def existing(folder: Path) -> list[int]:
    """Indices of the feed files a folder holds."""
    if not folder.is_dir():
        return []
    return sorted(int(m.group(1)) for p in folder.iterdir() if (m := FEED_RE.match(p.name)))


def write_feed_file(folder: Path, index: int, rows: int, seed: int = 2022) -> Path:
    """Write feed file `index` atomically (hidden name, then rename); its modification
    time is set to the moment it landed."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / feed_name(index)
    if path.exists():
        raise UsageError(f"{path}: exists already (a feed never overwrites a file)")
    tmp = folder / f".{feed_name(index)}.tmp"
    pq.write_table(
        feed_table(index, rows, seed),
        tmp,
        compression="NONE",
        use_dictionary=DICT_COLUMNS,
        write_statistics=False,
    )
    os.replace(tmp, path)
    os.utime(path)  # landed now
    return path


def feed(
    folder: str | Path,
    files: int,
    rows: int,
    interval_s: float,
    seed: int = 2022,
    say: Callable[[str], None] = lambda _m: None,
    stop: Callable[[], bool] = lambda: False,
) -> FeedReport:
    """Drop `files` files of `rows` rows into `folder`, one every `interval_s` seconds
    (on a fixed schedule: a slow write does not shift the later ones), numbering on
    from the feed files already there."""
    if rows < 2 or files < 1:
        raise UsageError("a feed needs at least 1 file of at least 2 rows")
    out = Path(folder)
    have = existing(out)
    first = have[-1] + 1 if have else 0
    started = time.monotonic()
    written = []
    for n in range(files):
        if stop():
            break
        due = started + n * interval_s
        if (wait := due - time.monotonic()) > 0:
            time.sleep(wait)
        written.append(write_feed_file(out, first + n, rows, seed))
        say(f"feed: {written[-1].name} ({rows:,} rows)")
    return FeedReport(out, written, rows * len(written), time.monotonic() - started)
