"""Apache Paimon: a primary-key table whose aggregation merge engine is the contract.

The table is keyed by uuid with `'merge-engine' = 'aggregation'`, each column's
aggregate function its merge operator's (table.py's AGGREGATE_FUNCTIONS): with the
contest's contract `requests` is summed (`sum` skips NULLs and is NULL only when every
value is), every other column keeps its last non-NULL value (`last_non_null_value`); the
contract's "null" name is made NULL as the rows are written (an operator whose rule
skips the string "null"), so it keeps the older name as the contract asks. Writes append
sorted runs to each bucket's LSM tree; the merge runs when the table is read (and in
compactions): deferred, as LakeSoul defers it.
https://paimon.apache.org/docs/0.9/primary-key-table/merge-engine/aggregation/

Order: `'sequence.field' = '_ver,_pos'`, the batch's version, then the row's position
in its batch (compared in that order). Paimon merges the records of a key in sequence
order, so batches may be written in any order, and rows of one key inside one batch are
applied in file order, without collapsing the batch in Spark first (that would be one
more shuffle and aggregation per batch, doing the merge engine's work).
https://paimon.apache.org/docs/0.9/primary-key-table/sequence-rowkind/
The position is Spark's `monotonically_increasing_id` on the batch as read, the order
the copy-on-write baseline's `collapse_batch` takes as file order too.

Concurrent writers: batches after the first are written from a pool of write.threads
threads, as the harness's own write does (contest/peers/write.py). Each batch is one
Spark write and one Paimon commit; commits race on the next snapshot's id, which
Paimon's local file IO claims by a rename under a JVM-wide lock that refuses an existing
target (`LocalFileIO.rename`, RENAME_LOCK), and a writer that loses retries on the new
latest snapshot. With `write-only` no writer compacts, so no two commits delete the
same file and none conflicts ("Multiple Writers" page); the sequence fields, not the
commit order, order a key's versions. Tried: ten batches committed newest first from
four threads gave eleven APPEND snapshots and the oracle's result exactly.
https://paimon.apache.org/docs/0.9/maintenance/multiple-writers/

Where the table lives: Paimon's filesystem catalog keeps table `db.t` at
`<warehouse>/db.db/t`; the table folder the harness names is the warehouse, holding one
database and one table (so its stored bytes are the folder's).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data import operators as registry
from contest.data.batches import COLUMNS, Batch
from contest.data.changes import changes_of
from contest.data.spark_types import spark_type
from contest.peers import change_merge
from contest.peers.base import (
    HARNESS_SINK,
    OWN_SINK,
    Layout,
    PeerFormat,
    StreamSink,
    codec_name,
    stream_schema,
)
from contest.peers.change_merge import q
from contest.peers.merge import peer_operators, source_operators, written
from contest.peers.microbatch import OnBatch
from contest.peers.paimon import history as paimon_history
from contest.peers.paimon.stream import AppendBatch
from contest.peers.paimon.table import (
    CATALOG,
    DATABASE,
    METRICS,
    SEQUENCE,
    TABLE,
    identifier,
    merge_properties,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class Paimon(PeerFormat):
    name = "paimon"
    # Paimon's own codec names for file.compression ("" = its default).
    codecs = ("", "none", "snappy", "zstd", "gzip", "lz4")
    marker = f"{DATABASE}.db"
    # Everything under the table but its bucket folders is metadata.
    metadata_dirs = ("schema", "snapshot", "manifest", "index", "statistics")
    concurrent_batches = True
    # Rows go in as they are; the aggregation merge engine merges them.
    merge_engines = ("paimon",)

    def start_conf(self, cfg: Config) -> dict[str, str]:
        # https://paimon.apache.org/docs/0.9/spark/quick-start/
        return {
            "spark.sql.extensions": (
                "org.apache.paimon.spark.extensions.PaimonSparkSessionExtensions"
            ),
            f"spark.sql.catalog.{CATALOG}": "org.apache.paimon.spark.SparkCatalog",
        }

    def runtime_conf(self, cfg: Config, table: Path) -> dict[str, str]:
        conf = super().runtime_conf(cfg, table)
        conf[f"spark.sql.catalog.{CATALOG}.warehouse"] = Path(table).absolute().as_uri()
        return conf

    def table_properties(self, cfg: Config) -> dict[str, str]:
        p = cfg.peer
        props = merge_properties(peer_operators(cfg), cfg.workload.key)
        if p.buckets:
            props["bucket"] = str(p.buckets)
        if p.codec:
            props["file.compression"] = codec_name(p.codec).replace("uncompressed", "none")
        if p.target_file_bytes:
            props["target-file-size"] = f"{p.target_file_bytes}b"
        return props | super().table_properties(cfg)

    def change_rows(self, spark: SparkSession, cfg: Config, batch: Batch) -> DataFrame:
        """A batch of change data as written (no row kinds: Paimon 0.9 cannot delete, see
        __init__.py): the workload's key, every payload column of the batch's schema (one
        the file lacks NULL, which every aggregate but last_value skips, so the merged
        value stays as it was), "null" names made NULL, version and position."""
        from pyspark.sql import functions as F  # deferred: slow to import

        rules = changes_of(cfg)
        df = spark.read.parquet(str(batch.path))
        df = change_merge.without_null_keys(df, list(rules.key), rules, batch)
        payload = change_merge.payload_columns(cfg, batch.index)
        cols = [
            (F.col(q(c)) if c in df.columns else F.lit(None).cast(spark_type(t))).alias(c)
            for c, t in payload.items()
        ]
        df = df.select(*[q(k) for k in rules.key], *cols)
        return (
            written(df, {c: op for c, op in peer_operators(cfg).items() if c in payload})
            .withColumn(SEQUENCE[0], F.lit(batch.version).cast("long"))
            .withColumn(SEQUENCE[1], F.monotonically_increasing_id())
        )

    def rows(self, spark: SparkSession, batch: Batch, ops: Mapping[str, str]) -> DataFrame:
        """The batch's rows as written: "null" names made NULL, version and position."""
        from pyspark.sql import functions as F  # deferred: slow to import

        df = spark.read.parquet(str(batch.path))
        ops = source_operators(ops, df.columns)  # a batch before a column's addition
        df = df.select("uuid", *ops)
        return (
            written(df, ops)
            .withColumn(SEQUENCE[0], F.lit(batch.version).cast("long"))
            .withColumn(SEQUENCE[1], F.monotonically_increasing_id())
        )

    def create(self, spark: SparkSession, cfg: Config, schema) -> None:
        key = set(cfg.workload.key)
        cols = ", ".join(
            f"`{f.name}` {f.dataType.simpleString()}" + (" NOT NULL" if f.name in key else "")
            for f in schema.fields
        )
        # A column added later gets its aggregate function when it is added (evolve).
        names = set(schema.names)
        props = ", ".join(
            f"'{k}' = '{v}'"
            for k, v in self.table_properties(cfg).items()
            if not (k.startswith("fields.") and k.split(".")[1] not in names)
        )
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {CATALOG}.{DATABASE}")
        spark.sql(f"CREATE TABLE {identifier()} ({cols}) TBLPROPERTIES ({props})")

    def apply_batch(
        self, spark: SparkSession, cfg: Config, table: Path, batch: Batch, first: bool
    ) -> str:
        if change_merge.needed(cfg, batch):
            rows = self.change_rows(spark, cfg, batch)
        else:
            rows = self.rows(spark, batch, peer_operators(cfg))
        if first:
            self.create(spark, cfg, rows.schema)
        rows.writeTo(identifier()).append()
        return "create+append" if first else "append"

    def commit_metrics(self, spark: SparkSession, table: Path) -> dict[str, int]:
        snap = spark.sql(
            f"SELECT {', '.join(METRICS)} FROM {CATALOG}.{DATABASE}.`{TABLE}$snapshots` "
            "ORDER BY snapshot_id DESC LIMIT 1"
        ).collect()
        if not snap:
            return {}
        return {k: int(v) for k, v in snap[0].asDict().items() if v is not None}

    def read(self, spark: SparkSession, cfg: Config, table: Path) -> DataFrame:
        return spark.table(identifier())

    # -- history: history.py ---------------------------------------------------------

    def evolve(self, spark: SparkSession, cfg: Config, table: Path, batch: Batch) -> list[str]:
        return paimon_history.evolve(self, spark, cfg, table, batch)

    def commit_id(self, spark: SparkSession, table: Path) -> str:
        return paimon_history.commit_id(spark)

    def read_as_of(self, spark: SparkSession, cfg: Config, table: Path, commit: str) -> DataFrame:
        return paimon_history.read_as_of(self, spark, cfg, table, commit)

    def read_changes(
        self, spark: SparkSession, cfg: Config, table: Path, start: str | None, end: str
    ) -> DataFrame:
        return paimon_history.read_changes(self, spark, cfg, table, start, end)

    def expire(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        return paimon_history.expire(spark)

    def compact(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        """Paimon's dedicated compaction (0.9 "Spark Procedures" page): `CALL
        sys.compact(table => ...)` runs a full compaction of every bucket, merging its
        sorted runs into one with the table's merge engine (the aggregation that is the
        contract, in sequence order), also on a `write-only` table (the procedure is
        the compaction job that option leaves compaction to). Numbers: whether it
        committed, and the latest snapshot's own (its `snapshots` system table; a
        compaction's `delta_record_count` is minus the records it merged away)."""
        rows = spark.sql(f"CALL {CATALOG}.sys.compact(table => '{DATABASE}.{TABLE}')").collect()
        committed = int(bool(rows and rows[0][0]))
        return {"committed": committed} | self.commit_metrics(spark, table)

    def layout(self, spark: SparkSession, cfg: Config, table: Path) -> Layout:
        """The latest snapshot's data files and the buckets holding them (its `files`
        system table)."""
        row = spark.sql(
            "SELECT count(*), count(DISTINCT partition, bucket) "
            f"FROM {CATALOG}.{DATABASE}.`{TABLE}$files`"
        ).collect()[0]
        return Layout(data_files=int(row[0]), buckets=max(int(row[1]), 1))

    def location(self, table: Path) -> Path:
        """The table's own folder in the warehouse the harness names."""
        return Path(table).absolute() / f"{DATABASE}.db" / TABLE

    def commit_records(self, table: Path) -> int:
        """`snapshot/snapshot-<id>` files, one per commit."""
        try:
            names = os.listdir(self.location(table) / "snapshot")
        except FileNotFoundError:
            return 0
        return sum(1 for n in names if n.startswith("snapshot-"))

    def stream_prepare(self, spark: SparkSession, cfg: Config, table: Path) -> None:
        if (self.location(table) / "schema").exists():
            return
        self.create(spark, cfg, stream_schema(SEQUENCE))

    def own_stream(
        self, cfg: Config, table: Path, rows: DataFrame
    ) -> tuple[str, DataFrame, dict[str, str]]:
        """Paimon's own streaming sink (`format("paimon")`, the documented way to write
        a stream): the rows as the batch write gives them, the sequence fields the
        source file's feed number and the row's index in it. Whether a replayed batch
        id commits again is what the bench measures (apache/paimon#9666)."""
        out = written(rows, registry.CONTRACT).select(*COLUMNS, *SEQUENCE)
        return "paimon", out, {"path": str(self.location(table))}

    def batch_sink(
        self, cfg: Config, table: Path, checkpoint: str, on_batch: OnBatch | None
    ) -> AppendBatch:
        """The harness's `foreachBatch` (stream.py's AppendBatch): each micro-batch one
        Spark write, exactly once by its record of the APPEND snapshot before it."""
        return AppendBatch(self.location(table), cfg, table, checkpoint, on_batch)

    # Paimon's own sink is its default stream writer; the harness's foreachBatch the other.
    stream_writer = PeerFormat.own_stream_writer
    harness_stream_writer = PeerFormat.stream_writer

    def stream_sinks(self) -> tuple[StreamSink, ...]:
        # Paimon's own sink first: the one its documentation gives for a stream.
        own = 'its own format("paimon") sink'
        harness = "foreachBatch: one append a micro-batch, its APPEND snapshot recorded"
        return (
            StreamSink(OWN_SINK, own, self.stream_writer),
            StreamSink(HARNESS_SINK, harness, self.harness_stream_writer),
        )

    def commit_count(self, table: Path) -> int:
        """APPEND snapshots (a compaction's snapshot adds no data)."""
        count = 0
        for snap in (self.location(table) / "snapshot").glob("snapshot-*"):
            try:
                kind = json.loads(snap.read_text()).get("commitKind")
            except (OSError, ValueError):
                continue
            count += kind == "APPEND"
        return count


FORMAT = Paimon()
