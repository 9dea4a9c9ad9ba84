"""Apache Paimon through its Python API (`pypaimon` 2.1.0): refused in one line before
any work. pypaimon 2.1.0 requires polars<2 (>=1.32; and pyarrow<20), the harness
polars>=2,<3 (read.merge=polars: `merge_sorted` keeping order): the two cannot be
installed in one environment, so it is not pinned in pyproject.toml and its strategy
says why instead of running."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from contest.config import Config
from contest.data.changes import ChangeSupport
from contest.errors import ConnectorError
from contest.peers.native.base import Metrics, NativeFormat

VERSION = "2.1.0"
TABLE_FORMAT = f"Apache Paimon (pypaimon {VERSION})"
WHY = (
    f"pypaimon {VERSION} requires polars<2, the harness polars>=2,<3 (read.merge=polars): "
    "they cannot be installed together, so pypaimon is not pinned"
)


class PaimonPy(NativeFormat):
    name = "pypaimon"
    library = "pypaimon"
    label = f"pypaimon {VERSION}: refused ({WHY})"
    marker = "snapshot"
    changes = ChangeSupport(no_deletes=WHY)

    def write_batch(
        self, cfg: Config, table: Path, rows: pa.Table, first: bool, threads: int
    ) -> tuple[str, Metrics]:
        raise ConnectorError(WHY)

    def read_table(self, cfg: Config, table: Path, threads: int) -> pa.Table:
        raise ConnectorError(WHY)


FORMAT = PaimonPy()
