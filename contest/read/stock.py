"""The Read job of the `lakesoul-stock` engine: the snapshot as LakeSoul's DBManager lists
it, each bucket's files merged in snapshot order by LakeSoul's NativeIOReader with
LakeSoul's merge operators, in one Spark task per bucket; the result written by Spark.

A table written by the stock Write job carries a count column per summed column
(contest/write/stock.py, contest/data/stock_layout.py): the sum is NULL where the count
is 0, and the count column is not part of the result. Any other LakeSoul table (one the
project wrote, say) is read with the same operators and no such rule.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Mapping

from contest.config import Config
from contest.data import operators as registry
from contest.data.stock_layout import counted
from contest.data.workload import contract_operators
from contest.errors import ReadError
from contest.infra.dbmanager import DBManager, StockTable, columns_of
from contest.read import output
from contest.read.job import ReadReport
from meta import catalog
from meta.commits import bucket_of_path
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


def bucket_files(commits: list[list[str]]) -> list[list[str]]:
    """Each bucket's files in apply order (commit order, then the commit's own order)."""
    buckets: dict[int, list[str]] = defaultdict(list)
    for files in commits:
        for path in files:
            buckets[bucket_of_path(path)].append(path)
    return [buckets[b] for b in sorted(buckets)]


def find_stock_table(db: DBManager, conn: PgConnection, cfg: Config, name_or_path: str):
    ref = catalog.find_table(conn, name_or_path, cfg.table.namespace)
    table = db.table(ref.name, ref.namespace)
    if table is None:
        raise ReadError(f"DBManager does not see table {ref.namespace}.{ref.name}")
    return table


def merged_stock(spark, db: DBManager, cfg: Config, table: StockTable):
    """The merged table as a DataFrame (contract columns, count columns applied)."""
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F

    from contest.infra.lakesoul_jvm import jlist, jmap

    commits = db.snapshot(table.table_id)
    if not commits:
        raise ReadError(f"table {table.namespace}.{table.name} has no commits")
    columns = columns_of(table.schema_json)
    workload = contract_operators(cfg.workload)
    ops = stock_operators(columns, table.primary_keys, cfg.read.operators, workload)
    jvm = spark._jvm
    jdf = jvm.contest.lakesoul.StockIO.read(
        spark._jsparkSession,
        jlist(jvm, [jlist(jvm, fs) for fs in bucket_files(commits)]),
        jlist(jvm, columns),
        table.primary_keys[0],
        jmap(jvm, ops),
        cfg.read.stock_batch_rows,
        cfg.read.stock_threads,
        cfg.read.stock_prefetch,
    )
    df = DataFrame(jdf, spark)
    names = [c.rsplit(":", 1)[0] for c in columns]
    counts = {s: c for s, c in counted(workload).items() if s in names and c in names}
    out = []
    for name in names:
        if name in counts.values():
            continue
        col = F.col(name)
        if name in counts:
            col = F.when(F.col(counts[name]) == 0, F.lit(None)).otherwise(col)
        out.append(col.alias(name))
    return df.select(out), len(commits)


def run_stock_read(
    spark, conn: PgConnection, cfg: Config, name_or_path: str, out_dir: str, overwrite: bool
) -> ReadReport:
    started = time.perf_counter()
    db = DBManager(spark)
    table = find_stock_table(db, conn, cfg, name_or_path)
    out = output.prepare(out_dir, [t.path for t in catalog.list_tables(conn)], overwrite)
    name = f"{table.namespace}.{table.name}"
    try:
        df, commits = merged_stock(spark, db, cfg, table)
        df.write.option("compression", cfg.read.codec).parquet(str(out.staging))
        rows = spark.read.parquet(str(out.staging)).count()
        output.publish(out, {"table": name, "rows": rows, "engine": "lakesoul-stock"})
    except BaseException:
        output.discard(out)
        raise
    columns = columns_of(table.schema_json)
    ops = stock_operators(
        columns, table.primary_keys, cfg.read.operators, contract_operators(cfg.workload)
    )
    return ReadReport(name, str(out.target), rows, commits, -1, time.perf_counter() - started, ops)
