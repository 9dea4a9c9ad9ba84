"""Hudi's history under the newest schema, through Hudi's own mechanisms
(Hudi 1.0.2):

- schema evolution on write ("Schema Evolution" page, "schema evolution on write"): a
  batch with a new nullable column, or an int column as long, is upserted as it is and
  Hudi evolves the table's schema to the written rows'; `evolve` names what the write
  will change and refuses what Hudi does not take on write (a type change that is no
  integer widening);
- time travel: a snapshot query with `as.of.instant` (the instant's time);
- incremental query (`hoodie.datasource.query.type=incremental`, begin / end instant):
  not the range's own merge on either strategy (`Hudi.incremental_answer`), so a change
  read of a range is refused, saying what the query gives instead;
- clean (the write client's `clean()`, what `CALL run_clean` runs) keeping the newest
  version of each file group.

A commit's id is its completed instant's requested time, what `as.of.instant` and the
incremental query's instants compare with.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from contest.config import Config
from contest.data.batches import Batch
from contest.errors import ReadError, RunError, SchemaEvolutionError
from contest.peers.base import error_line
from contest.peers.history import newest_columns, simple_fields
from contest.peers.hudi.changes import live
from contest.peers.hudi.options import ORDERING
from contest.peers.merge import peer_operators
from contest.peers.schema import schema_changes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class Hudi(Protocol):
    """What the history asks of a Hudi format (format.py's Hudi, merger.py's HudiMerger)."""

    name: ClassVar[str]

    @property
    def incremental_answer(self) -> str: ...

    def reader_options(self, cfg: Config) -> dict[str, str]: ...

    def write_options(self, cfg: Config, table: Path, operation: str) -> dict[str, str]: ...


# Hudi's own columns in a read (`_hoodie_commit_time`, ...) and the ordering field.
META_PREFIX = "_hoodie_"


def meta_client(spark: SparkSession, table: Path) -> Any:
    jvm: Any = spark._jvm
    hudi = jvm.org.apache.hudi
    conf = hudi.hadoop.fs.HadoopFSUtils.getStorageConfWithCopy(
        spark.sparkContext._jsc.hadoopConfiguration()
    )
    return (
        hudi.common.table.HoodieTableMetaClient.builder()
        .setConf(conf)
        .setBasePath(str(table))
        .build()
    )


def instant_time(instant: Any) -> str:
    """An instant's requested time (Hudi 1.0 `requestedTime()`, older `getTimestamp()`)."""
    try:
        return str(instant.requestedTime())
    except Exception:  # py4j: no such method on an older Hudi
        return str(instant.getTimestamp())


def commit_id(spark: SparkSession, table: Path) -> str:
    """The newest completed write instant on the table's timeline."""
    timeline = meta_client(spark, table).getActiveTimeline().getCommitsTimeline()
    last = timeline.filterCompletedInstants().lastInstant()
    if not last.isPresent():
        raise ReadError(f"hudi table {table}: no completed commit")
    return instant_time(last.get())


def table_fields(fmt: Hudi, spark: SparkSession, cfg: Config, table: Path) -> list[tuple[str, str]]:
    df = spark.read.format("hudi").options(**fmt.reader_options(cfg)).load(str(table))
    return simple_fields(df, [c for c in df.columns if c.startswith(META_PREFIX)] + [ORDERING])


def evolve(fmt: Hudi, spark: SparkSession, cfg: Config, table: Path, batch: Batch) -> list[str]:
    """What the batch's upsert changes in the table's schema (Hudi changes it on write);
    a change Hudi's schema evolution on write does not take is refused."""
    incoming = simple_fields(spark.read.parquet(str(batch.path)))
    changes = schema_changes(table_fields(fmt, spark, cfg, table), incoming)
    for change in changes:
        if change.kind == "retyped":
            raise SchemaEvolutionError(
                f"hudi: {change}: schema evolution on write takes new columns and type "
                "promotions only"
            )
    return [f"{c} (on write)" for c in changes if c.kind != "narrowed"]


def oldest_readable(spark: SparkSession, table: Path) -> str | None:
    """After a clean, the oldest commit a read can start from: every file group must
    still hold the file slice that was its newest at that commit, so it is the newest,
    over the groups, of each group's oldest remaining slice's base instant. None when
    the table was never cleaned (every commit's files are there)."""
    jvm: Any = spark._jvm
    hudi = jvm.org.apache.hudi
    meta = meta_client(spark, table)
    timeline = meta.getActiveTimeline()
    if timeline.getCleanerTimeline().filterCompletedInstants().empty():
        return None
    conf = hudi.hadoop.fs.HadoopFSUtils.getStorageConfWithCopy(
        spark.sparkContext._jsc.hadoopConfiguration()
    )
    view = hudi.common.table.view.HoodieTableFileSystemView.fileListingBasedFileSystemView(
        hudi.common.engine.HoodieLocalEngineContext(conf),
        meta,
        timeline.getCommitsAndCompactionTimeline().filterCompletedInstants(),
    )
    oldest: str | None = None
    try:
        groups = view.getAllFileGroups("").iterator()
        while groups.hasNext():
            slices = groups.next().getAllFileSlices().iterator()
            bases = []
            while slices.hasNext():
                bases.append(str(slices.next().getBaseInstantTime()))
            if bases and (oldest is None or min(bases) > oldest):
                oldest = min(bases)
    finally:
        view.close()
    return oldest


