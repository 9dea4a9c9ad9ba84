"""The smoke pipeline: every real component once, with an exact answer.

Spark writes two batches into a LakeSoul table (primary key `uuid`, 4 buckets),
PostgreSQL records the two commits, Spark reads the table back merged with a
sum operator on `requests`, and LakeSoul's own native reader (PyPI `lakesoul`)
reads the same table.
"""

from __future__ import annotations

import shutil
import time

import pyarrow as pa

from contest.config import Config
from contest.infra.postgres import ensure_database
from contest.infra.spark import build_session
from contest.read.files import merged_dataframe
from contest.read.operators import CONTEST_OPERATORS
from contest.write.files import write_dataframe
from meta import catalog
from meta.commits import commit_files, head_snapshot

SCHEMA = pa.schema([("uuid", pa.string()), ("requests", pa.int64()), ("name", pa.string())])
BATCHES = [
    [("k1", 1, "a"), ("k2", 2, "b"), ("k3", 3, "c"), ("k4", 4, "d")],
    [("k1", 10, "a2"), ("k3", 30, None), ("k5", 50, "e"), ("k1", 100, "a3")],
]
# requests summed over both batches; name: last value wins (no operator).
EXPECTED = [
    {"uuid": "k1", "requests": 111, "name": "a3"},
    {"uuid": "k2", "requests": 2, "name": "b"},
    {"uuid": "k3", "requests": 33, "name": None},
    {"uuid": "k4", "requests": 4, "name": "d"},
    {"uuid": "k5", "requests": 50, "name": "e"},
]


def run_smoke(cfg: Config, table_name: str = "contest_smoke") -> dict:
    started = time.perf_counter()
    conn = ensure_database(cfg)
    path = cfg.work_path / "tables" / table_name
    shutil.rmtree(path, ignore_errors=True)
    table = catalog.create_table(
        conn,
        table_name,
        path,
        SCHEMA,
        ["uuid"],
        cfg.table.hash_buckets,
        cfg.table.namespace,
        replace=True,
    )
    spark = build_session(cfg, "contest-smoke")
    commits = []
    for version, rows in enumerate(BATCHES):
        df = spark.createDataFrame(rows, "uuid string, requests bigint, name string").coalesce(1)
        files = write_dataframe(df, table).files
        commits.append(commit_files(conn, table, files, version=version, batch=f"smoke-{version}"))
    _, snapshot = head_snapshot(conn, table)
    merged = merged_dataframe(spark, table, snapshot, {"requests": CONTEST_OPERATORS["requests"]})
    rows = sorted((r.asDict() for r in merged.collect()), key=lambda r: r["uuid"])
    native = catalog.native_catalog(conn, cfg.table.namespace).table(table_name)
    native_keys = sorted(native.scan().to_arrow_table().column("uuid").to_pylist())
    result = {
        "table": f"{table.namespace}.{table.name}",
        "path": table.path,
        "commits": [c.commit_id for c in commits],
        "rows": rows,
        "correct": rows == EXPECTED,
        "native_reader_keys": native_keys,
        "native_reader_agrees": native_keys == [r["uuid"] for r in EXPECTED],
        "seconds": round(time.perf_counter() - started, 2),
    }
    return result
