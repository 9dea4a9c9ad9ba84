"""Check a result folder: against the oracle (DuckDB, no Spark, no LakeSoul), or by the
contest's own SHA-256 of a canonical CSV.

A result folder in the object store (s3://) is downloaded, streamed, beside the expected
file before DuckDB reads it (see contest/data/oracle.py for why), and removed after."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data.batches import COLUMNS, DataError
from contest.data.oracle import (
    Budget,
    connect,
    data_bytes,
    key_ranges,
    machine_budget,
    range_filter,
    sql_str,
)
from contest.infra.folders import join, kind, list_files, localize
from contest.infra.storage import is_object_store

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SUCCESS_MARKER = "_SUCCESS"  # written last by every result writer (Spark's too)


@dataclass
class CheckReport:
    expected_rows: int = 0
    actual_rows: int = 0
    duplicate_keys: int = 0
    missing_keys: int = 0
    extra_keys: int = 0
    differing_keys: int = 0
    column_diffs: dict[str, int] = field(default_factory=dict)
    samples: list[dict] = field(default_factory=list)
    schema_error: str | None = None
    # The compared columns, key first (the contest's by default).
    columns: list[str] = field(default_factory=lambda: list(COLUMNS))

    @property
    def ok(self) -> bool:
        return (
            self.schema_error is None
            and self.duplicate_keys == 0
            and self.missing_keys == 0
            and self.extra_keys == 0
            and self.differing_keys == 0
            and self.expected_rows == self.actual_rows
        )

    def render(self) -> str:
        if self.schema_error:
            return f"FAIL: {self.schema_error}"
        lines = [
            f"{'OK' if self.ok else 'FAIL'}: expected {self.expected_rows:,} rows, "
            f"result has {self.actual_rows:,}",
        ]
        if self.duplicate_keys:
            lines.append(f"  {self.duplicate_keys:,} uuid(s) appear more than once in the result")
        if self.missing_keys or self.extra_keys:
            lines.append(
                f"  {self.missing_keys:,} expected uuid(s) missing, "
                f"{self.extra_keys:,} unexpected uuid(s)"
            )
        if self.differing_keys:
            cols = ", ".join(f"{c} ({n:,})" for c, n in self.column_diffs.items() if n)
            lines.append(f"  {self.differing_keys:,} uuid(s) differ; by column: {cols}")
        for s in self.samples:
            lines.append(f"  uuid {s['uuid']}: {s['what']}")
        return "\n".join(lines)


def result_files(result_dir: str | Path) -> list[str]:
    """The parquet files of a complete result folder (a local path or s3:// URI)."""
    if is_object_store(result_dir):
        uri = str(result_dir).rstrip("/")
        if kind(uri) != "folder":
            raise DataError(f"{uri}: no such result folder")
        if kind(join(uri, SUCCESS_MARKER)) != "file":
            raise DataError(_incomplete(uri))
        remote = [
            e.uri
            for e in list_files(uri, recursive=True)
            if e.name.endswith(".parquet")
            and not any(part.startswith(("_", ".")) for part in e.name.split("/"))
        ]
        if not remote:
            raise DataError(f"{uri}: no parquet files in the result folder")
        return remote
    root = Path(result_dir)
    if not root.is_dir():
        raise DataError(f"{root}: no such result folder")
    if not (root / SUCCESS_MARKER).exists():
        raise DataError(_incomplete(root))
    files = sorted(
        p
        for p in root.rglob("*.parquet")
        if not any(part.startswith(("_", ".")) for part in p.relative_to(root).parts)
    )
    if not files:
        raise DataError(f"{root}: no parquet files in the result folder")
    return [str(p) for p in files]


def _incomplete(root: str | Path) -> str:
    return (
        f"{root}: no {SUCCESS_MARKER} marker: the result is incomplete (its "
        "read was interrupted or failed); run the read again"
    )


def compare(
    result_dir: str | Path, expected: str | Path, samples: int = 5, budget: Budget | None = None
) -> CheckReport:
    """Compare a result folder with the oracle's expected parquet file, key by key, one
    range of keys at a time when both would not fit the memory budget together."""
    files = result_files(result_dir)
    with tempfile.TemporaryDirectory(dir=Path(expected).parent, prefix=".result-") as tmp:
        return _compare(result_dir, localize(files, Path(tmp)), expected, samples, budget)


def _compare(
    result_dir: str | Path,
    files: list[str],
    expected: str | Path,
    samples: int,
    budget: Budget | None,
) -> CheckReport:
    import duckdb  # deferred: duckdb is slow to import; `contest --help` starts without it

    check_footers(files)
    report = CheckReport()
    budget = budget or machine_budget()
    con = connect(budget.memory_limit, budget.threads, str(Path(expected).parent))
    try:
        return _compare_in(con, result_dir, files, expected, samples, budget, report)
    except duckdb.Error as exc:  # a damaged body: one line, not DuckDB's traceback
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise DataError(f"{result_dir}: cannot read the result: {first}") from None
    finally:
        con.close()


def check_footers(files: list[str]) -> None:
    """Every result file opens as parquet (a truncated one has no footer): an error
    naming the first that does not, before DuckDB reads any."""
    for f in files:
        try:
            pq.read_metadata(f)
        except (OSError, pa.ArrowException) as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            raise DataError(
                f"{f}: not a readable parquet file, it is truncated or damaged ({first})"
            ) from None


def _compare_in(
    con,
    result_dir: str | Path,
    files: list[str],
    expected: str | Path,
    samples: int,
    budget: Budget,
    report: CheckReport,
) -> CheckReport:
    try:
        listing = ", ".join(f"'{sql_str(f)}'" for f in files)  # views take no parameters
        con.execute(f"CREATE VIEW act AS SELECT * FROM read_parquet([{listing}])")
    except Exception as exc:  # duckdb.Error: unreadable or mismatched files
        raise DataError(f"{result_dir}: cannot read the result: {exc}") from None
    con.execute(f"CREATE VIEW exp AS SELECT * FROM read_parquet('{sql_str(expected)}')")
    cols = con.execute("DESCRIBE act").fetchall()
    names = [c[0] for c in cols]
    # The expected file's columns: the contest's, and a workload's extra ones.
    want = {c[0]: c[1] for c in con.execute("DESCRIBE exp").fetchall()}
    if names != list(want):
        report.schema_error = (
            f"result columns are {', '.join(names)}; expected exactly {', '.join(want)}"
        )
        return report
    wrong = [f"{c[0]} is {c[1]}, not {want[c[0]]}" for c in cols if c[1] != want[c[0]]]
    if wrong:
        report.schema_error = f"result column types: {', '.join(wrong)} (requests must be int64)"
        return report
    report.columns = names
    report.expected_rows = con.execute("SELECT count(*) FROM exp").fetchone()[0]
    report.actual_rows = con.execute("SELECT count(*) FROM act").fetchone()[0]
    # Both sides are read per range: the join of a range fits the budget.
    parts = budget.parts_for(data_bytes([*files, expected]))
    bounds = key_ranges(con, "exp", parts)
    report.column_diffs = dict.fromkeys(names[1:], 0)
    for i in range(len(bounds) + 1):
        _compare_range(con, range_filter("uuid", bounds, i), report, samples)
    return report


def _compare_range(con, where: str, report: CheckReport, samples: int) -> None:
    """Add one key range's duplicates, missing, unexpected and differing keys (and the
    first samples) to `report`."""
    report.duplicate_keys += con.execute(
        f"SELECT count(*) FROM (SELECT uuid FROM act WHERE {where} "
        "GROUP BY uuid HAVING count(*) > 1)"
    ).fetchone()[0]
    differs = " OR ".join(f"e.{c} IS DISTINCT FROM a.{c}" for c in report.columns[1:])
    diff = (
        "SELECT e.uuid AS e_uuid, a.uuid AS a_uuid, "
        + ", ".join(f"e.{c} AS e_{c}, a.{c} AS a_{c}" for c in report.columns[1:])
        + f" FROM (SELECT * FROM exp WHERE {where}) e FULL OUTER JOIN "
        f"(SELECT DISTINCT ON (uuid) * FROM act WHERE {where}) a "
        f"ON e.uuid = a.uuid WHERE e.uuid IS NULL OR a.uuid IS NULL OR {differs}"
    )
    con.execute(f"CREATE OR REPLACE TEMP TABLE diff AS {diff}")
    both = "e_uuid IS NOT NULL AND a_uuid IS NOT NULL"
    counts = con.execute(
        "SELECT count(*) FILTER (WHERE a_uuid IS NULL), count(*) FILTER (WHERE e_uuid IS NULL), "
        f"count(*) FILTER (WHERE {both}), "
        + ", ".join(
            f"count(*) FILTER (WHERE {both} AND e_{c} IS DISTINCT FROM a_{c})"
            for c in report.columns[1:]
        )
        + " FROM diff"
    ).fetchone()
    report.missing_keys += counts[0]
    report.extra_keys += counts[1]
    report.differing_keys += counts[2]
    for c, n in zip(report.columns[1:], counts[3:], strict=True):
        report.column_diffs[c] += n
    wanted = samples - len(report.samples)
    if wanted > 0 and any(counts[:3]):
        rows = con.execute(
            "SELECT * FROM diff ORDER BY coalesce(e_uuid, a_uuid) LIMIT $n", {"n": wanted}
        ).fetchall()
        names = [d[0] for d in con.description]
        for row in rows:
            r = dict(zip(names, row, strict=True))
            what = _describe(r, report.columns[1:])
            report.samples.append({"uuid": r["e_uuid"] or r["a_uuid"], "what": what})
    con.execute("DROP TABLE diff")


def _describe(r: dict, columns: list[str]) -> str:
    if r["a_uuid"] is None:
        return "missing from the result"
    if r["e_uuid"] is None:
        return "not expected"
    parts = [
        f"{c}: expected {r['e_' + c]!r}, got {r['a_' + c]!r}"
        for c in columns
        if r["e_" + c] != r["a_" + c]
    ]
    return "; ".join(parts)


def contest_sha256(spark: SparkSession, result_dir: str | Path, csv_dir: str | Path) -> str:
    """The contest's check: the result sorted by uuid as one CSV file with a header,
    written by Spark's CSV writer with default options; SHA-256 of that file."""
    result_files(result_dir)  # a clear error for an empty or missing folder
    csv_dir = Path(csv_dir)
    shutil.rmtree(csv_dir, ignore_errors=True)
    df = spark.read.parquet(str(result_dir)).select(*COLUMNS)
    # Sort, then one partition: coalesce concatenates the range partitions in order.
    df.sort("uuid").coalesce(1).write.mode("overwrite").csv(str(csv_dir), header=True)
    parts = sorted(csv_dir.glob("part-*.csv"))
    if len(parts) != 1:
        raise DataError(f"{csv_dir}: expected one CSV file, found {len(parts)}")
    digest = hashlib.sha256()
    with parts[0].open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
