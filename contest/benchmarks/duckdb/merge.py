"""The reference merge for `contest bench duckdb`: DuckDB merges the batch files straight
into parquet with the contract's operators, in one whole process
(`python -m contest.benchmarks.duckdb.merge --data DIR --out FOLDER --threads N`).

Its own SQL (not the oracle's, which checks it): per key the sum of `requests` and,
for every other column, the value of the latest row (version, then row position) that
the column's operator accepts. Prints one JSON line: rows, query_s, parts, and how
DuckDB ran (its version, threads, memory_limit as it reports it).

As users run it by default: no `--memory-limit`, DuckDB's own settings (a memory limit of
80% of the machine's memory, insertion order kept), but for the threads (the cores the
sitting gives every engine) and the folder it spills to (under the work folder, as
DuckDB spills by default). With `--memory-limit`, the connection the oracle makes: that
limit, insertion order not kept (the older sittings' reference, and an equal-memory
comparison's).

A workload other than the contest's (`--operators`, `--changes`: a user's files, their
key, row kinds and operators) is merged by the oracle's query (contest/data/oracle.py),
the only merge SQL that takes any of them, its per-file checks included: on such data
the check against the oracle says the result was written whole, not that two queries
agree.

Key ranges (`--parts`): one query per range of uuid, each writing its own file (0: as
many as the memory limit needs, the oracle's rule, one without a limit; 1: one query).
Split, every query reads the batches again: a different, slower reference, which the page
labels with its number of ranges. The ranges' boundaries are the oracle's (a sample's
quantiles): splitting keys is not merge semantics.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from contest.data.batches import discover
from contest.data.changes import Changes
from contest.data.operators import CONTRACT
from contest.data.oracle import Budget, connect, data_bytes, key_ranges, query, range_filter

_LAST = "(v.version::HUGEINT << 40) + p.file_row_number"
_SOURCE = "read_parquet($files, filename = true, file_row_number = true)"


def merge_sql(
    where_name: str = "p.name IS NOT NULL AND p.name <> 'null'", where: str = "TRUE"
) -> str:
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
        + f" FROM {_SOURCE} AS p"
        f" JOIN versions AS v ON p.filename = v.file WHERE {where} GROUP BY p.uuid"
    )


def connect_as_users_do(threads: int, temp_dir: Path) -> duckdb.DuckDBPyConnection:
    """DuckDB at its defaults: only the threads (the sitting's cores) and where it spills
    are set; its memory limit is its own (80% of the machine's memory)."""
    return duckdb.connect(config={"threads": threads, "temp_directory": str(temp_dir)})


def run(
    data: Path,
    out: Path,
    threads: int,
    memory_limit: int | None,
    versions: str | None,
    parts: int = 0,
    operators: Mapping[str, str] | None = None,
    changes: Changes | None = None,
) -> dict:
    """Merge `data` into `out`; `memory_limit` None: DuckDB's default limit and settings.
    `operators` and `changes`: a workload's other than the contest's (a user's columns,
    key and row kinds), merged by the oracle's query (contest/data/oracle.py)."""
    batches = discover(data, versions, None)  # checked by the sitting
    files = [str(b.path) for b in batches]
    if memory_limit is None:
        # No limit to fit: one query unless ranges are asked for.
        parts = parts or 1
    else:
        parts = Budget(memory_limit, parts).parts_for(data_bytes(files))
    out.mkdir(parents=True, exist_ok=True)
    spill = out / ".spill"
    spill.mkdir(exist_ok=True)
    if memory_limit is None:
        con = connect_as_users_do(threads, spill)
    else:
        # The oracle's connection settings: the same limit, threads and spill folder.
        con = connect(memory_limit, threads, str(spill))
    setting, used_threads = con.execute(
        "SELECT current_setting('memory_limit'), current_setting('threads')"
    ).fetchone() or (None, None)
    con.execute("CREATE TEMP TABLE versions (file VARCHAR, version BIGINT)")
    con.executemany(
        "INSERT INTO versions VALUES (?, ?)",
        [(f, b.version) for f, b in zip(files, batches, strict=True)],
    )
    started = time.perf_counter()
    rules = changes or Changes()
    if operators is None or (dict(operators) == CONTRACT and rules == Changes()):
        column, sample, of = "p.uuid", _SOURCE, "uuid"

        def sql_of(where: str) -> str:
            return merge_sql(where=where)
    else:
        # Any workload: the contract's query as the oracle writes it (the only merge SQL
        # that takes a user's key, row kinds and operators), its file checks included.
        q = query(con, batches, files, operators, rules, {f: f for f in files})
        column, sample, of = q.range_column, q.sample_source, q.sample_column

        def sql_of(where: str) -> str:
            return q.sql("WHERE " + where)

    # The sample that places the boundaries is part of the timed work (a user pays it).
    bounds = key_ranges(con, sample, parts, {"files": files}, of)
    written = []
    for i in range(len(bounds) + 1):
        path = out / f"part-{i:05d}.parquet"
        target = str(path).replace("'", "''")
        sql = sql_of(range_filter(column, bounds, i))
        con.execute(
            f"COPY ({sql}) TO '{target}' (FORMAT parquet, COMPRESSION uncompressed)",
            {"files": files},
        )
        written.append(path)
    query_s = time.perf_counter() - started
    con.close()
    rows = sum(pq.ParquetFile(p).metadata.num_rows for p in written)
    return {
        "rows": rows,
        "query_s": round(query_s, 3),
        "parts": len(written),
        "duckdb_version": duckdb.__version__,
        "threads": int(used_threads) if used_threads is not None else threads,
        "memory_limit": memory_limit,
        "memory_limit_setting": setting,
    }


def changes_from(text: str) -> Changes:
    """A workload's `Changes` from its JSON (a list for the key's tuple)."""
    fields = json.loads(text)
    return Changes(**{**fields, "key": tuple(fields["key"])})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True, help="result folder (part-NNNNN.parquet files)")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument(
        "--memory-limit", type=int, help="bytes (default: none set, DuckDB's own default)"
    )
    ap.add_argument("--versions")
    ap.add_argument(
        "--parts", type=int, default=0, help="key ranges, one query each (0: as the data needs)"
    )
    ap.add_argument("--operators", help="JSON: each non-key column's operator (a workload's)")
    ap.add_argument("--changes", help="JSON: the key, op column and spelling (a workload's)")
    a = ap.parse_args(argv)
    ops = json.loads(a.operators) if a.operators else None
    rules = changes_from(a.changes) if a.changes else None
    result = run(
        Path(a.data), Path(a.out), a.threads, a.memory_limit, a.versions, a.parts, ops, rules
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
