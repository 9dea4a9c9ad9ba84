"""The Read job: the table merged by primary key with a merge operator per column,
in version order, written out as parquet.

Reads honour the merged snapshot of `contest meta merge`. A snapshot still in
commit order (writes finished out of version order and no merge ran since) is
refused, because its merge-on-read result would silently be wrong.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from contest import catalog
from contest.catalog import SnapshotCommit, TableRef
from contest.config import Config
from contest.merge_ops import CONTEST_OPERATORS
from contest.pg import PgConnection
from contest.table_io import merged_dataframe, write_merged
from meta.replay import Commit, in_version_order, order_commits

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


class ReadError(RuntimeError):
    """The table cannot be read as asked; the message says what to do."""


@dataclass
class ReadReport:
    table: str
    out: str
    commits: int
    partition_version: int
    seconds: float
    operators: dict[str, str]


def operators_for(table: TableRef, cfg: Config) -> dict[str, str]:
    """The configured operators, or the contest's for the columns the table has."""
    if cfg.read.operators:
        return dict(cfg.read.operators)
    return {c: op for c, op in CONTEST_OPERATORS.items() if c in table.schema.names}


def select_commits(
    commits: list[SnapshotCommit], *, as_of: int | None = None,
    from_version: int | None = None, to_version: int | None = None,
) -> list[SnapshotCommit]:
    """Live commits in merge order, limited to a version range: as of V (<= V), or
    the changes between A and B (A < version <= B)."""
    by_id = {c.commit_id: c for c in commits}
    ordered = [by_id[c.commit_id] for c in
               order_commits([Commit(c.commit_id, c.commit_op, c.version) for c in commits])]
    if as_of is None and from_version is None and to_version is None:
        return ordered
    low = from_version
    high = as_of if as_of is not None else to_version
    out = []
    for c in ordered:
        if c.version is None:
            raise ReadError(f"commit {c.commit_id} ({c.commit_op}) carries no version: "
                            "history by version cannot be read across it")
        if (low is None or c.version > low) and (high is None or c.version <= high):
            out.append(c)
    return out


def chosen_commits(conn: PgConnection, cfg: Config, table: TableRef,
                   **versions: int | None) -> tuple[list[SnapshotCommit], int]:
    """The commits a read applies, in order, after the checks; and the partition version."""
    pversion, commits = catalog.head_snapshot(conn, table)
    if not commits:
        raise ReadError(f"table {table.namespace}.{table.name} has no commits: "
                        "write to it first (contest write)")
    ranged = any(v is not None for v in versions.values())
    if not ranged and cfg.read.require_merged and not in_version_order(
            [Commit(c.commit_id, c.commit_op, c.version) for c in commits]):
        raise ReadError(
            f"table {table.namespace}.{table.name}: commits finished out of version order and "
            f"the snapshot was not merged since: run `contest meta merge --table {table.name}` "
            "first (or set read.require_merged=false to read in commit order)")
    return (commits if not ranged else select_commits(commits, **versions)), pversion


def merged(spark: SparkSession, conn: PgConnection, cfg: Config, table: TableRef,
           **versions: int | None) -> tuple[DataFrame, int, int]:
    """The merged table as a DataFrame (for further Spark work)."""
    chosen, pversion = chosen_commits(conn, cfg, table, **versions)
    df = merged_dataframe(spark, table, chosen, operators_for(table, cfg))
    return df, pversion, len(chosen)


def run_read(spark: SparkSession, conn: PgConnection, cfg: Config, table: TableRef,
             out_dir: str | Path, *, as_of: int | None = None, from_version: int | None = None,
             to_version: int | None = None) -> ReadReport:
    started = time.perf_counter()
    versions = {"as_of": as_of, "from_version": from_version, "to_version": to_version}
    if cfg.read.writer == "spark":
        df, pversion, n = merged(spark, conn, cfg, table, **versions)
        df.write.mode("overwrite").option("compression", cfg.read.codec).parquet(str(out_dir))
    else:
        chosen, pversion = chosen_commits(conn, cfg, table, **versions)
        n = len(chosen)
        write_merged(spark, table, chosen, operators_for(table, cfg), str(out_dir),
                     cfg.read.codec)
    return ReadReport(f"{table.namespace}.{table.name}", str(out_dir), n, pversion,
                      time.perf_counter() - started, operators_for(table, cfg))
