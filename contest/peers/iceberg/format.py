"""Apache Iceberg: format v2 or v3 tables in a Hadoop catalog, MERGE INTO as
merge-on-read (v2: position delete files; v3: deletion vectors) or copy-on-write
(peer.merge_mode), unpartitioned or bucketed by uuid. Commit numbers from the
snapshot summary."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config, PeerConfig
from contest.data.batches import Batch
from contest.errors import ConfigError, ReadError, SchemaEvolutionError
from contest.peers import change_merge
from contest.peers.base import Layout, PeerFormat, codec_name, error_line
from contest.peers.iceberg.native import current_metadata
from contest.peers.merge import collapsed, merge_sql, peer_operators, source_operators
from contest.peers.schema import batch_changes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, DataFrameWriterV2, SparkSession

# The Iceberg catalog the jobs use: a Hadoop catalog, i.e. the warehouse folder itself
# holds each table's metadata pointer (version-hint.text) and commits by atomic rename.
# Chosen because it needs no server and the contest's tables are on a local disk, where
# rename is atomic. On an object store (no atomic rename) a JDBC catalog on the
# project's PostgreSQL would be the choice; it changes only the commit, not the MERGE.
CATALOG = "peer"
# Snapshot summary keys kept in the report.
METRICS = (
    "added-data-files",
    "deleted-data-files",  # Iceberg's SnapshotSummary name for data files removed
    "added-delete-files",
    "removed-delete-files",
    "added-position-deletes",
    "added-dvs",  # format v3: deletion vectors added (and below, replaced)
    "removed-dvs",
    "added-records",
    "deleted-records",
    "added-files-size",
    "removed-files-size",
    "total-data-files",
    "total-delete-files",
    "total-position-deletes",
    "total-records",
)


def location(table_path: Path) -> tuple[Path, str, str]:
    """(warehouse, namespace, table) of a table folder in a Hadoop catalog: the catalog
    keeps table `ns.t` at `<warehouse>/ns/t`, so the folder's parent is the namespace and
    its grandparent the warehouse."""
    path = Path(table_path).absolute()
    return path.parent.parent, path.parent.name, path.name


def identifier(table_path: Path) -> str:
    _, namespace, name = location(table_path)
    return f"{CATALOG}.`{namespace}`.`{name}`"


# Table format versions Iceberg 1.10 writes from Spark 3.5; 3 adds deletion vectors
# (a merge-on-read MERGE marks a data file's deleted rows in one Puffin blob per file
# instead of writing position delete files). 0: Iceberg's default.
FORMAT_VERSIONS = (0, 2, 3)
DEFAULT_FORMAT_VERSION = 2


def format_version(peer: PeerConfig) -> int:
    return peer.format_version or DEFAULT_FORMAT_VERSION


def check_format_version(peer: PeerConfig) -> None:
    if peer.format_version not in FORMAT_VERSIONS:
        raise ConfigError(
            f"peer.format_version: {peer.format_version} is not 2 or 3 (0: Iceberg's default, 2)"
        )


def partitioned(writer: DataFrameWriterV2, cfg: Config) -> DataFrameWriterV2:
    """The new table PARTITIONED BY bucket(peer.buckets, uuid) when peer.buckets is set
    ("Partitioning": a bucket transform hashes the key into N partitions, so a MERGE's
    join and its delete files stay within a key's bucket); unpartitioned otherwise."""
    from pyspark.sql import functions as F  # deferred: slow to import

    if not cfg.peer.buckets:
        return writer
    key = cfg.workload.key[0]  # the key's first column (`uuid`, the contest's)
    return writer.partitionedBy(F.bucket(cfg.peer.buckets, F.col(key)))


class Iceberg(PeerFormat):
    name = "iceberg"
    codecs = ("", "none", "snappy", "zstd", "gzip")
    marker = "metadata"
    metadata_dirs = ("metadata",)

    def validate(self, peer: PeerConfig) -> None:
        if peer.merge_mode not in ("merge-on-read", "copy-on-write"):
            raise ConfigError(
                f"peer.merge_mode: {peer.merge_mode!r} is not merge-on-read or copy-on-write"
            )
        if peer.distribution not in ("", "none", "hash", "range"):
            raise ConfigError(
                f"peer.distribution: {peer.distribution!r} is not none, hash or range"
            )
        check_format_version(peer)

    def start_conf(self, cfg: Config) -> dict[str, str]:
        return {
            "spark.sql.extensions": (
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
            ),
            f"spark.sql.catalog.{CATALOG}": "org.apache.iceberg.spark.SparkCatalog",
            f"spark.sql.catalog.{CATALOG}.type": "hadoop",
        }

    def runtime_conf(self, cfg: Config, table: Path) -> dict[str, str]:
        warehouse, _, _ = location(table)
        conf = super().runtime_conf(cfg, table)
        conf[f"spark.sql.catalog.{CATALOG}.warehouse"] = str(warehouse)
        return conf

    def table_properties(self, cfg: Config) -> dict[str, str]:
        p = cfg.peer
        props = {"format-version": str(format_version(p))}
        for op in ("merge", "update", "delete"):
            props[f"write.{op}.mode"] = p.merge_mode
        if p.codec:
            props["write.parquet.compression-codec"] = codec_name(p.codec)
        if p.target_file_bytes:
            props["write.target-file-size-bytes"] = str(p.target_file_bytes)
        if p.distribution:
            props["write.distribution-mode"] = p.distribution
            props["write.merge.distribution-mode"] = p.distribution
        return props | super().table_properties(cfg)

    def apply_batch(
        self, spark: SparkSession, cfg: Config, table: Path, batch: Batch, first: bool
    ) -> str:
        if change_merge.needed(cfg, batch):
            return self._apply_changes(spark, cfg, table, batch, first)
        source = collapsed(spark, batch, peer_operators(cfg))
        ident = identifier(table)
        if first:
            spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ident.rsplit('.', 1)[0]}")
            writer = partitioned(source.writeTo(ident).using("iceberg"), cfg)
            for key, value in self.table_properties(cfg).items():
                writer = writer.tableProperty(key, value)
            writer.create()
            return "create"
        if cfg.peer.merge_mode == "copy-on-write":
            # Iceberg's copy-on-write MERGE refuses a source Spark deems non-deterministic
            # ([INVALID_NON_DETERMINISTIC_EXPRESSIONS]: the collapse orders a key's rows by
            # monotonically_increasing_id), so the collapsed batch is materialised first.
            source = source.localCheckpoint()
        source.createOrReplaceTempView("contest_peer_batch")
        ops = source_operators(peer_operators(cfg), source.columns)
        spark.sql(merge_sql(ident, "contest_peer_batch", ops))
        return "merge"

    def _apply_changes(
        self, spark: SparkSession, cfg: Config, table: Path, batch: Batch, first: bool
    ) -> str:
        """Change data (contest/peers/change_merge.py): the batch collapsed with the delete
        rule, MERGEd with `WHEN MATCHED ... THEN DELETE` and a SET of only the columns
        the batch holds; merge-on-read writes the matched rows' position deletes (v2) or
        deletion vectors (v3) as for an upsert. The first batch creates the table with
        every payload column (empty), then MERGEs like the others."""
        ident = identifier(table)
        if first:
            rows = spark.read.parquet(str(batch.path))
            empty = spark.createDataFrame([], change_merge.table_schema(cfg, batch, rows))
            spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {ident.rsplit('.', 1)[0]}")
            writer = partitioned(empty.writeTo(ident).using("iceberg"), cfg)
            for key, value in self.table_properties(cfg).items():
                writer = writer.tableProperty(key, value)
            writer.create()
        source = change_merge.collapse(spark, cfg, batch)
        if cfg.peer.merge_mode == "copy-on-write":  # materialised: as `apply_batch` says
            source = dataclasses.replace(source, rows=source.rows.localCheckpoint())
        change_merge.apply(
            spark, cfg, source, ident, self.read(spark, cfg, table), "contest_peer_batch"
        )
        return ("create+" if first else "") + source.label

    # -- history ----------------------------------------------------------------------

    def evolve(self, spark: SparkSession, cfg: Config, table: Path, batch: Batch) -> list[str]:
        """Iceberg's own schema evolution ("Spark DDL" page): `ALTER TABLE ... ADD
        COLUMN` for a column the batch adds, `ALTER COLUMN ... TYPE bigint` for an
        int the batch widens (a metadata change: old files keep int and read as long).
        Iceberg's error, one line, when it refuses one."""
        ident = identifier(table)
        done = []
        for change in batch_changes(spark, cfg, self.read(spark, cfg, table), batch):
            column = "`" + change.column.replace("`", "``") + "`"
            if change.kind == "added":
                command = f"ALTER TABLE {ident} ADD COLUMN {column} {change.new}"
            else:  # widened, or a change Iceberg refuses in its own words
                command = f"ALTER TABLE {ident} ALTER COLUMN {column} TYPE {change.new}"
            try:
                spark.sql(command)
            except Exception as exc:
                raise SchemaEvolutionError(f"iceberg: {change}: {error_line(exc)}") from None
            done.append(str(change))
        return done

    def commit_id(self, spark: SparkSession, table: Path) -> str:
        """The snapshot the table's main branch points at."""
        row = spark.sql(
            f"SELECT snapshot_id FROM {identifier(table)}.refs WHERE name = 'main'"
        ).collect()
        if not row:
            raise ReadError(f"iceberg: table {table} has no snapshot")
        return str(row[0][0])

    def read_as_of(self, spark: SparkSession, cfg: Config, table: Path, commit: str) -> DataFrame:
        """Time travel by snapshot id (`VERSION AS OF`), in that snapshot's schema; an
        expired snapshot is refused naming the oldest one that remains."""
        self._require_snapshot(spark, table, commit)
        return spark.sql(f"SELECT * FROM {identifier(table)} VERSION AS OF {int(commit)}")

    def read_changes(
        self, spark: SparkSession, cfg: Config, table: Path, start: str | None, end: str
    ) -> DataFrame:
        """The incremental read between two snapshots (`start-snapshot-id` exclusive,
        `end-snapshot-id`, the "Spark Queries" page): the rows the range's append
        snapshots added, each an inserted key's row as its batch wrote it, which is the
        range's own merge when every snapshot in it is an append. Iceberg 1.10 skips
        the other snapshots (an overwrite: every MERGE that updates a row commits one)
        without a word, so their rows would be missing: such a range is refused in one
        line naming the first of them."""
        if start is None:
            return self.read_as_of(spark, cfg, table, end)
        self._require_snapshot(spark, table, start)
        rows = spark.sql(
            f"SELECT snapshot_id, parent_id, operation FROM {identifier(table)}.snapshots"
        ).collect()
        other = first_non_append({str(r[0]): (str(r[1]), str(r[2])) for r in rows}, start, end)
        if other is not None:
            raise ReadError(
                f"iceberg: the incremental read between snapshots {start} and {end} reads "
                f"append snapshots only, and snapshot {other[0]} is an {other[1]} (its "
                "updated rows would be missing)"
            )
        return (
            spark.read.format("iceberg")
            .option("start-snapshot-id", int(start))
            .option("end-snapshot-id", int(end))
            .load(identifier(table))
        )

    def expire(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        """`expire_snapshots` keeping the newest snapshot only ("Maintenance" page):
        the snapshots before it go, with the files only they named. Not followed by
        `remove_orphan_files`: the harness wrote no orphans, and the table folder holds
        its batch ledger, which that procedure would take for one."""
        _, namespace, name = location(table)
        target = f"`{namespace}`.`{name}`".replace("'", "\\'")
        now = spark.sql(
            "SELECT date_format(current_timestamp() + INTERVAL 1 SECOND, 'yyyy-MM-dd HH:mm:ss.SSS')"
        ).collect()[0][0]
        row = spark.sql(
            f"CALL {CATALOG}.system.expire_snapshots(table => '{target}', "
            f"older_than => TIMESTAMP '{now}', retain_last => 1)"
        ).collect()[0]
        return {k: int(v) for k, v in row.asDict().items() if isinstance(v, int)}

    @staticmethod
    def _require_snapshot(spark: SparkSession, table: Path, commit: str) -> None:
        rows = spark.sql(
            f"SELECT snapshot_id FROM {identifier(table)}.snapshots ORDER BY committed_at"
        ).collect()
        ids = [str(r[0]) for r in rows]
        if commit not in ids:
            raise ReadError(
                f"iceberg: snapshot {commit} was expired (expire_snapshots); the oldest "
                f"snapshot it can start from is {ids[0] if ids else 'none'}"
            )

    def commit_metrics(self, spark: SparkSession, table: Path) -> dict[str, int]:
        snap = spark.sql(
            f"SELECT summary FROM {identifier(table)}.snapshots ORDER BY committed_at DESC LIMIT 1"
        ).collect()[0]["summary"]
        return {k: int(snap[k]) for k in METRICS if k in snap}

    def read(self, spark: SparkSession, cfg: Config, table: Path) -> DataFrame:
        # PyIceberg's table (the pyiceberg peer's: a SQL catalog in its folder, no
        # version-hint.text) is loaded from its current metadata file, a static table.
        pointer = current_metadata(table)
        if pointer is not None:
            return spark.read.format("iceberg").load(pointer)
        return spark.table(identifier(table))

    def compact(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        """Iceberg's two Spark procedures for this ("Maintenance" and "Spark Procedures"
        pages, 1.10). `rewrite_data_files`, bin-packing: data files outside 75%-180% of
        the target size are merged, and with `delete-file-threshold` = 1 every data
        file a delete file applies to is rewritten without the deleted rows (by
        default only files with enough deletes are); `min-input-files` = 2, so two
        small files are enough to merge. Then `rewrite_position_delete_files` with
        `rewrite-all`: the position deletes left pointing at the replaced data files
        (the "dangling delete" problem the page names: the rewritten files take the
        sequence number the rewrite started at, so deletes committed before it still
        look as if they could apply, and a read still plans them) are filtered out,
        and delete files left with none are dropped. Numbers: both procedures'
        outputs (the second's prefixed `deletes_`)."""
        _, namespace, name = location(table)
        target = f"`{namespace}`.`{name}`".replace("'", "\\'")
        data = self._call(
            spark,
            "rewrite_data_files",
            target,
            {"delete-file-threshold": "1", "min-input-files": "2"},
        )
        deletes = self._call(
            spark, "rewrite_position_delete_files", target, {"rewrite-all": "true"}
        )
        return data | {f"deletes_{k}": v for k, v in deletes.items()}

    @staticmethod
    def _call(
        spark: SparkSession, procedure: str, target: str, options: dict[str, str]
    ) -> dict[str, int]:
        """One of the catalog's procedures on the table; its output's numbers."""
        pairs = ", ".join(f"'{k}', '{v}'" for k, v in options.items())
        row = spark.sql(
            f"CALL {CATALOG}.system.{procedure}(table => '{target}', options => map({pairs}))"
        ).collect()[0]
        return {k: int(v) for k, v in row.asDict().items() if isinstance(v, int)}

    def layout(self, spark: SparkSession, cfg: Config, table: Path) -> Layout:
        """The current snapshot's data and delete files (its metadata tables)."""
        ident = identifier(table)
        data = spark.sql(f"SELECT count(*) FROM {ident}.data_files").collect()[0][0]
        deletes = spark.sql(f"SELECT count(*) FROM {ident}.delete_files").collect()[0][0]
        return Layout(data_files=int(data), delete_files=int(deletes))


def first_non_append(
    snapshots: dict[str, tuple[str, str]], start: str, end: str
) -> tuple[str, str] | None:
    """The oldest snapshot after `start` up to `end` (walking `end`'s parents: id ->
    (parent id, operation)) that is not an append, as (id, operation); None when all
    are appends."""
    found = None
    at = end
    while at != start and at in snapshots:
        parent, operation = snapshots[at]
        if operation != "append":
            found = (at, operation)
        at = parent
    return found


FORMAT = Iceberg()
