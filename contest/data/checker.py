"""Check a result folder: against the oracle (DuckDB, no Spark, no LakeSoul), or by the
contest's own SHA-256 of a canonical CSV.

A result folder in the object store (s3://) is downloaded, streamed, beside the expected
file before DuckDB reads it (see contest/data/oracle.py for why), and removed after."""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data.batches import COLUMNS, DataError
from contest.data.change_sql import quote
from contest.data.oracle import (
    KEY_METADATA,
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
    # The compared columns, key first (the contest's by default), and the key's columns.
    columns: list[str] = field(default_factory=lambda: list(COLUMNS))
    key: list[str] = field(default_factory=lambda: ["uuid"])

    @property
    def payload(self) -> list[str]:
        return self.columns[len(self.key) :]

    @property
    def noun(self) -> str:
        """What the report calls a key: `uuid` for the contest's, else `key`."""
        return "uuid" if self.key == ["uuid"] else "key"

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
        k = self.noun
        if self.duplicate_keys:
            lines.append(f"  {self.duplicate_keys:,} {k}(s) appear more than once in the result")
        if self.missing_keys or self.extra_keys:
            lines.append(
                f"  {self.missing_keys:,} expected {k}(s) missing, "
                f"{self.extra_keys:,} unexpected {k}(s)"
            )
        if self.differing_keys:
            cols = ", ".join(f"{c} ({n:,})" for c, n in self.column_diffs.items() if n)
            lines.append(f"  {self.differing_keys:,} {k}(s) differ; by column: {cols}")
        for s in self.samples:
            lines.append(f"  {k} {s['key']}: {s['what']}")
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
    report.key = expected_key(expected)
    report.expected_rows = con.execute("SELECT count(*) FROM exp").fetchone()[0]
    report.actual_rows = con.execute("SELECT count(*) FROM act").fetchone()[0]
    # Both sides are read per range of the key's first column: the join of a range fits
    # the budget.
    parts = budget.parts_for(data_bytes([*files, expected]))
    first = quote(report.key[0])
    bounds = key_ranges(con, "exp", parts, column=first)
    report.column_diffs = dict.fromkeys(report.payload, 0)
    for i in range(len(bounds) + 1):
        _compare_range(con, range_filter(first, bounds, i), report, samples)
    return report


def expected_key(expected: str | Path) -> list[str]:
    """The key's columns the oracle recorded in the expected file (the contest's `uuid`
    when it recorded none)."""
    metadata = pq.read_schema(expected).metadata or {}
    return json.loads(metadata[KEY_METADATA]) if KEY_METADATA in metadata else ["uuid"]


def _compare_range(con, where: str, report: CheckReport, samples: int) -> None:
    """Add one key range's duplicates, missing, unexpected and differing keys (and the
    first samples) to `report`. Keys compare exactly, a binary one byte for byte."""
    keys = ", ".join(quote(k) for k in report.key)
    report.duplicate_keys += con.execute(
        f"SELECT count(*) FROM (SELECT {keys} FROM act WHERE {where} "
        f"GROUP BY {keys} HAVING count(*) > 1)"
    ).fetchone()[0]
    cols = [quote(c) for c in report.payload]
    differs = " OR ".join(f"e.{c} IS DISTINCT FROM a.{c}" for c in cols) or "FALSE"
    on = " AND ".join(f"e.{quote(k)} = a.{quote(k)}" for k in report.key)
    diff = (
        "SELECT e.__side AS e_side, a.__side AS a_side, "
        + ", ".join(
            f"e.{quote(k)} AS {quote('e_' + k)}, a.{quote(k)} AS {quote('a_' + k)}"
            for k in report.columns
        )
        + f" FROM (SELECT *, TRUE AS __side FROM exp WHERE {where}) e FULL OUTER JOIN "
        f"(SELECT DISTINCT ON ({keys}) *, TRUE AS __side FROM act WHERE {where}) a "
        f"ON {on} WHERE e.__side IS NULL OR a.__side IS NULL OR {differs}"
    )
    con.execute(f"CREATE OR REPLACE TEMP TABLE diff AS {diff}")
    both = "e_side AND a_side"
    counts = con.execute(
        "SELECT count(*) FILTER (WHERE a_side IS NULL), count(*) FILTER (WHERE e_side IS NULL), "
        f"count(*) FILTER (WHERE {both}) "
        + "".join(
            f", count(*) FILTER (WHERE {both} AND {quote('e_' + c)} IS DISTINCT FROM "
            f"{quote('a_' + c)})"
            for c in report.payload
        )
        + " FROM diff"
    ).fetchone()
    report.missing_keys += counts[0]
    report.extra_keys += counts[1]
    report.differing_keys += counts[2]
    for c, n in zip(report.payload, counts[3:], strict=True):
        report.column_diffs[c] += n
    wanted = samples - len(report.samples)
    if wanted > 0 and any(counts[:3]):
        order = ", ".join(f"coalesce({quote('e_' + k)}, {quote('a_' + k)})" for k in report.key)
        rows = con.execute(
            f"SELECT * FROM diff ORDER BY {order} LIMIT $n", {"n": wanted}
        ).fetchall()
        names = [d[0] for d in con.description]
        for row in rows:
            r = dict(zip(names, row, strict=True))
            side = "e_" if r["e_side"] else "a_"
            key = key_text([r[side + k] for k in report.key])
            report.samples.append({"key": key, "what": _describe(r, report.payload)})
    con.execute("DROP TABLE diff")


def key_text(parts: list) -> str:
    """A key as a report shows it: a value as it is, bytes in hex, two parts in
    parentheses."""
    shown = [p.hex() if isinstance(p, bytes) else str(p) for p in parts]
    return shown[0] if len(shown) == 1 else "(" + ", ".join(shown) + ")"


def _describe(r: dict, columns: list[str]) -> str:
    if r["a_side"] is None:
        return "missing from the result"
    if r["e_side"] is None:
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
