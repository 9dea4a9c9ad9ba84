"""A lane's table after each phase, as a long run grows it: the files in its folder
(data; delete, deletion-vector and log files) and their bytes, and its metadata's size
(a peer's log and metadata files; a LakeSoul-style table's rows in PostgreSQL). Counted
by this process between phases, never inside a timed job. The files are what the folder
holds, live or not yet expired: the disk a `none` table grows to, the same definition
for every format (what a read opens is `files_per_bucket`, from the format's own view)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from contest.infra.storage import is_object_store
from contest.peers import formats
from contest.peers.files import data_listing
from contest.workload.lanes import Lane
from meta import catalog
from meta.commits import metadata_size


@dataclass(frozen=True)
class Footprint:
    """What a table holds, in the PhaseRecord's fields of the same names."""

    data_files: int
    delete_files: int  # delete files, deletion vectors, log files: merged beside the data
    data_bytes: int
    metadata_files: int | None = None  # a peer's log and metadata files
    metadata_rows: int | None = None  # a LakeSoul-style table's rows in PostgreSQL
    metadata_bytes: int | None = None


def metadata_files(root: Path, folders: tuple[str, ...]) -> tuple[int, int]:
    """Files and bytes under the table's log and metadata folders, wherever in its tree
    they are (a Paimon table's sit inside its database's folder)."""
    sizes = []
    for folder, dirs, _ in os.walk(root):
        if Path(folder).name in folders:
            dirs.clear()
            sizes += [
                os.path.getsize(os.path.join(sub, name))
                for sub, _, names in os.walk(folder)
                for name in names
            ]
    return len(sizes), sum(sizes)


def footprint(lane: Lane) -> Footprint | None:
    """The lane's table now; None for a table on an object store (not listed here) or
    one not made yet."""
    run = lane.run
    root = Path(run.table_dir)
    if is_object_store(run.table_dir) or not root.is_dir():
        return None
    skip = formats.of(run.cfg).metadata_dirs if run.peer else ()
    listing = data_listing(root, skip).values()
    data = sum(1 for kind, _ in listing if kind == "data")
    kept = (data, len(listing) - data, sum(size for _, size in listing))
    if run.peer:
        files, size = metadata_files(root, skip)
        return Footprint(*kept, metadata_files=files, metadata_bytes=size)
    if run.conn is None:
        return Footprint(*kept)
    # The phase's record looked the table up already (lanes.layout sets run.table).
    table = run.table or catalog.get_table(run.conn, run.table_name, run.cfg.table.namespace)
    rows, size = metadata_size(run.conn, table)
    return Footprint(*kept, metadata_rows=rows, metadata_bytes=size)
