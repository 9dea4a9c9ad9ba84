"""The Read job of the `lakesoul-stock` engine: the snapshot as LakeSoul's DBManager lists
it, each bucket's files merged in snapshot order by LakeSoul's NativeIOReader with
LakeSoul's merge operators, in one Spark task per bucket; the result written by Spark.

History through LakeSoul's own partition versions: a read as of a batch version reads
the partition version its commit made (`getSinglePartitionInfo(table, desc, version)`);
the changes after version A up to B
are the commits B's partition version holds and A's does not. Both read under the
table's newest schema: a file written before a column was added reads it as NULL (a
column no file of the read holds is left out of the native read and added as NULL). Two
reads LakeSoul 2.6.2 cannot answer are refused in one line, never answered wrong: over
commits of which some lack a summed column (`read_columns`: its SumAll would turn the
sum NULL), and over files holding a column as int32 and as int64 (a widening: its
reader merges the files' schemas strictly, `merge_refusal`, in its own words).

A table written by the stock Write job carries a count column per summed column
(contest/write/stock.py, contest/data/stock_layout.py): the sum is NULL where the count
is 0, and the count column is not part of the result. Any other LakeSoul table (one the
project wrote, say) is read with the same operators and no such rule.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from contest.config import Config
from contest.data import operators as registry
from contest.data.stock_layout import counted
from contest.data.workload import contract_operators
from contest.errors import ReadError
from contest.infra.dbmanager import CommitFiles, DBManager, StockTable, columns_of
from contest.infra.lakesoul_jvm import jlist, jmap
from contest.read import output
from contest.read.job import ReadReport
from contest.read.newest import newest_schema
from meta import catalog
from meta.commits import bucket_of_path, committed_versions
from meta.connection import PgConnection

LAKESOUL_OPERATORS = registry.LAKESOUL_OPERATORS


def stock_operators(
    columns: list[str],
    keys: tuple[str, ...],
    configured: Mapping[str, str],
    workload: Mapping[str, str] | None = None,
):
    """LakeSoul operators per column: the configured ones, else the workload's operators
    (default: the contract's) as the registry maps them to LakeSoul's, a count column
    its summed column's, and UseLastNotNull for the rest (the rules on a stock table,
    see contest/write/stock.py)."""
    workload = registry.CONTRACT if workload is None else workload
    counts = {c: s for s, c in counted(workload).items()}
    names = [c.rsplit(":", 1)[0] for c in columns]
    ops = {}
    for name in names:
        if name in keys:
            continue
        if name in configured:
            ops[name] = configured[name]
        elif counts.get(name, name) in workload:
            ops[name] = registry.lakesoul_operator(workload[counts.get(name, name)])
        else:
            ops[name] = registry.LAKESOUL_DEFAULT
    for name, op in configured.items():
        if name not in names:
            raise ReadError(f"operator for column {name}: the table has no such column")
        if op not in LAKESOUL_OPERATORS:
            raise ReadError(
                f"operator {op} on {name}: LakeSoul's reader has no such operator "
                f"(it has {', '.join(LAKESOUL_OPERATORS)})"
            )
    return ops


def bucket_files(commits: Sequence[Sequence[str]]) -> list[list[str]]:
    """Each bucket's files in apply order (commit order, then the commit's own order)."""
    buckets: dict[int, list[str]] = defaultdict(list)
    for files in commits:
        for path in files:
            buckets[bucket_of_path(path)].append(path)
    return [buckets[b] for b in sorted(buckets)]


@dataclass(frozen=True)
class StockSpan:
    """What a stock read reads: the head (both None), the partition version `end`, or the
    commits after partition version `start` up to `end` (`start` None: from the first)."""

    end: int | None = None
    start: int | None = None
    changes: bool = False
    version: int | None = None  # the newest batch version read (the oracle's: up to it)


def partition_version_of(partitions: Sequence[tuple[int, Sequence[str]]], commit_id: str) -> int:
    """The partition version a commit made: the first whose snapshot holds it."""
    for version, ids in partitions:
        if commit_id in ids:
            return version
    raise ReadError(f"commit {commit_id}: no partition version of the table holds it")


def stock_span(
    versions: Mapping[int, str],
    partitions: Sequence[tuple[int, Sequence[str]]],
    as_of: int | None = None,
    from_version: int | None = None,
    to_version: int | None = None,
) -> StockSpan:
    """The partition versions a read as of a batch version, or of the changes after
    `from_version` up to `to_version`, reads. `versions`: batch version -> the commit
    that applied it (the stock writer commits in version order, so the state as of V is
    the partition version the commit of the newest batch at or before V made)."""

    def newest(version: int) -> int | None:
        return max((v for v in versions if v <= version), default=None)

    def at(version: int, what: str) -> int | None:
        upto = newest(version)
        if upto is None:
            if what == "from":
                return None
            raise ReadError(f"version {version}: the table holds no batch at or before it")
        return partition_version_of(partitions, versions[upto])

    if as_of is not None:
        return StockSpan(end=at(as_of, "as of"), version=newest(as_of))
    if from_version is None and to_version is None:
        return StockSpan(version=max(versions, default=None))
    to = max(versions, default=None) if to_version is None else to_version
    if to is None:
        raise ReadError("the table holds no batch")
    if from_version is not None and from_version >= to:
        raise ReadError(f"--from-version {from_version} is not before version {to}")
    start = None if from_version is None else at(from_version, "from")
    return StockSpan(end=at(to, "to"), start=start, changes=True, version=newest(to))


def read_columns(
    columns: Sequence[str], held: Sequence[Sequence[str]], workload: Mapping[str, str]
) -> list[str]:
    """The table's columns (`name:type`) the native reader reads: those some commit of
    the read holds (`held`: each commit's columns; empty: unknown, all of them). A
    column none holds is left out (the read puts it into the newest schema as NULL). A
    summed column some commits hold and others lack is refused: LakeSoul's SumAll turns
    a key's sum NULL when one of its values is NULL, which is what a file without the
    column gives (2.6.2's `setDefaultColumnValue` fills a string, and SumAll panics on
    it), so the answer would be wrong."""
    names = [c.rsplit(":", 1)[0] for c in columns]
    sets = [set(h) if h else set(names) for h in held]
    some = set().union(*sets) if sets else set(names)
    for summed, count in counted(workload).items():
        for name in (summed, count):
            lacking = [i for i, h in enumerate(sets) if name in some and name not in h]
            if lacking:
                raise ReadError(
                    f"lakesoul-stock: {summed} is summed by LakeSoul's SumAll and "
                    f"{len(lacking)} of the read's {len(sets)} commits were written before "
                    "it existed: SumAll makes a key's sum NULL when a file lacks the column "
                    "(and LakeSoul 2.6.2's default column values are strings SumAll cannot "
                    "sum), so this read would be wrong"
                )
    return [c for c, n in zip(columns, names, strict=True) if n in some]


def merge_refusal(exc: BaseException) -> str | None:
    """LakeSoul's own words when its native reader cannot read a bucket's files together
    (2.6.2 merges the files' schemas strictly: a column written int32 before its widening
    and int64 after it fails), in one line; None for any other failure."""
    found = re.search(r"Fail to merge schema field[^\n]*", str(exc))
    if found is None:
        return None
    return (
        "lakesoul-stock: LakeSoul 2.6.2's native reader does not read these files "
        f"together: {found.group(0).strip()}"
    )


def find_stock_table(db: DBManager, conn: PgConnection, cfg: Config, name_or_path: str):
    ref = catalog.find_table(conn, name_or_path, cfg.table.namespace)
    table = db.table(ref.name, ref.namespace)
    if table is None:
        raise ReadError(f"DBManager does not see table {ref.namespace}.{ref.name}")
    return table


def span_commits(db: DBManager, table: StockTable, span: StockSpan) -> list[CommitFiles]:
    """The files of the commits a span reads, each commit's in apply order."""
    if span.changes and span.start is not None and span.end is not None:
        commits = db.changes(table.table_id, span.start, span.end)
    else:  # the head, a version, or the changes from the first commit on
        commits = db.snapshot(table.table_id, span.end)
    if not commits and not span.changes:
        raise ReadError(f"table {table.namespace}.{table.name} has no commits")
    return commits


def merged_stock(spark, db: DBManager, cfg: Config, table: StockTable, span: StockSpan):
    """The merged table as a DataFrame (contract columns, count columns applied), in the
    workload's newest schema."""
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    commits = span_commits(db, table, span)
    workload = contract_operators(cfg.workload)
    every = columns_of(table.schema_json)
    ops = stock_operators(every, table.primary_keys, cfg.read.operators, workload)
    columns = read_columns(every, [c.columns for c in commits], workload)
    names = [c.rsplit(":", 1)[0] for c in columns]
    ops = {c: op for c, op in ops.items() if c in names}
    jvm = spark._jvm
    jdf = jvm.contest.lakesoul.StockIO.read(
        spark._jsparkSession,
        jlist(jvm, [jlist(jvm, fs) for fs in bucket_files([c.paths for c in commits])]),
        jlist(jvm, columns),
        table.primary_keys[0],
        jmap(jvm, ops),
        cfg.read.stock_batch_rows,
        cfg.read.stock_threads,
        cfg.read.stock_prefetch,
    )
    df = DataFrame(jdf, spark)
    counts = {s: c for s, c in counted(workload).items() if s in names and c in names}
    out = []
    for name in names:
        if name in counts.values():
            continue
        col = F.col(name)
        if name in counts:
            col = F.when(F.col(counts[name]) == 0, F.lit(None)).otherwise(col)
        out.append(col.alias(name))
    df = df.select(out)
    if cfg.workload.added or cfg.workload.widened:
        df = newest_schema(df, cfg)
    return df, len(commits)


def run_stock_read(
    spark,
    conn: PgConnection,
    cfg: Config,
    name_or_path: str,
    out_dir: str,
    overwrite: bool,
    as_of: int | None = None,
    from_version: int | None = None,
    to_version: int | None = None,
) -> ReadReport:
    """The head, as of a batch version, or the changes of a range (module docstring)."""
    started = time.perf_counter()
    db = DBManager(spark)
    table = find_stock_table(db, conn, cfg, name_or_path)
    ref = catalog.get_table(conn, table.name, table.namespace)
    versions = committed_versions(conn, ref)
    span = StockSpan(version=max(versions, default=None))
    if as_of is not None or from_version is not None or to_version is not None:
        span = stock_span(
            versions, db.partition_versions(table.table_id), as_of, from_version, to_version
        )
    out = output.prepare(out_dir, [t.path for t in catalog.list_tables(conn)], overwrite)
    name = f"{table.namespace}.{table.name}"
    try:
        df, commits = merged_stock(spark, db, cfg, table, span)
        df.write.option("compression", cfg.read.codec).parquet(str(out.staging))
        rows = spark.read.parquet(str(out.staging)).count()
        output.publish(out, {"table": name, "rows": rows, "engine": "lakesoul-stock"})
    except BaseException as exc:
        output.discard(out)
        why = merge_refusal(exc)
        if why:
            raise ReadError(why) from None
        raise
    columns = columns_of(table.schema_json)
    ops = stock_operators(
        columns, table.primary_keys, cfg.read.operators, contract_operators(cfg.workload)
    )
    return ReadReport(
        name,
        str(out.target),
        rows,
        commits,
        -1 if span.end is None else span.end,
        time.perf_counter() - started,
        ops,
        version=span.version,
    )
