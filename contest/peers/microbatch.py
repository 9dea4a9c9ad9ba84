"""What the harness's own `foreachBatch` sinks of the peer formats share (Delta's MERGE,
contest/peers/delta.py; Hudi's upsert, contest/peers/hudi_merger.py): the query id Spark
keeps in the checkpoint, which names the writer in the format's idempotence record (it
stays the same across restarts, the run id does not), and the report of each
micro-batch to the stream (contest/stream/peer.py), followed by the pause after a commit
that lets the bench's kills land between the table's commit and Spark's."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from contest.config import Config
from contest.errors import RunError

# What a sink tells the stream of each micro-batch: (batch id, "committed" | "replayed",
# table version, rows of the micro-batch, seconds).
OnBatch = Callable[[int, str, int, int, float], None]


class MicroBatchSink:
    """The function given to `foreachBatch` (called with the micro-batch and its id);
    subclasses apply the batch and call `told`."""

    def __init__(self, cfg: Config, table: Path, checkpoint: str, on_batch: OnBatch | None):
        self.cfg, self.table, self.checkpoint, self.on_batch = cfg, table, checkpoint, on_batch
        self._query_id: str | None = None

    def query_id(self) -> str:
        """The query id in `<checkpoint>/metadata` (`{"id": ...}`, Spark writes it when
        the query first starts)."""
        if self._query_id is None:
            from contest.infra.storage import filesystem

            fs, base = filesystem(self.checkpoint)
            try:
                with fs.open_input_stream(f"{base}/metadata") as fh:
                    self._query_id = str(json.loads(fh.read().decode().splitlines()[0])["id"])
            except (OSError, IndexError, KeyError, ValueError) as exc:
                raise RunError(
                    f"{self.checkpoint}/metadata: no query id in Spark's checkpoint "
                    f"({type(exc).__name__}: {exc})"
                ) from None
        return self._query_id

    def told(self, batch_id: int, status: str, version: int, rows: int, started: float) -> None:
        """Report the micro-batch (`started`: its `time.perf_counter()`); after a commit,
        wait `stream.pause_after_commit_s` (a crash then: a replay of the batch)."""
        if self.on_batch is not None:
            self.on_batch(batch_id, status, version, rows, time.perf_counter() - started)
        if status == "committed" and self.cfg.stream.pause_after_commit_s:
            time.sleep(self.cfg.stream.pause_after_commit_s)
