"""Apache Hudi with its own deferred merge: a MERGE_ON_READ table whose record merger is
the contract (jvm/src/main/java/contest/hudi/ContractRecordMerger.java).

Each batch, collapsed by key with the contract's rules (one row per key, "null" names
made NULL), is upserted as it is: with a bucket index Hudi finds a key's file group by
hashing it, so an upsert appends log files without reading the table; the merger
combines a key's versions when the table is read (and in compactions), ordered by the
batch's version (the ordering field). `hudi-mor` instead reads the current rows of the
batch's keys and upserts merged rows (format.py): Hudi 1.0.2's MERGE INTO
on a MOR table cannot read target columns.

A stream (`contest stream run --format hudi`) writes the same way, a micro-batch at a
time: the harness's `foreachBatch` (`UpsertBatch`) collapses it by key and upserts it,
recording the batch id in the commit as Hudi's own streaming sink does, which it checks
before writing. Hudi's own sink (`--sink own`) is there to be measured beside it.

Hudi 1.0's documentation recommends record mergers over payload classes for new custom
merge logic ("Going forward, we recommend users to migrate and use the record merger
APIs and not write new payload implementations", Record Mergers page,
https://hudi.apache.org/docs/1.0.2/record_merger). The merger is registered through the
options that page documents: hoodie.write.record.merge.mode=CUSTOM, its strategy id and
its implementation class, given to every write and read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from contest.config import Config, SparkConfig
from contest.data.batches import COLUMNS
from contest.errors import ConnectorError, RunError
from contest.infra import lakesoul_jvm
from contest.peers.base import HARNESS_SINK, OWN_SINK, StreamSink
from contest.peers.hudi import changes as hudi_changes
from contest.peers.hudi.format import Hudi
from contest.peers.hudi.history import keys_committed_at, roll_back
from contest.peers.hudi.options import ORDERING, merger_options
from contest.peers.hudi.timeline import NO_INSTANT, completed_instants, empty_after, instant_after
from contest.peers.merge import collapsed_stream, peer_operators, written
from contest.peers.microbatch import MicroBatchSink, OnBatch, SourceRecord

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from contest.peers.change_merge import ChangeBatch

# A row's ordering value in a stream: the source file's feed number, then the row's
# index in its file (fewer than 2**32 rows a file).
ROW_BITS = 32

# The commit-metadata key of Hudi's streaming sink (HoodieStreamingSink.SINK_CHECKPOINT_KEY):
# its value is {identifier: batch id} as JSON (CommitUtils.getCheckpointValueAsString).
SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"


def helper_jar(spark: SparkConfig) -> Path:
    """The project's jar holding the merger (built by ./build.sh from jvm/)."""
    path = lakesoul_jvm.helper_jar(spark)
    if not path.is_file():
        raise ConnectorError(
            f"hudi-merger: the record merger's jar {path} is not built: run ./build.sh"
        )
    return path


