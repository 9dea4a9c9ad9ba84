"""Apache Hudi through hudi-rs (`hudi` 0.5.0, Rust, no JVM): a reader only. It reads a
table's snapshot (base files merged with their log files by its own rules); it has no
writer, so writing is refused in one line. It is an implementation without a strategy:
`contest bench interop` reads the Spark-written Hudi tables with it."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from contest.config import Config
from contest.data.changes import ChangeSupport
from contest.errors import ConnectorError
from contest.peers.native.base import Metrics, NativeFormat

VERSION = "0.5.0"
TABLE_FORMAT = f"Apache Hudi (hudi-rs {VERSION})"


class HudiRs(NativeFormat):
    name = "hudi-rs"
    library = "hudi"
    label = f"hudi-rs {VERSION} snapshot read (a reader only)"
    marker = ".hoodie"
    metadata_dirs = (".hoodie",)
    changes = ChangeSupport(no_deletes=f"hudi-rs (hudi {VERSION}) has no writer API: it reads only")

    def write_batch(
        self, cfg: Config, table: Path, rows: pa.Table, first: bool, threads: int
    ) -> tuple[str, Metrics]:
        raise ConnectorError(f"hudi-rs (hudi {VERSION}) has no writer API: it reads only")

    def read_table(self, cfg: Config, table: Path, threads: int) -> pa.Table:
        from hudi import HudiTableBuilder  # deferred: a native library, its jobs only

        handle = HudiTableBuilder.from_base_uri(str(table)).build()
        return pa.Table.from_batches(handle.read())


FORMAT = HudiRs()
