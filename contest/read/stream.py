"""Merge-on-read of one hash bucket in bounded memory: a k-way merge of sorted files.

The write stage writes every bucket file sorted by the primary key (and says so in the
file's footer, parquet's `sorting_columns`), so all rows of the keys below any key K sit
in a prefix of every file. The merge reads each file `chunk_rows` rows at a time and
repeats:

  cut-off = the smallest last buffered key among the files that still have unread rows
            (none once every file's rest is buffered);
  window  = from every file, in application order, its buffered rows with key strictly
            below the cut-off (a prefix of the buffer; strictly, because the cut-off key
            may go on in its file's next chunk); when that is empty, the files whose
            buffer ends on the cut-off key read one chunk more;
  merge   = the window through `merge_rows`, the same operators as a whole bucket.

All the rows of a key fall in one window, in application order, so the result is the
merge of the whole bucket, in memory of the order of files x chunk_rows, not of the bucket.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from contest.data.dictionaries import concat_tables
from contest.errors import RunError
from contest.read.merges import merge_parts
from contest.read.operators import merge_rows

# Bytes a buffered row costs at its peak, per uncompressed byte in the file: the buffer,
# its slice in the window, the window's concatenation, merge_rows's take() of each column.
WORKING_SET_FACTOR = 4
MIN_CHUNK_ROWS = 1024
MAX_CHUNK_ROWS = 1 << 20
# Bytes an open file reads at a time inside a column chunk. Unbuffered, pyarrow reads a
# whole column chunk before decoding its first page, and the table's files are one row
# group each: every open file would cost its whole size, the bucket rather than a window
# of it. Scale 10's read (22 files a bucket), in-process: unbuffered 178 s and 8.2 GB per
# task process; 1 MiB 224 s, 2.8 GB; 8 MiB 150 s, 3.5 GB (results/NOTES.md).
READ_BUFFER_BYTES = 8 << 20
# The least a read buffer is given when the budget is shared among many runs: pyarrow's
# data pages are about 1 MiB, and a buffer below a page reads it in pieces.
MIN_READ_BUFFER_BYTES = 1 << 20


def read_buffer_bytes(budget_bytes: int, files: int, columns: int, fixed: int = 0) -> int:
    """Bytes each open file's column reader buffers: `fixed` when set (read.buffer_bytes),
    else the merge budget's share, `budget_bytes / (files x columns)`, between
    MIN_READ_BUFFER_BYTES and READ_BUFFER_BYTES. The buffers are held for every run of a
    bucket at once, so a fixed size made a task's memory grow with the runs a bucket has
    (scale 10: 120-130 runs x 7 columns x 8 MiB, ~7 GB a task)."""
    if fixed > 0:
        return fixed
    share = budget_bytes // max(1, files * columns)
    return int(min(READ_BUFFER_BYTES, max(MIN_READ_BUFFER_BYTES, share)))


def chunk_rows(budget_bytes: int, row_bytes: Sequence[float]) -> int:
    """Rows to read from each file at a time so that every file's buffer together fits
    `budget_bytes` (`row_bytes`: uncompressed bytes a row of each file)."""
    per_round = sum(row_bytes) * WORKING_SET_FACTOR
    if per_round <= 0:
        return MAX_CHUNK_ROWS
    return int(min(MAX_CHUNK_ROWS, max(MIN_CHUNK_ROWS, budget_bytes // per_round)))


def declares_sorted(metadata: Any, key_index: int) -> bool:
    """Whether every row group of a parquet file says it is sorted ascending by the
    column `key_index` (parquet's sorting_columns, written by the write stage)."""
    if metadata.num_row_groups == 0:
        return True
    for g in range(metadata.num_row_groups):
        cols = metadata.row_group(g).sorting_columns
        if not cols or cols[0].column_index != key_index or cols[0].descending:
            return False
    return True


def row_bytes(metadata: Any) -> float:
    """Uncompressed bytes a row, from the file's footer."""
    rows = metadata.num_rows
    size = sum(metadata.row_group(g).total_byte_size for g in range(metadata.num_row_groups))
    return size / rows if rows else 0.0


class SortedRun:
    """One sorted file, read `rows` rows at a time, each chunk conformed to the table's
    schema and checked to continue the file's order (a file that breaks it is an error:
    its footer says otherwise)."""

    def __init__(
        self,
        name: str,
        parquet_file: Any,
        key: str,
        rows: int,
        conform: Callable[[pa.Table], pa.Table],
    ):
        self.name = name
        self.key = key
        self.left = parquet_file.metadata.num_rows  # rows not read into the buffer yet
        self._chunks = parquet_file.iter_batches(batch_size=rows, use_threads=False)
        self._conform = conform
        self._last: Any = None  # the last key read so far
        self.buf: pa.Table | None = None

    def _next_chunk(self) -> pa.Table:
        try:
            batch = next(self._chunks)
        except (OSError, pa.ArrowException) as exc:
            raise RunError(
                f"committed data file {self.name} cannot be read, it is damaged "
                f"({type(exc).__name__}: {str(exc).strip()[:200]})"
            ) from None
        self.left -= batch.num_rows
        chunk = self._conform(pa.Table.from_batches([batch]))
        keys = chunk.column(self.key)
        if keys.null_count:
            raise RunError(f"{self.name}: NULL primary key in a file sorted by {self.key}")
        n = len(keys)
        if n:
            first, last = keys[0].as_py(), keys[n - 1].as_py()
            if (self._last is not None and first < self._last) or (
                n > 1 and pc.any(pc.less(keys.slice(1), keys.slice(0, n - 1))).as_py()
            ):
                raise RunError(
                    f"{self.name}: its footer says it is sorted by {self.key}, but it is not"
                )
            self._last = last
        return chunk

    def fill(self) -> None:
        while (self.buf is None or self.buf.num_rows == 0) and self.left > 0:
            self.buf = self._next_chunk()

    def grow(self) -> None:
        chunk = self._next_chunk()
        assert self.buf is not None
        self.buf = pa.concat_tables([self.buf, chunk]).combine_chunks()

    @property
    def rows(self) -> int:
        return 0 if self.buf is None else self.buf.num_rows

    def last_key(self) -> Any:
        assert self.buf is not None
        return self.buf.column(self.key)[self.buf.num_rows - 1].as_py()

    def take_below(self, cutoff: Any) -> pa.Table | None:
        """Remove and return the buffered prefix with keys < cutoff (all when None)."""
        assert self.buf is not None
        if cutoff is None:
            n = self.buf.num_rows
        else:
            n = count_below(self.buf.column(self.key), cutoff)
        if n == 0:
            return None
        out = self.buf.slice(0, n)
        self.buf = self.buf.slice(n)
        return out


class _Keys:
    """A sorted key column as a sequence of Python values, for bisect."""

    def __init__(self, keys: pa.ChunkedArray | pa.Array):
        self.keys = keys

    def __len__(self) -> int:
        return len(self.keys)

    def __getitem__(self, i: int) -> Any:
        return self.keys[i].as_py()


def count_below(keys: pa.ChunkedArray | pa.Array, cutoff: Any) -> int:
    """How many of the sorted `keys` are below `cutoff`: a binary search (about 20
    values read), not a comparison of the whole buffer. Every window compared every
    run's buffer, so a bucket of many runs (scale 10: 100 a bucket) spent a third of
    its read in it (py-spy). Python's order of str is UTF-8's byte order, Arrow's."""
    return bisect.bisect_left(_Keys(keys), cutoff)


def merge_sorted_runs(
    runs: Sequence[SortedRun],
    key: str,
    ops: Mapping[str, str],
    method: str = "numpy",
    keep_dictionaries: bool = False,
) -> Iterator[pa.Table]:
    """The merged rows of sorted runs given in application order, window by window
    (`method`: read.merge, contest/read/merges.py; `keep_dictionaries`: see
    merge_rows)."""
    while True:
        for run in runs:
            run.fill()
        active = [r for r in runs if r.rows]
        if not active:
            return
        open_lasts = [r.last_key() for r in active if r.left > 0]
        cutoff = min(open_lasts) if open_lasts else None
        parts = [p for p in (r.take_below(cutoff) for r in active) if p is not None]
        if not parts:  # every buffered row holds the cut-off key: read on
            for r in active:
                if r.left > 0 and r.last_key() == cutoff:
                    r.grow()
            continue
        if method != "numpy":
            yield merge_parts(method, parts, [key], ops)
            continue
        yield merge_rows(concat_tables(parts), [key], ops, keep_dictionaries)