class HudiMerger(Hudi):
    name = "hudi-merger"
    stream_format = ""
    # Each batch collapsed in Spark, merged with the table by the record merger.
    merge_engines = ("spark", "hudi")
    # Tried on a tiny table (begin / end as the commits' requested or completion times):
    # a key upserted twice in the range came back twice, unmerged, and the range's
    # boundaries did not match its commits.
    incremental_answer = (
        "an incremental query returns the range's records unmerged (a key upserted in "
        "several commits comes back once per commit), not their merge by the record merger"
    )

    def start_conf(self, cfg: Config) -> dict[str, str]:
        # The merger runs in every task that writes, compacts or reads the table.
        return super().start_conf(cfg) | {"spark.jars": str(helper_jar(cfg.spark))}

    def write_options(self, cfg: Config, table: Path, operation: str) -> dict[str, str]:
        # A merger of Spark rows needs the log's data blocks in parquet (Hudi 1.0.2 refuses
        # the default Avro blocks: "ContractRecordMerger only support parquet log").
        opts = {"hoodie.logfile.data.block.format": "parquet"}
        merger = merger_options(peer_operators(cfg))
        return super().write_options(cfg, table, operation) | merger | opts

    def rows_to_write(
        self, spark: SparkSession, cfg: Config, table: Path, source: DataFrame, first: bool
    ) -> DataFrame:
        """The collapsed batch itself: the merger, not Spark, merges it with the table."""
        return source

    def change_upserts(
        self,
        spark: SparkSession,
        cfg: Config,
        table: Path,
        batch: ChangeBatch,
        payload: Mapping[str, pa.DataType],
        first: bool,
    ) -> list[DataFrame]:
        """The collapsed change batch as it is, with the merger's marks: a delete a
        tombstone, a key deleted and inserted again inside the batch marked afresh
        (hudi/changes.py); the merger resets the key on either."""
        rows = hudi_changes.for_merger(batch, payload)
        return [hudi_changes.without_deletes(rows, hudi_changes.TOMBSTONE) if first else rows]

    def read(self, spark: SparkSession, cfg: Config, table: Path) -> DataFrame:
        df = spark.read.format("hudi").options(**self.reader_options(cfg)).load(str(table))
        return hudi_changes.live(df)

    def reader_options(self, cfg: Config) -> dict[str, str]:
        return merger_options(peer_operators(cfg))

    def batch_sink(
        self, cfg: Config, table: Path, checkpoint: str, on_batch: OnBatch | None
    ) -> UpsertBatch:
        """The harness's `foreachBatch` (`UpsertBatch`): each micro-batch collapsed by
        key, then one upsert whose commit records the batch id as Hudi's own streaming
        sink records it, so a replayed batch id is found on the timeline and skipped."""
        return UpsertBatch(self, cfg, table, checkpoint, on_batch)

    def own_stream(
        self, cfg: Config, table: Path, rows: DataFrame
    ) -> tuple[str, DataFrame, dict[str, str]]:
        """Hudi's own streaming sink (`format("hudi")`) with the contract's record
        merger: the rows as they come, ordered by the source file's feed number and the
        row's index in it; the sink records the batch id in each commit and skips one
        the timeline holds. Hudi combines a key's rows of one micro-batch before the
        upsert in no fixed order, which a last-non-NULL column cannot survive (measured
        by `contest bench stream --sinks all`, not assumed)."""
        from pyspark.sql import functions as F  # deferred: slow to import

        order = (F.col("_ver") * F.lit(2**ROW_BITS) + F.col("_pos")).cast("long")
        out = written(rows, peer_operators(cfg)).withColumn(ORDERING, order)
        opts = self.write_options(cfg, table, "upsert") | {
            # Compaction left to the reads' merge, as in the batch write and the
            # harness's sink: the stream only appends log files.
            "hoodie.datasource.compaction.async.enable": "false",
        }
        return "hudi", out.select(*COLUMNS, ORDERING), opts | {"path": str(table)}

    def stream_sinks(self) -> tuple[StreamSink, ...]:
        harness = "foreachBatch: collapsed in source order, Hudi's sink checkpoint in the commit"
        own = 'its own format("hudi") sink, the contract\'s record merger'
        return (
            StreamSink(HARNESS_SINK, harness, self.stream_writer),
            StreamSink(OWN_SINK, own, self.own_stream_writer),
        )


