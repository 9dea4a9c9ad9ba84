"""`contest stream run --data DIR`: a user's folder checked before the query starts, as
the batch commands check theirs (contest/data/workload.py, the oracle's per-file checks):
every file's columns against the workload (a missing key column, a column the workload
does not name, a type that differs), its change rows (a NULL key part, an op value the
spelling does not know), the order column's ranges (overlapping files), and what the
stream's format cannot take; each refusal one line naming the file, nothing written.
Files landing later are checked by the sink, micro-batch by micro-batch, before any of
the micro-batch is written.
"""

from __future__ import annotations

from contest.config import Config
from contest.data.batches import discover
from contest.data.staging import ordered, sources
from contest.data.workload import schema_of_batch
from contest.peers import change_check
from contest.stream.changes import check_files, is_change_stream


def check_source(cfg: Config, folder: str) -> int:
    """The folder's files checked (raises one line on the first problem, a missing
    folder `discover`'s); returns how many there are."""
    found = schema_of_batch(cfg.workload)
    batches = discover(folder, None, found)
    change_check.refuse(cfg, found)
    if is_change_stream(cfg):
        check_files(cfg, [str(b.path) for b in batches])
    column = cfg.workload.order_column
    if column:
        ordered(sources(folder, column), column)
    return len(batches)
