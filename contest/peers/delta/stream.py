"""Delta's streamed upsert: the harness's `foreachBatch` sink, Delta's documented upsert
from a stream ("Upsert from streaming queries using foreachBatch"): each micro-batch
collapsed and MERGEd as one idempotent write (txnAppId/txnVersion), so a replayed
micro-batch is skipped once its commit is found readable, and a change stream's file
MERGEd with its delete rule."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contest.config import Config
from contest.data.batches import Batch
from contest.data.changes import declares_changes
from contest.errors import DataError, RunError
from contest.peers import change_merge
from contest.peers.base import quoted
from contest.peers.delta import log as delta_log
from contest.peers.merge import collapsed_stream, merge_sql
from contest.peers.microbatch import MicroBatchSink, OnBatch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# Idempotent DML (delta-io/delta#1555, Delta 2.3+): a write of (app id, version) that the
# table has seen is skipped; MERGE takes them from these session settings (the write
# options txnAppId/txnVersion only reach DataFrame writes). Delta resets them after each
# write (spark.databricks.delta.write.txnVersion.autoReset.enabled).
TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"


class MergeBatch(MicroBatchSink):
    """`foreachBatch`: the micro-batch collapsed and MERGEd with (query id, batch id) as
    Delta's idempotent-write pair: the query id Spark keeps in the checkpoint (the same
    across restarts), so a replayed batch id is a write Delta has seen, and skips. A
    change stream's table is made with the format's `properties` (its table_properties)."""

    def __init__(
        self,
        cfg: Config,
        table: Path,
        checkpoint: str,
        on_batch: OnBatch | None,
        properties: dict[str, str],
    ):
        super().__init__(cfg, table, checkpoint, on_batch)
        self.properties = properties

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        spark, t0 = df.sparkSession, time.perf_counter()
        micro = self.lookup(df, batch_id)
        batch = micro.batch
        changes = declares_changes(self.cfg)
        if changes:
            self.create_for_changes(spark, micro.files)
        txns = transactions(spark, self.table)
        if micro.replayed(lambda e: txns.get(e.query, -1) >= e.batch):
            self.verify(spark, batch)
            self.told(batch, "replayed", delta_log.version(spark, self.table), 0, t0)
            return
        self.ledger.write(micro.record())
        if changes:
            self.merge_changes(spark, batch, micro.files, t0)
            return
        source = collapsed_stream(df).cache()
        rows = source.count()
        view = f"contest_stream_batch_{batch}"
        source.createOrReplaceTempView(view)
        before = delta_log.version(spark, self.table)
        spark.conf.set(TXN_APP_ID, self.query_id())
        spark.conf.set(TXN_VERSION, str(batch))
        try:
            spark.sql(merge_sql(f"delta.{quoted(self.table)}", view))
        finally:
            spark.conf.unset(TXN_APP_ID)
            spark.conf.unset(TXN_VERSION)
            spark.catalog.dropTempView(view)
            source.unpersist()
        after = delta_log.version(spark, self.table)
        self.told(batch, "replayed" if after == before else "committed", after, rows, t0)

    def create_for_changes(self, spark: Any, files: list[str]) -> None:
        """A change stream's table, made before its first MERGE (outside the idempotent
        write: a commit carrying the batch's transaction would make Delta skip the
        MERGE) with the columns `contest write` gives it, typed by the first file."""
        from delta.tables import DeltaTable  # deferred: slow to import

        if (Path(self.table) / "_delta_log").is_dir() or not files:
            return
        first = Batch(0, files[0], 0, 0, 0)
        rows = spark.read.parquet(files[0])
        builder = DeltaTable.createIfNotExists(spark).location(str(self.table))
        builder = builder.addColumns(change_merge.table_schema(self.cfg, first, rows))
        for key, value in self.properties.items():
            builder = builder.property(key, value)
        builder.execute()

    def merge_changes(self, spark: Any, batch: int, files: list[str], t0: float) -> None:
        """One change file collapsed with the delete rule and MERGEd (DELETE, a SET of
        the columns it holds) as the micro-batch's idempotent write."""
        if len(files) != 1:
            raise DataError(
                f"delta: batch {batch} holds {len(files)} change files: a change stream "
                "goes one file a micro-batch (--max-files-per-trigger 1)"
            )
        source = change_merge.collapse(spark, self.cfg, Batch(0, files[0], 0, 0, 0))
        rows = source.rows.count()
        target = f"delta.{quoted(self.table)}"
        current = spark.read.format("delta").load(str(self.table))
        before = delta_log.version(spark, self.table)
        spark.conf.set(TXN_APP_ID, self.query_id())
        spark.conf.set(TXN_VERSION, str(batch))
        try:
            change_merge.apply(
                spark, self.cfg, source, target, current, f"contest_stream_batch_{batch}"
            )
        finally:
            spark.conf.unset(TXN_APP_ID)
            spark.conf.unset(TXN_VERSION)
        after = delta_log.version(spark, self.table)
        self.told(batch, "replayed" if after == before else "committed", after, rows, t0)

    def verify(self, spark: Any, batch: int) -> None:
        """A batch Delta's log records as written (its query's transaction) is skipped
        only when the commit that recorded it is one Delta's reader reads: the commit
        file found, every file it added present, and the table readable at that version.
        Delta writes a commit file whole (by rename), so a kill leaves it there or not at
        all; a commit whose files are gone is refused in one line naming the version
        (undoing it is RESTORE, the user's call)."""
        found = commit_of(self.table, self.query_id(), batch)
        if found is None:
            raise RunError(
                f"delta: batch {batch} is recorded as written to {self.table}, but no commit "
                "file of the log holds its transaction: nothing written"
            )
        version, _ = found
        df = spark.read.format("delta").option("versionAsOf", version).load(str(self.table))
        gone = delta_log.gone(df)
        if gone:
            raise RunError(
                f"delta: batch {batch}: version {version} of {self.table} names "
                f"{len(gone)} file(s) that are gone ({gone[0]}): nothing written; "
                "RESTORE the table to an earlier version, then restart"
            )


def commit_of(table: Path, app: str, batch: int) -> tuple[int, list[str]] | None:
    """(version, the paths it added) of the commit file recording transaction (`app`,
    `batch`), newest first; None when no commit file holds it (the log's JSON files are
    kept for 30 days by default, and a replay is of the newest commit)."""
    for version in sorted(delta_log.versions(table), reverse=True):
        path = Path(table) / "_delta_log" / f"{version:020d}.json"
        actions = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        txns = [a["txn"] for a in actions if "txn" in a]
        if any(t.get("appId") == app and int(t.get("version", -1)) == batch for t in txns):
            return version, [a["add"]["path"] for a in actions if "add" in a]
    return None


def transactions(spark: Any, table: Path) -> dict[str, int]:
    """The table's idempotent-write record: the last batch id (Delta's txn version) of
    each query id (app id) that wrote it."""
    jvm: Any = spark._jvm
    none = jvm.scala.Option.apply(None)
    log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(table))
    out: dict[str, int] = {}
    txns = log.update(False, none, none).setTransactions()  # a Scala Seq
    for i in range(txns.size()):
        txn = txns.apply(i)
        out[str(txn.appId())] = int(txn.version())
    return out