class UpsertBatch(MicroBatchSink):
    """`foreachBatch` into a hudi-merger table, exactly once.

    Hudi's own sink (`format("hudi")`) upserts a micro-batch's rows as they come, and
    Hudi's dedup before an upsert combines a key's rows in no fixed order: a
    last-non-NULL `name` cannot be merged out of order with one ordering value a row,
    so a key with three or more rows in a micro-batch could keep an older name. Here
    the micro-batch is first collapsed by key in source order with the contract's
    operators (`collapsed_stream`, what Delta's sink does too), its ordering value the
    key's last row's; the merger then only merges it with the table's earlier rows.

    Idempotence is Hudi's streaming sink's own (HoodieStreamingSink, Hudi 1.0.2): each
    commit's extra metadata holds `_hudi_streaming_sink_checkpoint` = {identifier:
    batch id} (a write option under the commit-metadata key prefix goes into the
    commit); before writing, the latest completed write commit holding the identifier
    is looked up on the timeline (CommitUtils.getValidCheckpointForCurrentWriter, what
    the sink's canSkipBatch calls) and a batch id not above it is skipped. The
    identifier is the checkpoint's query id: one per writer, as Hudi asks of
    `hoodie.datasource.write.streaming.checkpoint.identifier`, and a new query on the
    same table does not inherit an older one's batch ids."""

    def __init__(
        self,
        fmt: HudiMerger,
        cfg: Config,
        table: Path,
        checkpoint: str,
        on_batch: OnBatch | None,
    ):
        super().__init__(cfg, table, checkpoint, on_batch)
        self.fmt = fmt
        self.repair = ""  # what a repair of the replayed batch did, said with it

    def options(self, batch_id: int) -> dict[str, str]:
        """The upsert's options: the table's, and the batch id in the commit metadata."""
        mark = {self.query_id(): str(batch_id)}
        return self.fmt.write_options(self.cfg, self.table, "upsert") | {
            # Only the checkpoint key goes into the commit's metadata. Compaction stays
            # off as in the batch write (a batch write of a MERGE_ON_READ table compacts
            # inline only when async compaction is disabled: left at its default).
            "hoodie.datasource.write.commitmeta.key.prefix": SINK_CHECKPOINT_KEY,
            SINK_CHECKPOINT_KEY: json.dumps(mark, separators=(",", ":")),
        }

    def __call__(self, df: DataFrame, batch_id: int) -> None:
        spark, t0 = df.sparkSession, time.perf_counter()
        micro = self.lookup(df, batch_id)
        batch = micro.batch
        instants = completed_instants(self.table)
        marks: dict[str, int | None] = {}

        def committed(e: SourceRecord) -> bool:
            if e.query not in marks:
                marks[e.query] = timeline_checkpoint(spark, self.table, e.query)[0]
            done = marks[e.query]
            return (done is not None and done >= e.batch) or empty_after(instants, e.after)

        status = "committed"
        if micro.replayed(committed):
            own = micro.own
            instant = instant_after(instants, own.after if own else "")
            if self.verified(df, batch, instant):
                self.told(batch, "replayed", len(instants), 0, t0)
                return
            status, instants = "repaired", completed_instants(self.table)
        after = instants[-1][0] if instants else NO_INSTANT
        self.ledger.write(micro.record(after))
        rows = collapsed_rows(df).cache()
        try:
            count = rows.count()
            (
                rows.write.format("hudi")
                .options(**self.options(batch))
                .mode("append")
                .save(str(self.table))
            )
        finally:
            rows.unpersist()
        _, version = timeline_checkpoint(spark, self.table, micro.query)
        self.told(batch, status, version, count, t0, self.repair)

    def verified(self, df: DataFrame, batch: int, instant: str | None) -> bool:
        """Whether a batch the timeline records as committed is a commit Hudi's own
        reader honours: every key of the micro-batch read back, as of its instant, with
        that instant as its commit time. One the reader does not honour at all (a new
        table's first completed instant left empty by a kill reads as no commit) is
        rolled back with Hudi's own rollback and False returned: the batch is written
        again, the repair said with it. One holding only some of the keys is refused in
        one line naming the instant."""
        if instant is None:
            raise RunError(
                f"{self.fmt.name}: batch {batch} is recorded as committed to {self.table}, "
                "but no completed instant of it is on the timeline: nothing written"
            )
        spark = df.sparkSession
        keys = df.select("uuid").distinct().count()
        found = keys_committed_at(self.fmt, spark, self.cfg, self.table, instant)
        if found == keys:
            return True
        if found:
            raise RunError(
                f"{self.fmt.name}: batch {batch}: Hudi instant {instant} holds {found} of the "
                f"micro-batch's {keys} keys (neither committed whole nor absent): nothing "
                "written; roll it back (CALL rollback_to_instant) and restart"
            )
        roll_back(self.fmt, spark, self.cfg, self.table, instant)
        self.repair = (
            f"Hudi instant {instant} was recorded complete but its reader reads none of its "
            "rows: rolled back with Hudi's rollback, the batch written again"
        )
        return False


def collapsed_rows(df: DataFrame) -> DataFrame:
    """A micro-batch (the source's rows with `_ver` and `_pos`) collapsed by key, with
    the ordering field: the key's last row's feed number and index in its file."""
    from pyspark.sql import functions as F  # deferred: slow to import

    order = (F.col("_ver") * F.lit(2**ROW_BITS) + F.col("_pos")).cast("long")
    out = collapsed_stream(df.withColumn("__order", order), latest=("__order",))
    return out.withColumnRenamed("__order", ORDERING)


def timeline_checkpoint(
    spark: SparkSession, table: Path, identifier: str
) -> tuple[int | None, int]:
    """(the last batch id the table's completed commits record for `identifier`, or
    None; the number of completed write commits): read from the timeline as Hudi's
    streaming sink reads it. No table yet: (None, 0)."""
    jvm: Any = spark._jvm
    jsc: Any = spark.sparkContext._jsc
    hudi = jvm.org.apache.hudi
    conf = hudi.hadoop.fs.HadoopFSUtils.getStorageConfWithCopy(jsc.hadoopConfiguration())
    builder = hudi.common.table.HoodieTableMetaClient.builder().setConf(conf)
    try:
        meta = builder.setBasePath(str(table)).build()
    except Exception as exc:  # py4j's error around Hudi's TableNotFoundException
        if "TableNotFoundException" in str(exc):
            return None, 0
        raise
    timeline = meta.getActiveTimeline().getWriteTimeline()
    found = hudi.common.util.CommitUtils.getValidCheckpointForCurrentWriter(
        timeline, SINK_CHECKPOINT_KEY, identifier
    )
    done = int(found.get()) if found.isPresent() else None
    return done, int(timeline.filterCompletedInstants().countInstants())


FORMAT = HudiMerger()
