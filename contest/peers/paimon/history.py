"""Paimon's history under the newest schema, through Paimon's own mechanisms
(Paimon 0.9, "Spark" pages):

- schema evolution by `ALTER TABLE ... ADD COLUMNS` (with the new column's aggregate
  function set as a table option, `fields.<col>.aggregate-function`) and `ALTER TABLE
  ... ALTER COLUMN ... TYPE BIGINT` (Paimon reads the files written before under the
  new schema, casting int to bigint);
- time travel by `scan.snapshot-id`;
- incremental query `incremental-between` = 'start,end': the data files the snapshots
  after `start` up to `end` added, merged by the table's merge engine (the aggregation
  that is the workload's operators) among themselves only: the range's own merge, the
  oracle's change read;
- `sys.expire_snapshots` keeping 1 snapshot.

A commit's id is its snapshot id.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from contest.config import Config
from contest.data import operators as registry
from contest.data.batches import Batch
from contest.errors import ReadError, SchemaEvolutionError
from contest.peers.base import error_line
from contest.peers.history import newest_columns, simple_fields
from contest.peers.merge import peer_operators
from contest.peers.paimon.table import CATALOG, DATABASE, MERGE_ENGINE, SEQUENCE, TABLE, identifier
from contest.peers.schema import schema_changes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class Paimon(Protocol):
    """What the history asks of the Paimon format (format.py's Paimon)."""

    def location(self, table: Path) -> Path: ...


# The aggregation engine's function of a field without one. A column added with it
# needs no option: an option naming a column fails a time-travel read of any snapshot
# whose schema lacks the column ("Field clicks can not be found in table schema": the
# read takes that snapshot's schema with the newest options).
DEFAULT_FUNCTION = "last_non_null_value"


def one_line(exc: BaseException) -> str:
    """A Spark or Paimon failure's own words, in one line."""
    return error_line(exc)[:400].removeprefix("Spark: ")  # the words are Paimon's


def snapshot_range(spark: SparkSession) -> tuple[int, int]:
    """The table's earliest and latest snapshot ids (its `snapshots` system table)."""
    row = spark.sql(
        f"SELECT min(snapshot_id), max(snapshot_id) FROM {CATALOG}.{DATABASE}.`{TABLE}$snapshots`"
    ).collect()[0]
    if row[1] is None:
        raise ReadError("paimon: the table has no snapshot")
    return int(row[0]), int(row[1])


def commit_id(spark: SparkSession) -> str:
    return str(snapshot_range(spark)[1])


def evolve(fmt: Paimon, spark: SparkSession, cfg: Config, table: Path, batch: Batch) -> list[str]:
    """ALTER TABLE for each column the batch adds or widens; another type change is
    refused (Paimon's own error when it refuses one)."""
    current = simple_fields(spark.table(identifier()), SEQUENCE)
    changes = schema_changes(current, simple_fields(spark.read.parquet(str(batch.path))))
    ops = peer_operators(cfg)
    done = []
    for change in changes:
        col = f"`{change.column}`"
        if change.kind == "added":
            function = MERGE_ENGINE.name_of(ops.get(change.column, registry.DEFAULT))
            statements = [f"ALTER TABLE {identifier()} ADD COLUMNS ({col} {change.new})"]
            if function != DEFAULT_FUNCTION:  # see DEFAULT_FUNCTION
                statements.append(
                    f"ALTER TABLE {identifier()} SET TBLPROPERTIES "
                    f"('fields.{change.column}.aggregate-function' = '{function}')"
                )
        elif change.kind == "widened":
            statements = [f"ALTER TABLE {identifier()} ALTER COLUMN {col} TYPE {change.new}"]
        elif change.kind == "narrowed":
            continue  # the batch's values are written into the wider column
        else:
            raise SchemaEvolutionError(f"paimon: {change}: not a widening of an integer")
        for sql in statements:
            try:
                spark.sql(sql)
            except Exception as exc:
                raise SchemaEvolutionError(f"paimon: {change}: {one_line(exc)}") from None
        done.append(str(change))
    return done


def check_retained(spark: SparkSession, snapshot: str, what: str) -> None:
    """Refuse a read from a snapshot that expired, naming the oldest one left."""
    earliest, _ = snapshot_range(spark)
    if int(snapshot) < earliest:
        raise ReadError(
            f"paimon: {what} snapshot {snapshot}: expired (expire_snapshots); the oldest "
            f"snapshot it can start from is {earliest}"
        )


def read_as_of(
    fmt: Paimon, spark: SparkSession, cfg: Config, table: Path, commit: str
) -> DataFrame:
    check_retained(spark, commit, "as of")
    try:
        df = (
            spark.read.format("paimon")
            .option("scan.snapshot-id", commit)
            .load(str(fmt.location(table)))
        )
    except Exception as exc:  # Paimon refuses it when the table is loaded
        raise ReadError(f"paimon: as of snapshot {commit}: {one_line(exc)}") from None
    return newest_columns(df, peer_operators(cfg))


def read_changes(
    fmt: Paimon, spark: SparkSession, cfg: Config, table: Path, start: str | None, end: str
) -> DataFrame:
    """From the beginning: the table as of `end`. A range: 'incremental-between'."""
    if start is None:
        return read_as_of(fmt, spark, cfg, table, end)
    check_retained(spark, start, "change read from")
    try:
        df = (
            spark.read.format("paimon")
            .option("incremental-between", f"{start},{end}")
            .load(str(fmt.location(table)))
        )
    except Exception as exc:
        raise ReadError(f"paimon: changes after snapshot {start}: {one_line(exc)}") from None
    return newest_columns(df, peer_operators(cfg))


def expire(spark: SparkSession) -> dict[str, int]:
    """`CALL sys.expire_snapshots` keeping only the newest snapshot (retain_min too:
    its default keeps 10); the data files only expired snapshots name are deleted."""
    rows = spark.sql(
        f"CALL {CATALOG}.sys.expire_snapshots(table => '{DATABASE}.{TABLE}', "
        "retain_max => 1, retain_min => 1)"
    ).collect()
    return {"snapshots_expired": int(rows[0][0]) if rows else 0}
