"""Microbenchmark of read.merge and write.sort variants, in this process, one thread:
one bucket of a real table merged by each engine, and one batch file's rows ordered by
each sort, rounds interleaved, medians and ratios to the reference (numpy, arrow) of
the same sitting; every result checked against the reference's.

    python -m contest.benchmarks.merge_micro --table ccf --batch DATA/base-0.parquet

Prints one JSON line per variant (results/native_merge.md quotes them), each with its
sitting and the stamp every benchmark's record carries (contest/sitting.py: the
machine, commit, full disclosure and the noise over the variants' rounds): on a shared
machine only the ratios mean much.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from contest.config import READ_MERGES, load_config
from contest.evaluation.disclosure import disclosure
from contest.infra.noise import Background
from contest.infra.postgres import resolve_connection
from contest.read.files import files_by_bucket, merge_bucket, newest_version
from contest.read.job import ReadRequest, checked_commits
from contest.sitting import stamp_of, utc_now, where_run
from contest.write.order import bucket_key_order
from contest.write.spark_hash import buckets as bucket_of
from meta import catalog


def _one_thread() -> None:
    """The Spark task's share: one core (pyarrow's pools; polars reads its own setting
    when first imported, set before that)."""
    os.environ.setdefault("POLARS_MAX_THREADS", "1")
    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)


def _medians(
    variants: dict[str, Callable[[], Any]], rounds: int
) -> tuple[dict[str, float], dict[str, Any]]:
    times: dict[str, list[float]] = {name: [] for name in variants}
    results: dict[str, Any] = {}
    for _ in range(rounds):
        for name, fn in variants.items():
            started = time.perf_counter()
            results[name] = fn()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(t) for name, t in times.items()}, results


def bench_merge(
    table_name: str, bucket: int, rounds: int, memory: int, methods: list[str]
) -> list[dict]:
    """Each read.merge on one bucket's files (read, conform and merge, no writing)."""
    cfg = load_config()
    conn = resolve_connection(cfg)
    table = catalog.find_table(conn, table_name, cfg.table.namespace)
    commits, _, ops, _ = checked_commits(conn, cfg, table, ReadRequest(out_dir=""))
    files = files_by_bucket(commits)[bucket]
    keys = list(table.primary_keys)
    plain = pa.schema([f.with_nullable(True) for f in table.schema])
    newest = newest_version(commits)

    def run(method: str) -> Callable[[], pa.Table]:
        return lambda: pa.concat_tables(
            list(merge_bucket(files, plain, keys, ops, newest, memory, method))
        )

    medians, results = _medians({m: run(m) for m in methods}, rounds)

    def by_key(t: pa.Table) -> pa.Table:
        return t.take(pc.sort_indices(t, [(k, "ascending") for k in keys])).combine_chunks()

    reference = by_key(results[methods[0]])
    out = []
    for m in methods:
        out.append(
            {
                "bench": "read.merge",
                "variant": m,
                "memory_bytes": memory,
                "bucket": bucket,
                "files": len(files),
                "rows_out": results[m].num_rows,
                "median_s": round(medians[m], 4),
                "ratio": round(medians[m] / medians[methods[0]], 3),
                "exact": by_key(results[m]).equals(reference),
            }
        )
    return out


def bench_sort(batch: str, buckets: int, rounds: int) -> list[dict]:
    """Each write.sort on one batch file's keys, bucketed as the write buckets them."""
    keys = pq.read_table(batch, columns=["uuid"])
    ids = np.asarray(bucket_of(keys.column("uuid"), buckets))

    def run(sort: str) -> Callable[[], Any]:
        return lambda: bucket_key_order(keys, ["uuid"], ids, None, sort)

    variants = {s: run(s) for s in ("arrow", "uuid128")}
    medians, results = _medians(variants, rounds)
    return [
        {
            "bench": "write.sort",
            "variant": s,
            "rows": keys.num_rows,
            "median_s": round(medians[s], 4),
            "us_per_row": round(medians[s] / keys.num_rows * 1e6, 3),
            "ratio": round(medians[s] / medians["arrow"], 3),
            "exact": bool(np.array_equal(results[s], results["arrow"])),
        }
        for s in variants
    ]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--table", help="a written table (name or folder)")
    p.add_argument("--bucket", type=int, default=0)
    p.add_argument("--batch", help="a batch file for the write.sort variants")
    p.add_argument("--buckets", type=int, default=4)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--memory", type=int, action="append", help="read.merge_memory_bytes")
    args = p.parse_args(argv)
    _one_thread()
    sitting = utc_now()
    rows: list[dict] = []
    with Background() as noise:
        if args.table:
            for memory in args.memory or [1 << 30]:
                rows += bench_merge(args.table, args.bucket, args.rounds, memory, list(READ_MERGES))
        if args.batch:
            rows += bench_sort(args.batch, args.buckets, args.rounds)
        stamp = stamp_of(where_run(), disclosure(load_config()), noise)
    load = [round(x, 2) for x in os.getloadavg()]
    for row in rows:
        line = {**row, "rounds": args.rounds, "load": load, "sitting": sitting, "stamp": stamp}
        print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
