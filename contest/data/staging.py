"""A user's files made batches (`workload.files_per_batch`, `workload.order_column`):
consecutive files grouped into one batch (one commit), and with an order column (a log
position or a timestamp, as Debezium's `source.lsn` or `ts_ms`) the files ordered by
their ranges of it, files whose ranges overlap refused, and each batch's rows ordered by
it (stably: rows of equal positions keep the file's order, the contract's order rule).

The batches are written once, untimed, as `base-N.parquet` in the work folder (kept,
keyed by the files and the two settings, as generated data is), so every strategy, the
oracle and the checker read the same batches; the user's files are only read. A batch
of whole files is copied a row group at a time (memory bounded by one row group); a
batch ordered by a column is read whole to be sorted (memory bounded by one batch)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contest.config import WorkloadConfig
from contest.data.batches import natural_key
from contest.errors import DataError
from contest.infra.folders import folder_name, join, kind, list_files, open_input

# Written last in a staged folder (the batches' files, by name): the folder is complete,
# and a folder holding it is batches already (a command handing staged batches to
# another, as `bench peers` to `evaluate`, does not stage them again).
MARKER = ".staged"


@dataclass(frozen=True)
class Source:
    """One of the user's files: where it is, what it holds, and its range of the order
    column (None without one)."""

    name: str
    uri: str
    bytes: int
    mtime_ns: int
    rows: int
    schema: pa.Schema
    low: Any = None
    high: Any = None


def needed(w: WorkloadConfig) -> bool:
    """Whether the files are staged at all: one file a batch in name order is read as
    it is."""
    return w.files_per_batch > 1 or bool(w.order_column)


def ordered(sources: Sequence[Source], column: str) -> list[Source]:
    """The files by their ranges of `column` (ties in natural name order); refused in one
    line when two ranges overlap, since no order of whole files is then the log's."""
    if not column:
        return list(sources)
    out = sorted(sources, key=lambda s: (s.low, s.high, natural_key(s.name)))
    for before, after in zip(out, out[1:], strict=False):
        if after.low < before.high:
            raise DataError(
                f"{after.uri}: its {column} range [{after.low}, {after.high}] overlaps "
                f"{before.name}'s [{before.low}, {before.high}]: files ordered by "
                "workload.order_column must not overlap"
            )
    return out


def grouped(sources: Sequence[Source], per_batch: int) -> list[list[Source]]:
    """Consecutive files, `per_batch` to a batch (the last batch may hold fewer); the
    files of one batch hold the same columns of the same types (a batch is one commit of
    one set of columns: a partial batch's absent columns are not NULLs)."""
    groups = [list(sources[i : i + per_batch]) for i in range(0, len(sources), per_batch)]
    for group in groups:
        first = group[0]
        for other in group[1:]:
            if not other.schema.equals(first.schema):
                raise DataError(
                    f"{other.uri}: its columns ({describe(other.schema)}) differ from "
                    f"{first.name}'s ({describe(first.schema)}) in one batch "
                    f"(workload.files_per_batch={per_batch}): a batch's files hold the same "
                    "columns"
                )
    return groups


def describe(schema: pa.Schema) -> str:
    return ", ".join(f"{f.name} {f.type}" for f in schema)


def column_range(uri: str, meta: pq.FileMetaData, column: str) -> tuple[Any, Any]:
    """A file's lowest and highest value of `column`: its row groups' statistics, or the
    column read alone when a row group has none. NULLs are refused: a row without a
    position has no place in the log."""
    names = meta.schema.to_arrow_schema().names
    if column not in names:
        raise DataError(f"{uri}: no column {column} (workload.order_column)")
    index = names.index(column)
    lows, highs, nulls = [], [], 0
    for g in range(meta.num_row_groups):
        stats = meta.row_group(g).column(index).statistics
        if stats is None or not stats.has_min_max or not stats.has_null_count:
            return _read_range(uri, column)
        nulls += stats.null_count
        lows.append(stats.min)
        highs.append(stats.max)
    if nulls:
        raise DataError(f"{uri}: {nulls:,} row(s) with a NULL {column} (workload.order_column)")
    if not lows:
        return None, None
    return min(lows), max(highs)


def _read_range(uri: str, column: str) -> tuple[Any, Any]:
    with open_input(uri) as fh:
        values = pq.read_table(fh, columns=[column]).column(column)
    if values.null_count:
        raise DataError(
            f"{uri}: {values.null_count:,} row(s) with a NULL {column} (workload.order_column)"
        )
    if len(values) == 0:
        return None, None
    bounds = pc.min_max(values)
    return bounds["min"].as_py(), bounds["max"].as_py()


