"""Apache Hudi with its own deferred merge: a MERGE_ON_READ table whose record merger is
the contract (jvm/src/main/java/contest/hudi/ContractRecordMerger.java).

Each batch, collapsed by key with the contract's rules (one row per key, "null" names
made NULL), is upserted as it is: with a bucket index Hudi finds a key's file group by
hashing it, so an upsert appends log files without reading the table; the merger
combines a key's versions when the table is read (and in compactions), ordered by the
batch's version (the ordering field). `hudi-mor` instead reads the current rows of the
batch's keys and upserts merged rows (contest/peers/hudi.py): Hudi 1.0.2's MERGE INTO
on a MOR table cannot read target columns.

Hudi 1.0's documentation recommends record mergers over payload classes for new custom
merge logic ("Going forward, we recommend users to migrate and use the record merger
APIs and not write new payload implementations", Record Mergers page,
https://hudi.apache.org/docs/1.0.2/record_merger). The merger is registered through the
options that page documents: hoodie.write.record.merge.mode=CUSTOM, its strategy id and
its implementation class, given to every write and read.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data.batches import COLUMNS
from contest.errors import ConnectorError
from contest.peers.hudi import ORDERING, Hudi

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter

# A row's ordering value in a stream: the source file's feed number, then the row's
# index in its file (fewer than 2**32 rows a file).
ROW_BITS = 32

MERGER_CLASS = "contest.hudi.ContractRecordMerger"
# ContractRecordMerger.STRATEGY_ID: the merge strategy Hudi persists in the table config.
STRATEGY_ID = "6f0c3a4e-2b1d-4c55-9a57-3c0e1f8a7b21"


def merger_options() -> dict[str, str]:
    """Hudi's documented options registering the contract's record merger."""
    return {
        "hoodie.write.record.merge.mode": "CUSTOM",
        "hoodie.write.record.merge.strategy.id": STRATEGY_ID,
        "hoodie.write.record.merge.custom.implementation.classes": MERGER_CLASS,
    }


def helper_jar(cfg: Config) -> Path:
    """The project's jar holding the merger (built by ./build.sh from jvm/)."""
    from contest.infra.lakesoul_jvm import helper_jar as jar

    path = jar(cfg)
    if not path.is_file():
        raise ConnectorError(
            f"hudi-merger: the record merger's jar {path} is not built: run ./build.sh"
        )
    return path


class HudiMerger(Hudi):
    name = "hudi-merger"
    stream_format = ""

    def start_conf(self, cfg: Config) -> dict[str, str]:
        # The merger runs in every task that writes, compacts or reads the table.
        return super().start_conf(cfg) | {"spark.jars": str(helper_jar(cfg))}

    def write_options(self, cfg: Config, table: Path, operation: str) -> dict[str, str]:
        # A merger of Spark rows needs the log's data blocks in parquet (Hudi 1.0.2 refuses
        # the default Avro blocks: "ContractRecordMerger only support parquet log").
        opts = {"hoodie.logfile.data.block.format": "parquet"}
        return super().write_options(cfg, table, operation) | merger_options() | opts

    def rows_to_write(
        self, spark: SparkSession, table: Path, source: DataFrame, first: bool
    ) -> DataFrame:
        """The collapsed batch itself: the merger, not Spark, merges it with the table."""
        return source

    def read(self, spark: SparkSession, cfg: Config, table: Path) -> DataFrame:
        return spark.read.format("hudi").options(**merger_options()).load(str(table))

    def stream_writer(
        self,
        spark: SparkSession,
        cfg: Config,
        table: Path,
        rows: DataFrame,
        checkpoint: str,
        on_batch: Callable[[int, str, int, int, float], None] | None = None,
    ) -> DataStreamWriter:
        """Hudi's own streaming sink (`format("hudi")`): each micro-batch an upsert whose
        commit metadata records the batch id under the sink's checkpoint identifier, so
        a restarted query skips a batch id the timeline holds. The rows go as they come
        (the merger combines a key's rows in the batch and with the table), ordered by
        the source file's feed number and the row's index in it."""
        from pyspark.sql import functions as F

        order = F.col("_ver") * F.lit(2**ROW_BITS) + F.col("_pos")
        # "null" names made NULL as the batch write's collapse does: a key's first row
        # meets no merger, and a later NULL keeps the older name in the merger.
        name = F.when(F.col("name") == "null", F.lit(None)).otherwise(F.col("name"))
        out = rows.withColumn(ORDERING, order.cast("long")).withColumn("name", name)
        out = out.select(*COLUMNS, ORDERING)
        opts = self.write_options(cfg, table, "upsert") | {
            # Compaction left to the reads' merge (and to `contest compact`), as in the
            # batch write: the stream only appends log files.
            "hoodie.datasource.compaction.async.enable": "false",
            "hoodie.datasource.write.streaming.checkpoint.identifier": Path(table).name,
        }
        return (
            out.writeStream.format("hudi")
            .options(**opts)
            .outputMode("append")
            .option("path", str(table))
        )


FORMAT = HudiMerger()
