"""Delta Lake: MERGE INTO a path table; copy-on-write, or deletion vectors
(peer.deletion_vectors). Commit numbers from the table's history."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data.batches import Batch
from contest.peers.base import PeerFormat, codec_name, quoted
from contest.peers.merge import collapsed, merge_sql

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
    package_set = "delta"
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
        from delta.tables import DeltaTable

        source = collapsed(spark, batch)
        if first:
            builder = DeltaTable.create(spark).location(str(table)).addColumns(source.schema)
            for key, value in self.table_properties(cfg).items():
                builder = builder.property(key, value)
            builder.execute()
            source.write.format("delta").mode("append").save(str(table))
            return "create+append"
        source.createOrReplaceTempView("contest_peer_batch")
        spark.sql(merge_sql(f"delta.{quoted(table)}", "contest_peer_batch"))
        return "merge"

    def commit_metrics(self, spark: SparkSession, table: Path) -> dict[str, int]:
        from delta.tables import DeltaTable

        last = DeltaTable.forPath(spark, str(table)).history(1).collect()[0]
        return {
            k: int(v)
            for k, v in (last["operationMetrics"] or {}).items()
            if k in METRICS and str(v).isdigit()
        }

    def read(self, spark: SparkSession, cfg: Config, table: Path) -> DataFrame:
        return spark.read.format("delta").load(str(table))


FORMAT = Delta()
