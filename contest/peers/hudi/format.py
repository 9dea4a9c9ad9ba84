"""Apache Hudi, MERGE_ON_READ keyed by uuid (by the workload's key with change data:
hudi/changes.py) with the batch version as ordering field.

Hudi 1.0.2 refuses the contract's MERGE on a MERGE_ON_READ table ("Target table's
field(...) cannot be the right-value of the update clause for MOR table"): its MOR MERGE
only takes source values. So the same expressions run in Spark: the collapsed batch is
left-joined with the keys' current rows (a merge-on-read snapshot query of the table)
and the merged rows are upserted (datasource upsert, ordering field = batch version)
into log files. Hudi still finds each key's file group, writes and compacts nothing,
and merges the logs on read; only the column arithmetic is Spark's, as a Hudi user
without a compiled record merger would do it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from contest.config import Config, PeerConfig
from contest.data.batches import Batch
from contest.errors import ConfigError, ReadError
from contest.peers import change_merge
from contest.peers.base import Layout, PeerFormat, codec_name
from contest.peers.history import batch_operators
from contest.peers.hudi import changes as hudi_changes
from contest.peers.hudi import history as hudi_history
from contest.peers.hudi.changes import key_options
from contest.peers.hudi.options import (
    INDEXES,
    ORDERING,
    STRATEGY_ID,
    procedure_options,
    table_name,
)
from contest.peers.hudi.timeline import COMPLETED, completed_instants
from contest.peers.merge import collapsed, merged_rows, peer_operators

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from contest.peers.change_merge import ChangeBatch


class Hudi(PeerFormat):
    name = "hudi"
    codecs = ("", "none", "snappy", "zstd", "gzip", "lz4_raw")
    marker = ".hoodie"
    metadata_dirs = (".hoodie",)
    # A stream upserts each micro-batch, collapsed, without reading the table: only a
    # record merger applies the contract then, so a stream of `hudi` runs hudi-merger's.
    stream_format = "hudi-merger"
    # What Hudi's incremental query gives for a range of commits (why a change read is
    # refused): the upserts wrote merged rows, each a key's value as of its commit.
    incremental_answer = (
        "an incremental query returns each changed key's upserted row, its value merged "
        "with the table's as of that commit (a post-image), not the merge of the range's "
        "own batches"
    )

    def validate(self, peer: PeerConfig) -> None:
        if peer.hudi_index not in INDEXES:
            raise ConfigError(
                f"peer.hudi_index: {peer.hudi_index!r} is not SIMPLE, BLOOM, BUCKET or RECORD_INDEX"
            )

    def start_conf(self, cfg: Config) -> dict[str, str]:
        return {
            "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
            "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
            "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
        }

    def write_options(self, cfg: Config, table: Path, operation: str) -> dict[str, str]:
        """Hudi datasource options of one write: a MERGE_ON_READ table keyed by uuid, not
        partitioned, the batch version as ordering field; then the configured layout."""
        p = cfg.peer
        opts = {
            "hoodie.table.name": table_name(table),
            "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.operation": operation,
            "hoodie.datasource.write.precombine.field": ORDERING,
            **key_options(cfg.workload.key),
        }
        if p.hudi_index:
            opts["hoodie.index.type"] = p.hudi_index
            if p.hudi_index == "BUCKET":
                opts["hoodie.index.bucket.engine"] = "SIMPLE"
        if p.buckets:
            opts["hoodie.bucket.index.num.buckets"] = str(p.buckets)
        if p.codec:
            opts["hoodie.parquet.compression.codec"] = codec_name(p.codec)
        if p.target_file_bytes:
            opts["hoodie.parquet.max.file.size"] = str(p.target_file_bytes)
        return opts | self.table_properties(cfg)

    def rows_to_write(
        self, spark: SparkSession, cfg: Config, table: Path, source: DataFrame, first: bool
    ) -> DataFrame:
        """The rows upserted for a collapsed batch: the merged rows of its keys, in the
        batch's columns and types (a column the table lacks yet reads NULL; an int32
        column stays int32 until a batch widens it: Hudi evolves the table's schema to
        the written rows')."""
        from pyspark.sql import functions as F  # deferred: slow to import

        if first:
            return source
        ops = batch_operators(cfg, source.columns)
        types = {f.name: f.dataType for f in source.schema.fields}
        table_df = spark.read.format("hudi").load(str(table))
        have = set(table_df.columns)
        current = table_df.select(
            "uuid",
            *[F.col(c) if c in have else F.lit(None).cast(types[c]).alias(c) for c in ops],
        )
        merged = merged_rows(current, source, ops)
        return merged.select("uuid", *[F.col(c).cast(types[c]).alias(c) for c in ops])

    def apply_batch(
        self, spark: SparkSession, cfg: Config, table: Path, batch: Batch, first: bool
    ) -> str:
        from pyspark.sql import functions as F  # deferred: slow to import

        if change_merge.needed(cfg, batch):
            return self.apply_changes(spark, cfg, table, batch, first)
        # In the batch file's types: a sum collapses to bigint, and an int column must
        # stay int until a batch widens it (Hudi evolves the table to the written rows).
        types = {f.name: f.dataType for f in spark.read.parquet(str(batch.path)).schema.fields}
        ops = batch_operators(cfg, list(types))
        source = collapsed(spark, batch, ops)
        source = source.select("uuid", *[F.col(c).cast(types[c]).alias(c) for c in ops])
        op, mode = ("bulk_insert", "overwrite") if first else ("upsert", "append")
        rows = self.rows_to_write(spark, cfg, table, source, first)
        rows = rows.withColumn(ORDERING, F.lit(batch.version).cast("long"))
        (
            rows.write.format("hudi")
            .options(**self.write_options(cfg, table, op))
            .mode(mode)
            .save(str(table))
        )
        return op

    def change_upserts(
        self,
        spark: SparkSession,
        cfg: Config,
        table: Path,
        batch: ChangeBatch,
        payload: Mapping[str, pa.DataType],
        first: bool,
    ) -> list[DataFrame]:
        """The upserts of a collapsed change batch, in order (hudi/changes.py; `payload`:
        the payload columns the table has, with their types): the rows merged with the
        table's in Spark, deletes marked by `_hoodie_is_deleted`."""
        if first:
            return [hudi_changes.without_deletes(hudi_changes.as_written(batch, payload))]
        current = spark.read.format("hudi").load(str(table))
        return [hudi_changes.merged(batch, current, payload, peer_operators(cfg))]

    def apply_changes(
        self, spark: SparkSession, cfg: Config, table: Path, batch: Batch, first: bool
    ) -> str:
        """Change data: the batch collapsed with the delete rule, then `change_upserts`,
        each one upsert (the first batch's a bulk insert) ordered by the batch's version."""
        from pyspark.sql import functions as F  # deferred: slow to import

        source = change_merge.collapse(spark, cfg, batch)
        payload = change_merge.payload_columns(cfg, batch.index)
        done: list[str] = []
        for rows in self.change_upserts(spark, cfg, table, source, payload, first):
            op, mode = ("bulk_insert", "overwrite") if first and not done else ("upsert", "append")
            rows = rows.withColumn(ORDERING, F.lit(batch.version).cast("long"))
            (
                rows.write.format("hudi")
                .options(**self.write_options(cfg, table, op))
                .mode(mode)
                .save(str(table))
            )
            done.append(op)
        return "+".join(done) + " " + source.label

    def read(self, spark: SparkSession, cfg: Config, table: Path) -> DataFrame:
        props = Path(table) / ".hoodie" / "hoodie.properties"
        if props.is_file() and STRATEGY_ID in props.read_text():
            # Its reader needs the merger's class and options: without them a task fails
            # ("Job aborted due to stage failure").
            raise ReadError(
                f"{table}: a hudi-merger table (its config names the contract's record "
                "merger; a stream of --format hudi writes one): read it with --set "
                "peer.format=hudi-merger"
            )
        return spark.read.format("hudi").load(str(table))

    def reader_options(self, cfg: Config) -> dict[str, str]:
        """Options every read of the table takes (none; a record merger's own)."""
        return {}

    # -- history: history.py ---------------------------------------------------------

    def evolve(self, spark: SparkSession, cfg: Config, table: Path, batch: Batch) -> list[str]:
        return hudi_history.evolve(self, spark, cfg, table, batch)

    def commit_id(self, spark: SparkSession, table: Path) -> str:
        return hudi_history.commit_id(spark, table)

    def read_as_of(self, spark: SparkSession, cfg: Config, table: Path, commit: str) -> DataFrame:
        return hudi_history.read_as_of(self, spark, cfg, table, commit)

    def read_changes(
        self, spark: SparkSession, cfg: Config, table: Path, start: str | None, end: str
    ) -> DataFrame:
        return hudi_history.read_changes(self, spark, cfg, table, start, end)

    def expire(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        return hudi_history.expire(self, spark, cfg, table)

    def compact_options(self, cfg: Config, table: Path) -> dict[str, str]:
        """The write client's options for a compaction: the table's write options (its
        merge, metadata table off, ...), and a plan made whatever the number of delta
        commits since the last one (Hudi schedules at 5 by default)."""
        opts = self.write_options(cfg, table, "upsert")
        opts["hoodie.compact.inline.max.delta.commits"] = "1"
        return opts

    def compact(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        """Hudi's MERGE_ON_READ compaction ("Compaction" page, 1.0: offline, through the
        Spark SQL procedure): `CALL run_compaction(op => 'scheduleandexecute', path =>
        ...)` plans every file group that has log files and merges each group's base
        file with its logs (the same merge a read does) into a new base file. The
        table's write options reach the procedure's write client as its `options`
        (Hudi's "k=v,k=v" list: options with an empty value, or a comma or "=" in
        it, cannot be given and are left to the table's config). Numbers: the file
        groups compacted."""
        listing = procedure_options(self.compact_options(cfg, table))
        path = str(table).replace("'", "\\'")
        rows = spark.sql(
            f"CALL run_compaction(op => 'scheduleandexecute', path => '{path}', "
            f"options => '{listing}')"
        ).collect()
        return {
            "compactions": len(rows),
            "file_groups_compacted": sum(int(r["operation_size"] or 0) for r in rows),
        }

    def layout(self, spark: SparkSession, cfg: Config, table: Path) -> Layout:
        """The latest file slice of each file group on the completed timeline: its base
        file and log files (Hudi's file-system view, listing the folder)."""
        jvm: Any = spark._jvm
        hudi = jvm.org.apache.hudi
        conf = hudi.hadoop.fs.HadoopFSUtils.getStorageConfWithCopy(
            spark.sparkContext._jsc.hadoopConfiguration()
        )
        meta = (
            hudi.common.table.HoodieTableMetaClient.builder()
            .setConf(conf)
            .setBasePath(str(table))
            .build()
        )
        timeline = meta.getActiveTimeline().getCommitsAndCompactionTimeline()
        view = hudi.common.table.view.HoodieTableFileSystemView.fileListingBasedFileSystemView(
            hudi.common.engine.HoodieLocalEngineContext(conf),
            meta,
            timeline.filterCompletedInstants(),
        )
        try:
            slices = view.getLatestFileSlices("").iterator()
            groups = bases = logs = 0
            while slices.hasNext():
                piece = slices.next()
                groups += 1
                bases += 1 if piece.getBaseFile().isPresent() else 0
                logs += int(piece.getLogFiles().count())
        finally:
            view.close()
        return Layout(data_files=bases, log_files=logs, buckets=groups)

    def commit_count(self, table: Path) -> int:
        """Completed delta commits on the table's own timeline (Hudi 1.0:
        `.hoodie/timeline/`, older: `.hoodie/`; not the metadata table's under
        `.hoodie/metadata/`). A MERGE_ON_READ upsert is a delta commit, a compaction a
        commit."""
        hoodie = Path(table) / ".hoodie"
        return sum(1 for d in (hoodie, hoodie / "timeline") for _ in d.glob("*.deltacommit"))

    def commit_records(self, table: Path) -> int:
        """Completed write instants in `.hoodie/timeline/` (Hudi 1.0.2 creates one empty,
        then fills it)."""
        try:
            names = os.listdir(Path(table) / ".hoodie" / "timeline")
        except FileNotFoundError:
            return 0
        return sum(1 for n in names if COMPLETED.match(n))

    def commit_half_written(self, table: Path) -> bool:
        """The newest completed instant still empty: Hudi 1.0.2 creates it, then fills it."""
        instants = completed_instants(table)
        return bool(instants) and instants[-1][1] == 0


FORMAT = Hudi()
