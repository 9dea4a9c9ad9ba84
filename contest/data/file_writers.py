"""How a data shape's batch files are written (`workload.file_writer`): the parquet
writer's settings of each, the only list of them, and its configuration check. Apart
from the generator so that validating a configuration (every command and timed job
does) does not import the generator's libraries (pandas, tqdm: 0.8 s of a job's start).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contest.config import Config
from contest.config.validation import register_check
from contest.errors import ConfigError

# FileWriter.row_group_rows: each write one row group.
ONE_GROUP = 0


@dataclass(frozen=True)
class FileWriter:
    """How the batch files of a data shape are written: the parquet writer's settings
    that differ from pyarrow's defaults (None: pyarrow's own), the same rows either way."""

    # Column compression (pyarrow's default: snappy).
    compression: str | None = None
    # Only the low-cardinality columns dictionary-encoded (pyarrow's default: tried on
    # every column and given up where it grows too big).
    small_dictionaries: bool = False
    # Min/max statistics per column chunk (pyarrow's default: on).
    statistics: bool = True
    # Rows a row group: ONE_GROUP, every write of up to the generator's MAX_ROW_GROUP_ROWS
    # rows is one;
    # None, pyarrow's default (at most 1Mi rows).
    row_group_rows: int | None = None

    def open(self, path: Path, schema: pa.Schema, dict_columns: list[str]) -> pq.ParquetWriter:
        options: dict[str, object] = {}
        if self.compression is not None:
            options["compression"] = self.compression
        if self.small_dictionaries:
            options["use_dictionary"] = dict_columns
        if not self.statistics:
            options["write_statistics"] = False
        return pq.ParquetWriter(path, schema, **options)

    def group_rows(self, rows: int) -> int | None:
        """The row_group_size of a write of `rows` rows."""
        return rows if self.row_group_rows == ONE_GROUP else self.row_group_rows


# workload.file_writer -> how its files are written: the only list of them (check_file_writer).
FILE_WRITERS = {
    # The contest's files: uncompressed, the low-cardinality columns dictionary-encoded,
    # no statistics; each write one row group (a whole batch up to scale 1).
    "contest": FileWriter(
        compression="NONE", small_dictionaries=True, statistics=False, row_group_rows=ONE_GROUP
    ),
    # What pyarrow writes unasked (snappy, dictionary tried on every column, statistics,
    # row groups of at most 1Mi rows): a second data shape, so a figure is not fitted to
    # the harness's own files.
    "pyarrow-defaults": FileWriter(),
    # Compressed files of many row groups, as Spark and most writers leave them (128Ki
    # rows a row group, zstd, dictionary tried on every column, statistics): a reader
    # fitted to one big row group a file meets a thousand small ones at scale 1.
    "zstd-128ki": FileWriter(compression="zstd", row_group_rows=128 * 1024),
}


def check_file_writer(cfg: Config) -> None:
    """workload.file_writer names a writer of FILE_WRITERS (the configuration layer,
    below this one, names none)."""
    if cfg.workload.file_writer not in FILE_WRITERS:
        raise ConfigError(
            f"workload.file_writer: {cfg.workload.file_writer!r} is not one of "
            f"{', '.join(FILE_WRITERS)}"
        )


register_check("workload.file_writer", check_file_writer)