def check_retained(fmt: Hudi, spark: SparkSession, table: Path, commit: str, what: str) -> None:
    """Refuse a read from a commit whose files a clean removed, naming the oldest."""
    oldest = oldest_readable(spark, table)
    if oldest is not None and commit < oldest:
        raise ReadError(
            f"{fmt.name}: {what} {commit}: its files were cleaned (clean keeping the newest file "
            f"slice); the oldest commit it can start from is {oldest}"
        )


def read_as_of(fmt: Hudi, spark: SparkSession, cfg: Config, table: Path, commit: str) -> DataFrame:
    check_retained(fmt, spark, table, commit, "as of commit")
    df = (
        spark.read.format("hudi")
        .options(**fmt.reader_options(cfg))
        .option("as.of.instant", commit)
        .load(str(table))
    )
    return newest_columns(live(df), peer_operators(cfg))


def read_changes(
    fmt: Hudi, spark: SparkSession, cfg: Config, table: Path, start: str | None, end: str
) -> DataFrame:
    """From the beginning, the change read is the table as of `end`. A range is
    refused: Hudi's incremental query does not give the range's own merge (tried on
    both strategies, `fmt.incremental_answer` says what it gives instead)."""
    if start is None:
        return read_as_of(fmt, spark, cfg, table, end)
    check_retained(fmt, spark, table, start, "change read from commit")
    raise ReadError(f"{fmt.name}: a change read: {fmt.incremental_answer}")


def write_client(fmt: Hudi, spark: SparkSession, cfg: Config, table: Path, extra: dict) -> Any:
    """A Spark write client of the table with its write options and `extra`, as Hudi's
    own procedures make one (close it after use)."""
    jvm: Any = spark._jvm
    hudi = jvm.org.apache.hudi
    props = jvm.java.util.Properties()
    for key, value in (fmt.write_options(cfg, table, "upsert") | extra).items():
        props.setProperty(key, value)
    config = (
        hudi.config.HoodieWriteConfig.newBuilder().withPath(str(table)).withProps(props).build()
    )
    context = hudi.client.common.HoodieSparkEngineContext(spark.sparkContext._jsc)
    return hudi.client.SparkRDDWriteClient(context, config)


def expire(fmt: Hudi, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
    """Hudi's clean keeping one version of each file group (KEEP_LATEST_FILE_VERSIONS,
    1): every file slice but each group's newest is deleted (after a compaction: the
    old base and log files). What `CALL run_clean(clean_policy =>
    'KEEP_LATEST_FILE_VERSIONS', file_versions_retained => 1)` runs: a write client's
    clean. (KEEP_LATEST_COMMITS retaining 1 commit deleted nothing after a compaction
    here: the compaction's commit keeps the slices of the commits before it.)"""
    clean: Any = spark._jvm.org.apache.hudi.config.HoodieCleanConfig  # type: ignore[union-attr]
    client = write_client(
        fmt,
        spark,
        cfg,
        table,
        {
            clean.CLEANER_POLICY.key(): "KEEP_LATEST_FILE_VERSIONS",
            clean.CLEANER_FILE_VERSIONS_RETAINED.key(): "1",
        },
    )
    try:
        md = client.clean()
    finally:
        client.close()
    return {"files_deleted": int(md.getTotalFilesDeleted()) if md is not None else 0}


def keys_committed_at(
    fmt: Hudi, spark: SparkSession, cfg: Config, table: Path, instant: str
) -> int:
    """How many keys Hudi's own reader, as of `instant`, reads with `instant` as their
    commit time: the keys that commit wrote, when the reader honours it; 0 when it does
    not (a new table's first completed instant left empty reads as no commit at all)."""
    from pyspark.sql import functions as F  # deferred: slow to import

    df = (
        spark.read.format("hudi")
        .options(**fmt.reader_options(cfg))
        .option("as.of.instant", instant)
        .load(str(table))
    )
    if "_hoodie_commit_time" not in df.columns:  # Hudi's EmptyRelation: no commit it reads
        return 0
    return df.where(F.col("_hoodie_commit_time") == instant).select("_hoodie_record_key").count()


def roll_back(fmt: Hudi, spark: SparkSession, cfg: Config, table: Path, instant: str) -> None:
    """Hudi's own rollback of a commit (what `CALL rollback_to_instant` runs: a write
    client's rollback, listing the commit's files rather than its markers): its files
    deleted by Hudi and the instant taken off the timeline. One line naming the
    instant when Hudi cannot."""
    client = write_client(fmt, spark, cfg, table, {"hoodie.rollback.using.markers": "false"})
    try:
        done = bool(client.rollback(instant))
    except Exception as exc:  # py4j's error around Hudi's
        raise RunError(
            f"{fmt.name}: {table}: Hudi could not roll back instant {instant}: "
            f"{error_line(exc)}; nothing written"
        ) from None
    finally:
        client.close()
    if not done:
        raise RunError(f"{fmt.name}: {table}: Hudi did not roll back instant {instant}")
