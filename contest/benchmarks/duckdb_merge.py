"""The reference merge for `contest bench duckdb`: DuckDB merges the batch files straight
into one parquet file with the contract's operators, in one whole process
(`python -m contest.benchmarks.duckdb_merge --data DIR --out FILE --threads N`).

Its own SQL (not the oracle's, which checks it): per key the sum of `requests` and,
for every other column, the value of the latest row (version, then row position) that
the column's operator accepts. Prints one JSON line: rows, query_s.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

_LAST = "(v.version::HUGEINT << 40) + p.file_row_number"


def merge_sql(where_name: str = "p.name IS NOT NULL AND p.name <> 'null'") -> str:
    def last(col: str, cond: str) -> str:
        return f"arg_max(p.{col}, {_LAST}) FILTER (WHERE {cond}) AS {col}"

    return (
        "SELECT p.uuid AS uuid, "
        + ", ".join(
            [
                last("ip", "p.ip IS NOT NULL"),
                last("hostname", "p.hostname IS NOT NULL"),
                "sum(p.requests)::BIGINT AS requests",
                last("name", where_name),
                last("city", "p.city IS NOT NULL"),
                last("job", "p.job IS NOT NULL"),
                last("phonenum", "p.phonenum IS NOT NULL"),
            ]
        )
        + " FROM read_parquet($files, filename = true, file_row_number = true) AS p"
        " JOIN versions AS v ON p.filename = v.file GROUP BY p.uuid"
    )


def run(data: Path, out: Path, threads: int, memory_limit: int, versions: str | None) -> dict:
    import duckdb

    from contest.data.batches import discover

    batches = discover(data, versions)
    out.parent.mkdir(parents=True, exist_ok=True)
    spill = out.parent / ".spill"
    spill.mkdir(exist_ok=True)
    con = duckdb.connect()
    con.execute(f"SET threads = {int(threads)}")
    con.execute(f"SET memory_limit = '{max(1, memory_limit >> 20)}MiB'")
    con.execute("SET preserve_insertion_order = false")
    con.execute(f"SET temp_directory = '{str(spill).replace(chr(39), chr(39) * 2)}'")
    con.execute("CREATE TEMP TABLE versions (file VARCHAR, version BIGINT)")
    con.executemany(
        "INSERT INTO versions VALUES (?, ?)", [(str(b.path), b.version) for b in batches]
    )
    started = time.perf_counter()
    target = str(out).replace("'", "''")
    con.execute(
        f"COPY ({merge_sql()}) TO '{target}' (FORMAT parquet, COMPRESSION uncompressed)",
        {"files": [str(b.path) for b in batches]},
    )
    query_s = time.perf_counter() - started
    con.close()
    import pyarrow.parquet as pq

    return {"rows": pq.ParquetFile(out).metadata.num_rows, "query_s": round(query_s, 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True, help="result parquet file")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--memory-limit", type=int, required=True, help="bytes")
    ap.add_argument("--versions")
    a = ap.parse_args(argv)
    print(json.dumps(run(Path(a.data), Path(a.out), a.threads, a.memory_limit, a.versions)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
