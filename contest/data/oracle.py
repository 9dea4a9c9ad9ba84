"""The independent oracle: the contract computed by DuckDB straight from the batch
files, sharing no code with the Spark/LakeSoul pipeline.

Every row gets an order key (batch version, row position in its file); per key:
`requests` is the sum, `name` the last value that is neither NULL nor "null",
the other columns the last non-NULL value.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from contest.data.batches import Batch

# version * 2^40 + row position: positions stay below 2^40 in any file.
_ORDER = "(v.version::HUGEINT * 1099511627776 + p.file_row_number)"

_SELECT = f"""
SELECT p.uuid AS uuid,
  arg_max(p.ip, {_ORDER}) FILTER (WHERE p.ip IS NOT NULL) AS ip,
  arg_max(p.hostname, {_ORDER}) FILTER (WHERE p.hostname IS NOT NULL) AS hostname,
  CAST(sum(p.requests) AS BIGINT) AS requests,
  arg_max(p.name, {_ORDER}) FILTER (WHERE p.name IS NOT NULL AND p.name <> 'null') AS name,
  arg_max(p.city, {_ORDER}) FILTER (WHERE p.city IS NOT NULL) AS city,
  arg_max(p.job, {_ORDER}) FILTER (WHERE p.job IS NOT NULL) AS job,
  arg_max(p.phonenum, {_ORDER}) FILTER (WHERE p.phonenum IS NOT NULL) AS phonenum
FROM read_parquet($files, filename = true, file_row_number = true) AS p
JOIN batch_versions AS v ON p.filename = v.file
GROUP BY p.uuid
"""


@dataclass(frozen=True)
class OracleReport:
    path: Path
    rows: int
    seconds: float


def connect(memory_limit: str = "2GB", threads: int = 2, temp_dir: str | None = None):
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{memory_limit}'")
    con.execute(f"SET threads = {int(threads)}")
    con.execute("SET preserve_insertion_order = false")
    con.execute(f"SET temp_directory = '{temp_dir or tempfile.gettempdir()}'")
    return con


def register_batches(con, batches: Sequence[Batch]) -> list[str]:
    files = [str(b.path) for b in batches]
    con.execute("CREATE OR REPLACE TEMP TABLE batch_versions (file VARCHAR, version BIGINT)")
    con.executemany(
        "INSERT INTO batch_versions VALUES (?, ?)", [(str(b.path), b.version) for b in batches]
    )
    return files


def expected_result(
    batches: Sequence[Batch], out_path: str | Path, *, memory_limit: str = "2GB", threads: int = 2
) -> OracleReport:
    """Write the expected merged table (one parquet file, sorted by uuid)."""
    started = time.perf_counter()
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    con = connect(memory_limit, threads, str(out.parent))
    try:
        files = register_batches(con, batches)
        con.execute(
            f"COPY ({_SELECT} ORDER BY uuid) TO '{_sql_str(tmp)}' (FORMAT parquet)",
            {"files": files},
        )
        rows = con.execute(f"SELECT count(*) FROM read_parquet('{_sql_str(tmp)}')").fetchone()[0]
    finally:
        con.close()
    tmp.replace(out)
    return OracleReport(out, int(rows), time.perf_counter() - started)


def expected_rows(batches: Sequence[Batch]) -> list[dict]:
    """The expected result in memory, sorted by uuid (for small data and tests)."""
    con = connect()
    try:
        files = register_batches(con, batches)
        cur = con.execute(f"{_SELECT} ORDER BY uuid", {"files": files})
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    finally:
        con.close()


def _sql_str(path: str | Path) -> str:
    """A path as the body of a SQL string literal (COPY takes no parameters)."""
    return str(path).replace("'", "''")
