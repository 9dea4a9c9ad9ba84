"""The floor for `contest bench duckdb`: the least any merge of the batches can cost on
this machine, measured in the same sitting as the engines it bounds.

Two parts, each a whole process as the contest times its jobs:
- the I/O: every batch's columns read and decoded once (pyarrow, `threads` threads), and
  as many rows as the result has keys encoded and written once, uncompressed and with
  the statistics the result's files carry (read.statistics), as the result is; no
  merge (`python -m contest.benchmarks.duckdb.floor io --data DIR --out FILE --threads N
  --rows K [--statistics key|all|none]`, prints one JSON line);
- the two process starts the contest's procedure imposes on a Spark pipeline: a trivial
  `spark-submit` (a session, one 10-row Python task, stop), run twice
  (`spark-submit floor.py start`).

optimized / floor and DuckDB / floor say how far each is from what cannot be avoided.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data.batches import discover
from contest.data.dictionaries import dictionary_columns
from contest.data.spark_types import spark_struct
from contest.infra import timeline
from contest.infra.pyspark_daemon import prefer_installed_pyspark
from contest.infra.spark import jvm_start, mark_tasks, stop_session
from contest.read.statistics import statistics_setting


def io_floor(
    data: Path, out: Path, threads: int, rows: int, statistics: str = "all"
) -> dict[str, object]:
    """Read every batch file's columns once; write the first `rows` rows read, once, with
    min/max statistics as read.statistics `statistics` says (the contract's key is the
    batches' first column). Columns a file stores as small dictionaries are read and
    written as dictionaries, as the pipeline's write and read do (the least work)."""
    pa.set_cpu_count(threads)
    pa.set_io_thread_count(threads)
    batches = discover(data, None, None)  # checked by the sitting (a user's files too)
    first = pq.read_schema(batches[0].path).names
    with_statistics = statistics_setting(statistics, first[:1])
    started = time.perf_counter()
    read_rows, written = 0, 0
    writer: pq.ParquetWriter | None = None
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        for batch in batches:
            pf = pq.ParquetFile(batch.path)
            as_dictionaries = dictionary_columns(pf.metadata, pf.schema_arrow.names[1:])
            if as_dictionaries:
                pf = pq.ParquetFile(
                    batch.path, metadata=pf.metadata, read_dictionary=as_dictionaries
                )
            for chunk in pf.iter_batches(batch_size=1 << 20):
                read_rows += chunk.num_rows
                # Written: rows of the first file's columns (a file of some of a user's
                # columns is read only: the floor stays below any merge's cost).
                if written < rows and chunk.schema.names == first:
                    part = pa.Table.from_batches([chunk.slice(0, rows - written)])
                    if writer is not None and part.schema != writer.schema:
                        # A file whose column is plain where the first was a dictionary.
                        part = part.cast(writer.schema)
                    if writer is None:
                        writer = pq.ParquetWriter(
                            out,
                            part.schema,
                            compression="NONE",
                            write_statistics=with_statistics,
                        )
                    writer.write_table(part)
                    written += part.num_rows
    finally:
        if writer is not None:
            writer.close()
    return {
        "rows_read": read_rows,
        "rows_written": written,
        "io_s": round(time.perf_counter() - started, 3),
    }


def trivial_job(preload: bool = False) -> None:
    """What every Spark job of the contest's procedure pays before and after its work:
    the JVM, the Python driver, a session, the first Python task, the stop; its
    timeline's marks printed as a timed job's are (`preload`: the compiled pyspark, as
    spark.python_preload gives the timed jobs)."""
    timeline.start()
    timeline.mark(timeline.SESSION)
    if preload:
        prefer_installed_pyspark()
    # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName("contest-floor-start").getOrCreate()
    timeline.mark(timeline.CONTEXT)
    timeline.mark(timeline.JVM, jvm_start(spark))

    def same(batches: Iterable[Any]) -> Iterator[Any]:
        yield from batches

    # A schema made in Python, as the timed jobs make theirs (no SQL parser).
    df = spark.range(10).mapInArrow(same, spark_struct([("id", pa.int64())]))
    if df.count() != 10:
        raise SystemExit("the trivial job lost rows")
    mark_tasks(spark)
    timeline.mark(timeline.STOP)
    stop_session(spark)
    timeline.mark(timeline.STOPPED)
    timeline.print_marks()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="contest.benchmarks.duckdb.floor")
    sub = p.add_subparsers(dest="part", required=True)
    io = sub.add_parser("io", help="read every batch once, write the result's rows once")
    io.add_argument("--data", required=True)
    io.add_argument("--out", required=True)
    io.add_argument("--threads", type=int, default=2)
    io.add_argument("--rows", type=int, required=True)
    io.add_argument(
        "--statistics",
        choices=("key", "all", "none"),
        default="all",
        help="columns with min/max statistics, as read.statistics (default: all)",
    )
    start = sub.add_parser("start", help="a trivial Spark job (run through spark-submit)")
    start.add_argument("--preload", action="store_true", help="import the compiled pyspark")
    args = p.parse_args(argv)
    if args.part == "start":
        trivial_job(args.preload)
        return 0
    done = io_floor(Path(args.data), Path(args.out), args.threads, args.rows, args.statistics)
    print(json.dumps(done))
    return 0


if __name__ == "__main__":
    sys.exit(main())