def sources(folder: str, column: str) -> list[Source]:
    """The folder's parquet files in natural name order, each with its footer's counts
    and, with an order column, its range (nothing but footers read, unless a file has
    no statistics for the column)."""
    out = [
        source_of(entry.uri, column, entry.size, entry.mtime_ns)
        for entry in sorted(list_files(folder), key=natural_key)
        if entry.name.endswith(".parquet")
    ]
    if not out:
        raise DataError(f"{folder}: no *.parquet files to make batches of")
    return out


def source_of(uri: str, column: str, size: int = 0, mtime_ns: int = 0) -> Source:
    """One file's footer counts and, with an order column, its range of it."""
    try:
        with open_input(uri) as fh:
            meta = pq.read_metadata(fh)
    except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for non-parquet
        raise DataError(f"{uri}: not a parquet file ({exc.__class__.__name__})") from None
    low, high = column_range(uri, meta, column) if column else (None, None)
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    schema = meta.schema.to_arrow_schema()
    return Source(name, uri, size, mtime_ns, meta.num_rows, schema, low, high)


def stage_key(folder: str, found: Sequence[Source], w: WorkloadConfig) -> str:
    """The staged batches' identity: the files (names, sizes, times) and the settings."""
    files = [[s.name, s.bytes, s.mtime_ns] for s in found]
    ident = json.dumps([folder, files, w.files_per_batch, w.order_column])
    return hashlib.sha256(ident.encode()).hexdigest()[:10]


def write_batch(group: Sequence[Source], column: str, out: Path) -> int:
    """One batch file from a group of files: copied a row group at a time, or, with an
    order column, read whole and sorted by it (stably). Returns its rows."""
    tmp = out.with_name(out.name + ".part")
    schema = group[0].schema
    rows = 0
    if column:
        tables = []
        for src in group:
            with open_input(src.uri) as fh:
                tables.append(pq.read_table(fh))
        table = pa.concat_tables(tables)
        order = pc.sort_indices(table, sort_keys=[(column, "ascending")])  # a stable sort
        pq.write_table(table.take(order), tmp)
        rows = table.num_rows
    else:
        with pq.ParquetWriter(tmp, schema) as writer:
            held: list[pa.Table] = []
            for src in group:
                with open_input(src.uri) as fh:
                    reader = pq.ParquetFile(fh)
                    for g in range(reader.num_row_groups):
                        part = reader.read_row_group(g)
                        held.append(part)
                        rows += part.num_rows
                        if sum(t.num_rows for t in held) >= STAGED_ROW_GROUP_ROWS:
                            _flush(writer, held)
            _flush(writer, held)
    tmp.replace(out)
    return rows


# Rows of a staged batch's row group: small files' row groups gathered into groups of
# this many (a thousand files of three rows as one group, not a thousand groups, each
# of which the write would make a task and a file), large ones copied about as they are.
STAGED_ROW_GROUP_ROWS = 1 << 20


def _flush(writer: pq.ParquetWriter, held: list[pa.Table]) -> None:
    """The held row groups written as one (then forgotten)."""
    if held:
        writer.write_table(pa.concat_tables(held).combine_chunks(), STAGED_ROW_GROUP_ROWS)
        held.clear()


def staged(
    data: str | Path, w: WorkloadConfig, work: Path, say: Callable[[str], None]
) -> str | Path:
    """The batches of a data folder under the workload's grouping and order: the folder
    itself when neither is set, else its staged batches (written now unless kept)."""
    if not needed(w):
        return data
    folder = folder_name(data)
    if kind(folder) != "folder":
        raise DataError(f"{data}: no such data folder")
    if kind(join(folder, MARKER)) == "file":
        return data
    found = sources(folder, w.order_column)
    groups = grouped(ordered(found, w.order_column), w.files_per_batch)
    target = work / "data" / f"staged-{stage_key(folder, found, w)}"
    if (target / MARKER).exists():
        return target
    how = f"{w.files_per_batch} file(s) a batch"
    if w.order_column:
        how += f", ordered by {w.order_column}"
    say(f"staging {len(found)} file(s) of {folder} as {len(groups)} batch(es) ({how}) in {target}")
    target.mkdir(parents=True, exist_ok=True)
    for i, group in enumerate(groups):
        write_batch(group, w.order_column, target / f"base-{i}.parquet")
    (target / MARKER).write_text(json.dumps([[s.name for s in g] for g in groups]) + "\n")
    return target
