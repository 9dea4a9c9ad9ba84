"""Delta Lake: MERGE INTO a path table; copy-on-write, or deletion vectors
(peer.deletion_vectors). Commit numbers from the table's history (log.py); its streamed
upsert is the foreachBatch sink of stream.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from contest.config import Config
from contest.data import operators as registry
from contest.data.batches import Batch
from contest.data.changes import declares_changes
from contest.errors import ReadError, SchemaEvolutionError
from contest.peers import change_merge
from contest.peers.base import (
    HARNESS_SINK,
    Layout,
    PeerFormat,
    StreamSink,
    codec_name,
    error_line,
    quoted,
    stream_schema,
)
from contest.peers.delta import log as delta_log
from contest.peers.delta.stream import MergeBatch
from contest.peers.files import data_listing
from contest.peers.merge import collapsed, merge_sql, peer_operators, source_operators
from contest.peers.microbatch import OnBatch
from contest.peers.schema import batch_changes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Delta history metrics kept in the report.
METRICS = (
    "numTargetFilesAdded",
    "numTargetFilesRemoved",
    "numTargetDeletionVectorsAdded",
    "numTargetDeletionVectorsRemoved",
    "numTargetDeletionVectorsUpdated",
    "numTargetRowsUpdated",
    "numTargetRowsInserted",
    "numTargetRowsCopied",
    "numTargetBytesAdded",
    "numTargetBytesRemoved",
    "numOutputRows",
    "numFiles",
    "scanTimeMs",
    "rewriteTimeMs",
    "executionTimeMs",
)


class Delta(PeerFormat):
    name = "delta"
    codecs = ("", "none", "snappy", "zstd", "gzip", "lz4_raw")
    marker = "_delta_log"
    metadata_dirs = ("_delta_log",)

    def start_conf(self, cfg: Config) -> dict[str, str]:
        return {
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        }

    def runtime_conf(self, cfg: Config, table: Path) -> dict[str, str]:
        conf = super().runtime_conf(cfg, table)
        if cfg.peer.codec:
            # Delta writes through Spark's parquet writer, which takes the session's codec.
            conf["spark.sql.parquet.compression.codec"] = codec_name(cfg.peer.codec)
        return conf

    def table_properties(self, cfg: Config) -> dict[str, str]:
        props = {"delta.enableDeletionVectors": str(cfg.peer.deletion_vectors).lower()}
        return props | super().table_properties(cfg)

    def apply_batch(
        self, spark: SparkSession, cfg: Config, table: Path, batch: Batch, first: bool
    ) -> str:
        from delta.tables import DeltaTable  # deferred: slow to import

        if change_merge.needed(cfg, batch):
            return self._apply_changes(spark, cfg, table, batch, first)
        source = collapsed(spark, batch, peer_operators(cfg))
        if first:
            builder = DeltaTable.create(spark).location(str(table)).addColumns(source.schema)
            for key, value in self.table_properties(cfg).items():
                builder = builder.property(key, value)
            builder.execute()
            source.write.format("delta").mode("append").save(str(table))
            return "create+append"
        source.createOrReplaceTempView("contest_peer_batch")
        ops = source_operators(peer_operators(cfg), source.columns)
        spark.sql(merge_sql(f"delta.{quoted(table)}", "contest_peer_batch", ops))
        return "merge"

    def _apply_changes(
        self, spark: SparkSession, cfg: Config, table: Path, batch: Batch, first: bool
    ) -> str:
        """Change data (contest/peers/change_merge.py): the batch collapsed with the delete
        rule, MERGEd with `WHEN MATCHED ... THEN DELETE` and a SET of only the columns
        the batch holds. The first batch creates the table with every payload column
        (empty), then MERGEs like the others."""
        from delta.tables import DeltaTable  # deferred: slow to import

        if first:
            rows = spark.read.parquet(str(batch.path))
            builder = DeltaTable.create(spark).location(str(table))
            builder = builder.addColumns(change_merge.table_schema(cfg, batch, rows))
            for key, value in self.table_properties(cfg).items():
                builder = builder.property(key, value)
            builder.execute()
        source = change_merge.collapse(spark, cfg, batch)
        target = f"delta.{quoted(table)}"
        change_merge.apply(
            spark, cfg, source, target, self.read(spark, cfg, table), "contest_peer_batch"
        )
        return ("create+" if first else "") + source.label

    def commit_metrics(self, spark: SparkSession, table: Path) -> dict[str, int]:
        from delta.tables import DeltaTable  # deferred: slow to import

        last = DeltaTable.forPath(spark, str(table)).history(1).collect()[0]
        return {
            k: int(v)
            for k, v in (last["operationMetrics"] or {}).items()
            if k in METRICS and str(v).isdigit()
        }

    def read(self, spark: SparkSession, cfg: Config, table: Path) -> DataFrame:
        return spark.read.format("delta").load(str(table))

    # -- history ----------------------------------------------------------------------

    def evolve(self, spark: SparkSession, cfg: Config, table: Path, batch: Batch) -> list[str]:
        """Delta's own schema changes ("Update table schema" page): `ALTER TABLE ADD
        COLUMNS` for a column the batch adds; for a widened integer, type widening
        (`delta.enableTypeWidening`, a preview in Delta 3.x: the table's protocol gains
        its feature) then `ALTER COLUMN ... TYPE`. Delta's error, one line, when it
        refuses one."""
        path = f"delta.{quoted(table)}"
        done = []
        for change in batch_changes(spark, cfg, self.read(spark, cfg, table), batch):
            column = "`" + change.column.replace("`", "``") + "`"
            if change.kind == "added":
                commands = [f"ALTER TABLE {path} ADD COLUMNS ({column} {change.new})"]
            elif change.kind == "widened":
                commands = [
                    f"ALTER TABLE {path} SET TBLPROPERTIES ('delta.enableTypeWidening' = 'true')",
                    f"ALTER TABLE {path} ALTER COLUMN {column} TYPE {change.new}",
                ]
            else:
                raise SchemaEvolutionError(f"delta: {change}: not a change this harness makes")
            try:
                for command in commands:
                    spark.sql(command)
            except Exception as exc:
                raise SchemaEvolutionError(f"delta: {change}: {error_line(exc)}") from None
            done.append(str(change))
        return done

    def commit_id(self, spark: SparkSession, table: Path) -> str:
        return str(delta_log.version(spark, table))

    def read_as_of(self, spark: SparkSession, cfg: Config, table: Path, commit: str) -> DataFrame:
        """Time travel (`versionAsOf`): the version's files as its log names them. A
        version whose files VACUUM removed is refused naming the oldest version whose
        files all remain (Delta itself would fail at the scan, file by file)."""
        df = spark.read.format("delta").option("versionAsOf", int(commit)).load(str(table))
        if delta_log.missing(df):
            raise ReadError(
                f"delta: version {commit}: its files were removed by VACUUM; the oldest "
                f"version it can be read at is {delta_log.oldest_readable(spark, table)}"
            )
        return df

    def read_changes(
        self, spark: SparkSession, cfg: Config, table: Path, start: str | None, end: str
    ) -> DataFrame:
        """Delta's change read is its change data feed ("Change data feed" page), whose
        post-images are each changed key's merged row as of its last commit in the
        range: the range's own merge only for an operator whose merged value is the
        newest row's alone (UseLast). The contract's `requests` is a sum (and `name` a
        last non-NULL value), so the feed never gives the oracle's answer here: refused
        in one line naming the operators (the post-image holds what came before the
        range too), and the table is not written with the feed on (its cost would be
        counted in every write)."""
        if start is None:
            return self.read_as_of(spark, cfg, table, end)
        inexact = [f"{op} ({c})" for c, op in peer_operators(cfg).items() if not _source_only(op)]
        raise ReadError(
            "delta: the change data feed gives post-images (each key's merged value as of "
            f"the range's end, Delta version {end}), not the merge of the range's batches "
            "alone, for "
            + ", ".join(inexact[:3])
            + (f" and {len(inexact) - 3} more" if len(inexact) > 3 else "")
        )

    def expire(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        """`VACUUM ... RETAIN 0 HOURS` with Delta's retention check off ("Remove files
        no longer referenced" page): every file the current version does not name is
        deleted, so older versions cannot be read. The log (and the batch ledger, a
        hidden file to VACUUM) stays."""
        spark.conf.set("spark.databricks.delta.retentionDurationCheck.enabled", "false")
        before = len(data_listing(table, self.metadata_dirs))
        spark.sql(f"VACUUM delta.{quoted(table)} RETAIN 0 HOURS").collect()
        return {"files_deleted": before - len(data_listing(table, self.metadata_dirs))}

    def compact(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        """`OPTIMIZE` (bin-packing, Delta's "Optimizations" page): the table's small
        files merged into files of up to 1 GB, the rows a file's deletion vector marks
        dropped as it is rewritten. With deletion vectors, then `REORG TABLE ... APPLY
        (PURGE)`, what the "Deletion vectors" page gives to apply them physically:
        OPTIMIZE rewrites only bins of two or more files (Delta 3.3's OptimizeExecutor),
        so a file left alone in its bin would keep its vector, and a read would still
        load it and filter the file's rows. REORG rewrites every file that has one (and
        commits nothing when none has). Numbers: OPTIMIZE's and REORG's history
        metrics, summed."""
        path = f"delta.{quoted(table)}"
        commands = [f"OPTIMIZE {path}"]
        if cfg.peer.deletion_vectors:
            commands.append(f"REORG TABLE {path} APPLY (PURGE)")
        before = delta_log.version(spark, table)
        for command in commands:
            spark.sql(command).collect()
        return delta_log.history_metrics(spark, table, before, COMPACT_METRICS)

    def layout(self, spark: SparkSession, cfg: Config, table: Path) -> Layout:
        """The snapshot's data files, and those of them that have a deletion vector
        (a read loads each vector beside its file)."""
        from pyspark.sql import DataFrame as PyDataFrame  # deferred: slow to import

        jvm: Any = spark._jvm
        jss: Any = spark._jsparkSession
        none = jvm.scala.Option.apply(None)
        log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(jss, str(table))
        files = PyDataFrame(log.update(False, none, none).allFiles().toDF(), spark)
        row = files.selectExpr(
            "count(*) AS n", "count_if(deletionVector IS NOT NULL) AS dv"
        ).collect()[0]
        return Layout(data_files=int(row["n"]), delete_files=int(row["dv"]))

    def stream_prepare(self, spark: SparkSession, cfg: Config, table: Path) -> None:
        from delta.tables import DeltaTable  # deferred: slow to import

        if declares_changes(cfg):
            return  # made by the first micro-batch, typed by its file (MergeBatch)
        builder = DeltaTable.createIfNotExists(spark).location(str(table))
        builder = builder.addColumns(stream_schema())
        for key, value in self.table_properties(cfg).items():
            builder = builder.property(key, value)
        builder.execute()

    def batch_sink(
        self, cfg: Config, table: Path, checkpoint: str, on_batch: OnBatch | None
    ) -> MergeBatch:
        return MergeBatch(cfg, table, checkpoint, on_batch, self.table_properties(cfg))

    # Change data: each micro-batch (one file) collapsed and MERGEd as a batch write does.
    stream_changes = True

    def stream_sinks(self) -> tuple[StreamSink, ...]:
        # Delta's own sink (`format("delta")`) only appends or overwrites; its documented
        # upsert from a stream is a foreachBatch MERGE made idempotent by txnAppId and
        # txnVersion ("Upsert from streaming queries using foreachBatch").
        label = "foreachBatch MERGE, idempotent by txnAppId/txnVersion (Delta's documented upsert)"
        return (StreamSink(HARNESS_SINK, label, self.stream_writer),)

    def commit_count(self, table: Path) -> int:
        """Commits after the table's creation (version 0) in `_delta_log`."""
        return max(delta_log.versions(table), default=0)

    def commit_records(self, table: Path) -> int:
        """`_delta_log/<version>.json` files, version 0 (the creation) included."""
        return len(delta_log.versions(table))


# OPTIMIZE's and REORG's history metrics kept in a compaction's report.
COMPACT_METRICS = (
    "numAddedFiles",
    "numRemovedFiles",
    "numAddedBytes",
    "numRemovedBytes",
    "numDeletionVectorsRemoved",
    "numDeletionVectorRowsRemoved",
)


def _source_only(op: str) -> bool:
    """Whether an operator's merged value is the newest row's alone (its combine names
    the source only): then a post-image is the range's own merge."""
    return registry.spark_combine(op, "t", "s") == "s"


FORMAT = Delta()
