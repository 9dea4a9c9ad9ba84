"""A stream's source files in the workload's order (`workload.order_column`, a log
position or timestamp such as Debezium's `source.lsn` or `ts_ms`), as the batch commands
take a folder's files (contest/data/staging.py): a micro-batch's files by their ranges
of the column, two overlapping ranges refused, and none beginning before the range of
the file the query committed last ends (it landed late: its rows would apply after
later ones). Each file's rows are applied in the column's order too: the sink writes a
sorted copy of each file (in the work folder, removed once the micro-batch is done) and
never touches the source.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from contest.data.staging import ordered, source_of, write_batch
from contest.errors import DataError


def order_files(paths: Sequence[str], column: str, last: Sequence[str]) -> list[str]:
    """`paths` by their ranges of `column`; refused in one line when two overlap or the
    first begins before the end of the newest committed micro-batch's (`last`)."""
    found = ordered([source_of(p, column) for p in paths], column)
    previous = [s for s in (source_of(p, column) for p in last) if s.high is not None]
    if previous and found and found[0].low is not None:
        end = max(previous, key=lambda s: s.high)
        if found[0].low < end.high:
            raise DataError(
                f"{found[0].uri}: its {column} range begins at {found[0].low}, before "
                f"{end.name} (committed) ends at {end.high}: its rows would apply after "
                "later ones; nothing committed (workload.order_column)"
            )
    return [s.uri for s in found]


def sorted_copies(paths: Sequence[str], column: str, folder: Path) -> list[str]:
    """Each file's rows sorted by `column` (stably), as a copy in `folder`, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for i, path in enumerate(paths):
        source = source_of(path, column)
        copy = folder / f"{i:05d}-{source.name}"
        write_batch([source], column, copy)
        out.append(str(copy))
    return out
