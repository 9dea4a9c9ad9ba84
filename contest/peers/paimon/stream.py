"""The harness's `foreachBatch` sink for Paimon, beside Paimon's own `format("paimon")`
sink: each micro-batch appended to the primary-key table in one Spark write (one Paimon
commit, an APPEND snapshot), exactly once. Paimon records no query or batch id in a
snapshot the harness can set, so the micro-batch's record (contest/peers/microbatch.py)
holds the newest APPEND snapshot before its write: one writer a table, an APPEND
snapshot after it is that micro-batch's commit. A replay is skipped only when Paimon's
own reader reads the table at that snapshot (its manifests and data files all there);
otherwise the stream stops with one line naming the snapshot. Paimon writes a snapshot
file whole (by rename), so a kill leaves the commit or nothing.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data import operators as registry
from contest.data.batches import COLUMNS
from contest.errors import RunError
from contest.peers.base import error_line
from contest.peers.merge import written
from contest.peers.microbatch import MicroBatchSink, OnBatch, SourceRecord
from contest.peers.paimon.table import SEQUENCE, identifier

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def append_snapshots(location: Path) -> list[int]:
    """The ids of the table's APPEND snapshots (a compaction's are COMPACT), in order."""
    out = []
    for snap in (location / "snapshot").glob("snapshot-*"):
        try:
            kind = json.loads(snap.read_text()).get("commitKind")
        except (OSError, ValueError):
            continue
        if kind == "APPEND":
            out.append(int(snap.name.removeprefix("snapshot-")))
    return sorted(out)


def snapshot_after(snapshots: list[int], after: str) -> int | None:
    """The micro-batch's own APPEND snapshot: the first after its record's `after`."""
    later = [s for s in snapshots if s > int(after or 0)]
    return later[0] if later else None


class AppendBatch(MicroBatchSink):
    """`foreachBatch` into a Paimon table, exactly once by the micro-batch's record of
    the APPEND snapshot before its write; the rows as Paimon's own sink gets them (its
    merge engine orders a key's rows by the sequence fields)."""

    def __init__(
        self, location: Path, cfg: Config, table: Path, checkpoint: str, on_batch: OnBatch | None
    ):
        super().__init__(cfg, table, checkpoint, on_batch)
        self.location = location

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        t0 = time.perf_counter()
        micro = self.lookup(df, batch_id)
        batch = micro.batch
        snaps = append_snapshots(self.location)

        def committed(e: SourceRecord) -> bool:
            return bool(e.after) and snapshot_after(snaps, e.after) is not None

        if micro.replayed(committed):
            own = micro.own
            snapshot = snapshot_after(snaps, own.after) if own else None
            self.verify(df, batch, snapshot)
            self.told(batch, "replayed", snapshot or 0, 0, t0)
            return
        self.ledger.write(micro.record(str(max(snaps, default=0))))
        rows = written(df, registry.CONTRACT).select(*COLUMNS, *SEQUENCE).cache()
        try:
            count = rows.count()
            rows.writeTo(identifier()).append()
        finally:
            rows.unpersist()
        self.told(batch, "committed", max(append_snapshots(self.location), default=0), count, t0)

    def verify(self, df: DataFrame, batch: int, snapshot: int | None) -> None:
        """Paimon's own reader reads the table at the micro-batch's snapshot (every
        manifest and data file it names opened), or one line naming the snapshot."""
        if snapshot is None:
            return  # recorded before the harness kept records: Paimon's commit is the word
        try:
            (
                df.sparkSession.read.format("paimon")
                .option("scan.snapshot-id", snapshot)
                .load(str(self.location))
                .count()
            )
        except Exception as exc:  # py4j's error around Paimon's
            raise RunError(
                f"paimon: batch {batch}: snapshot {snapshot} of {self.table} is recorded but "
                f"Paimon cannot read it: {error_line(exc)}; nothing written"
            ) from None
