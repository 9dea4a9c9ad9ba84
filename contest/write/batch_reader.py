"""A batch file's rows read by range, in pieces, with pyarrow: what a write task reads
(contest/write/files.py) without the JVM, holding one piece at a time."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data.dictionaries import dictionary_columns
from contest.errors import DataError
from contest.infra.storage import filesystem
from contest.write.split import groups_of, pieces

# Rows a streamed range decodes at a time, and the read buffer inside a column chunk
# (unbuffered, pyarrow reads a whole column chunk, a whole row group's worth, at once).
STREAM_BATCH_ROWS = 1 << 16
STREAM_BUFFER_BYTES = 8 << 20


def read_pieces(
    path: str,
    group_rows: Sequence[int],
    start: int,
    stop: int,
    piece_rows: int,
    columns: Sequence[str],
    dictionaries: Collection[str] = (),
    threads: bool = False,
) -> Iterator[pa.Table]:
    """Rows [start, stop) of a parquet file, in pieces of at most `piece_rows` rows (0:
    one piece), in file order. A range of whole row groups read as one piece is read
    whole; otherwise streamed, decoding the rows of the first row group before `start`
    (parquet cannot seek to a row) and holding one piece at a time. A file that cannot
    be read is a DataError naming the row group. Those of `dictionaries` the file stores
    as small dictionaries in every row group come back as dictionary arrays (one
    dictionary a row group), with no string decoded. `threads` (write.decode_threads):
    whole row groups decoded together on pyarrow's threads, a streamed range with them."""
    overlap = list(groups_of(group_rows, start, stop))
    if not overlap:
        return
    fs, local = filesystem(path)
    first_row = overlap[0][1]
    whole = first_row == start and overlap[-1][1] + group_rows[overlap[-1][0]] == stop
    cuts = pieces(start, stop, piece_rows)
    # The row groups being decoded when an error comes (a batch may span two).
    reading = [overlap[0][0]]

    def damaged(exc: BaseException) -> DataError:
        which = (
            f"row group {reading[0]}"
            if len(reading) == 1
            else (f"row groups {reading[0]}-{reading[-1]}")
        )
        return DataError(
            f"{path}: {which} cannot be read, the file is damaged ({type(exc).__name__}: {exc})"
        )

    try:
        with fs.open_input_file(local) as fh:
            metadata = pq.ParquetFile(fh).metadata
            as_dictionaries = dictionary_columns(metadata, dictionaries) if dictionaries else []
            if whole and len(cuts) == 1:
                pf = pq.ParquetFile(fh, metadata=metadata, read_dictionary=as_dictionaries)
                if threads:
                    reading[:] = [g for g, _ in overlap]
                    yield pf.read_row_groups(reading, columns=list(columns), use_threads=True)
                    return
                parts = []
                for group, _ in overlap:
                    reading[:] = [group]
                    parts.append(pf.read_row_group(group, columns=list(columns)))
                yield pa.concat_tables(parts) if len(parts) > 1 else parts[0]
                return
            pf = pq.ParquetFile(
                fh,
                metadata=metadata,
                pre_buffer=False,
                buffer_size=STREAM_BUFFER_BYTES,
                read_dictionary=as_dictionaries,
            )
            stream = pf.iter_batches(
                batch_size=STREAM_BATCH_ROWS,
                row_groups=[g for g, _ in overlap],
                columns=list(columns),
                use_threads=threads,
            )
            pos = first_row  # the file row the stream is at
            held: list[pa.RecordBatch] = []
            piece = 0
            while piece < len(cuts):
                upto = min(pos + STREAM_BATCH_ROWS, stop)
                reading[:] = [g for g, _ in groups_of(group_rows, pos, upto)]
                batch = next(stream, None)
                if batch is None:
                    raise DataError(f"{path}: fewer rows than its footer says ({pos} < {stop})")
                lo, hi = pos, pos + batch.num_rows
                pos = hi
                while piece < len(cuts) and hi > cuts[piece][0]:
                    a, b = cuts[piece]
                    held.append(batch.slice(max(a, lo) - lo, min(b, hi) - max(a, lo)))
                    if hi < b:
                        break
                    yield pa.Table.from_batches(held)
                    held = []
                    piece += 1
    except DataError:
        raise
    except (OSError, pa.ArrowException) as exc:
        raise damaged(exc) from None
