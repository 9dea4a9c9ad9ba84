"""The independent oracle: the contract computed by DuckDB straight from the batch
files, sharing no code with the Spark/LakeSoul pipeline.

Every row gets an order key (batch version, row position in its file); per key:
`requests` is the sum, `name` the last value that is neither NULL nor "null",
the other columns the last non-NULL value; a workload's extra columns by their operators.

Bounded memory at any scale: DuckDB's memory limit is a share of the memory the machine
has available (spilling to the output's folder beyond it), and when the data would not
fit that limit the keys are split into ranges of uuid (quantiles of a sample) aggregated
one at a time. The ranges are in key order, so their sorted outputs, concatenated,
are the result sorted by uuid: no global sort.

Batches in the object store (s3://) are first downloaded, streamed, into the oracle's
local work folder, and read from there: DuckDB's own S3 reader is an extension it
downloads at run time (no network here), and reading through a pyarrow stream would
lose the row position the order key needs and read the data again for every key range.
The memory bound is unchanged; the local disk holds one copy of the batches meanwhile.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psutil
import pyarrow.parquet as pq

from contest.data import change_sql
from contest.data import operators as registry
from contest.data.batches import Batch
from contest.data.changes import Changes
from contest.errors import DataError, MergeOperatorError
from contest.infra.folders import localize

if TYPE_CHECKING:
    from contest.config import OracleConfig

# version * 2^40 + row position: positions stay below 2^40 in any file.
_ORDER = "(v.version::HUGEINT * 1099511627776 + p.file_row_number)"

_READ = "read_parquet($files, filename = true, file_row_number = true)"
_FROM = f"""
FROM {_READ} AS p
JOIN batch_versions AS v ON p.filename = v.file
{{where}}
GROUP BY p.uuid
"""


def source_sql(batches: Sequence[Batch], operators: Mapping[str, str] | None = None) -> str:
    """The rows the aggregates read, every batch under the newest schema: the
    batch files as they are when they share one schema; otherwise (a workload that
    evolved its schema) each column cast to its newest type (an int32 read as int64),
    a column no file has yet as NULL of that type, and DuckDB's `union_by_name` filling
    NULL where one file lacks a column others have."""
    schemas = {tuple(pq.read_schema(b.path)) for b in batches}
    if len(schemas) <= 1 and all(
        col in {f.name for f in next(iter(schemas), ())} for col in (operators or registry.CONTRACT)
    ):
        return _READ
    present = {f.name for schema in schemas for f in schema}
    cols = ["uuid", "filename", "file_row_number"]
    # A column keeps the type the files give it (a user's own, workload.types).
    found = {f.name: registry.type_name(f.type) for schema in schemas for f in schema}
    for col, op in (operators if operators is not None else registry.CONTRACT).items():
        name = found.get(col, "")
        typ = registry.sql_type(
            name if registry.known_type(name) else registry.get(op).default_type
        )
        value = f'CAST("{col}" AS {typ})' if col in present else f"CAST(NULL AS {typ})"
        cols.append(f'{value} AS "{col}"')
    read = _READ.replace(")", ", union_by_name = true)")
    return f"(SELECT {', '.join(cols)} FROM {read})"


def select_sql(
    operators: Mapping[str, str] | None = None, types: Mapping[str, str] | None = None
) -> str:
    """The contract as one aggregate per column (the contest's columns by default; a
    workload's extra columns with their operators), each the operator registry's DuckDB
    aggregate over the rows in order (`_ORDER`). `types`: a column's type name (int64,
    float64, string; default its operator's). `{where}` left open."""
    ops = dict(operators if operators is not None else registry.CONTRACT)
    types = dict(types or {})
    aggs = ["p.uuid AS uuid"]
    for col, op in ops.items():
        try:
            typ = types.get(col) or registry.get(op).default_type
            agg = registry.sql_aggregate(op, f'p."{col}"', _ORDER, typ)
        except MergeOperatorError as exc:
            raise DataError(
                f"column {col!r}: the oracle knows no operator {op!r} ({exc})"
            ) from None
        aggs.append(f'{agg} AS "{col}"')
    return "SELECT " + ",\n  ".join(aggs) + _FROM


# Memory DuckDB's aggregate takes per uncompressed byte of batch data (scale 1: 2.5 GB
# of data aggregated in about 2 GB; a margin included).
AGG_BYTES_PER_DATA_BYTE = 1.0
# The most the oracle and the checker ask of DuckDB, whatever the machine has: every
# process of the project stays under 8 GB of peak RSS. DuckDB's resident memory runs
# above its limit (its parquet reader's buffers, the allocator): at scale 10 a 6 GiB
# limit peaked at 8.36 GB, hence 4 GiB.
MAX_MEMORY_LIMIT = 4 << 30
MIN_MEMORY_LIMIT = 512 << 20
SAMPLE_ROWS = 200_000


# The expected file's key columns, in its schema's metadata, for the checker (absent:
# the contest's `uuid`).
KEY_METADATA = b"contest.key"


@dataclass(frozen=True)
class OracleReport:
    path: Path
    rows: int
    seconds: float
    parts: int = 1
    memory_limit: int = 0
    # Rows with a NULL key part the oracle left out (write.drop_null_keys).
    null_keys_dropped: int = 0


@dataclass(frozen=True)
class Query:
    """One way of computing the expected rows: the aggregate (`{where}` left open for a
    range of the first key column), where that column's sample comes from, the key
    columns the rows are sorted by, and what the expected file's schema records."""

    select: str
    range_column: str
    sample_source: str
    sample_column: str
    order: str
    metadata: dict[bytes, bytes] = dataclasses.field(default_factory=dict)
    null_keys_dropped: int = 0

    def sql(self, where: str) -> str:
        return self.select.replace("{where}", where)


@dataclass(frozen=True)
class Budget:
    """DuckDB's memory limit (bytes) and the key ranges to split the work into
    (0 = as many as the data needs for the limit)."""

    memory_limit: int
    parts: int = 0
    threads: int = 0

    def parts_for(self, data_bytes: int) -> int:
        if self.parts:
            return self.parts
        return max(1, math.ceil(data_bytes * AGG_BYTES_PER_DATA_BYTE / self.memory_limit))


def machine_budget(fraction: float = 0.4, fixed: int = 0, parts: int = 0) -> Budget:
    """A budget from the machine: `fraction` of the memory available now (lowered by a
    cgroup limit), within [MIN_MEMORY_LIMIT, MAX_MEMORY_LIMIT]; `fixed` wins when set."""
    if fixed:
        return Budget(fixed, parts)

    available = psutil.virtual_memory().available
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            raw = Path(path).read_text().strip()
        except OSError:
            continue
        if raw.isdigit():
            available = min(available, int(raw))
    limit = int(min(MAX_MEMORY_LIMIT, max(MIN_MEMORY_LIMIT, available * fraction)))
    return Budget(limit, parts)


def config_budget(oracle: OracleConfig) -> Budget:
    """The budget the configuration asks for (`[oracle]`)."""
    return machine_budget(oracle.memory_fraction, oracle.memory_bytes, oracle.parts)


def data_bytes(paths: Sequence[str | Path]) -> int:
    """Uncompressed bytes of parquet files, from their footers."""
    total = 0
    for path in paths:
        md = pq.ParquetFile(path).metadata
        total += sum(md.row_group(g).total_byte_size for g in range(md.num_row_groups))
    return total


def connect(memory_limit: str | int = "2GB", threads: int = 2, temp_dir: str | None = None):
    """An in-memory DuckDB with its limits set through its config, not SQL text: a
    temporary folder whose path holds a quote is a path like any other."""
    import duckdb  # deferred: duckdb is slow to import; `contest --help` starts without it

    if isinstance(memory_limit, int):
        memory_limit = f"{max(1, memory_limit >> 20)}MiB"
    return duckdb.connect(
        config={
            "memory_limit": memory_limit,
            "threads": int(threads) or len(os.sched_getaffinity(0)),
            "preserve_insertion_order": False,
            "temp_directory": temp_dir or tempfile.gettempdir(),
        }
    )


def local_batches(batches: Sequence[Batch], dest: Path) -> list[Batch]:
    """The batches with local paths (object-store ones downloaded into `dest`)."""
    paths = localize([b.path for b in batches], dest)
    return [dataclasses.replace(b, path=p) for b, p in zip(batches, paths, strict=True)]


def register_batches(con, batches: Sequence[Batch]) -> list[str]:
    files = [str(b.path) for b in batches]
    con.execute("CREATE OR REPLACE TEMP TABLE batch_versions (file VARCHAR, version BIGINT)")
    con.executemany(
        "INSERT INTO batch_versions VALUES (?, ?)", [(str(b.path), b.version) for b in batches]
    )
    return files


def key_ranges(
    con, source: str, parts: int, params: dict | None = None, column: str = "uuid"
) -> list:
    """Up to parts-1 increasing boundaries of `column` (the first key column) splitting
    a sample of `source`'s keys (a FROM clause) into even ranges."""
    if parts <= 1:
        return []
    rows = con.execute(
        f"SELECT {column} FROM (SELECT {column} FROM {source} WHERE {column} IS NOT NULL "
        f"USING SAMPLE reservoir({SAMPLE_ROWS} ROWS) REPEATABLE (2022)) ORDER BY {column}",
        params or {},
    ).fetchall()
    keys = [r[0] for r in rows]
    bounds: list = []
    for i in range(1, parts):
        if keys:
            b = keys[min(len(keys) - 1, i * len(keys) // parts)]
            if not bounds or b > bounds[-1]:
                bounds.append(b)
    return bounds


def range_filter(column: str, bounds: Sequence, i: int) -> str:
    """The condition of range i of `bounds` (NULL keys go to the last range, where
    ORDER BY puts them)."""
    lo = bounds[i - 1] if i > 0 else None
    hi = bounds[i] if i < len(bounds) else None
    conds = []
    if lo is not None:
        conds.append(f"{column} >= {change_sql.literal(lo)}")
    if hi is not None:
        conds.append(f"{column} < {change_sql.literal(hi)}")
    if not conds:
        return "TRUE"
    cond = " AND ".join(conds)
    return f"(({cond}) OR {column} IS NULL)" if hi is None else f"({cond})"


def query(
    con,
    batches: Sequence[Batch],
    files: list[str],
    operators: Mapping[str, str] | None,
    rules: Changes,
    names: Mapping[str, str],
) -> Query:
    """The query the data needs: the upsert path when every row upserts a `uuid` and
    every file holds every column, else the change path (contest/data/change_sql.py),
    its files' rows checked first (one line naming the file for a NULL key part, an
    unknown op value, a binary key of another length)."""
    ops = dict(operators if operators is not None else registry.CONTRACT)
    ops = {col: op for col, op in ops.items() if col not in rules.key}
    schemas = [pq.read_schema(b.path) for b in batches]
    if not change_sql.needed(rules, schemas, ops):
        register_batches(con, batches)
        source = source_sql(batches, operators)
        held = {f.name: registry.type_name(f.type) for schema in schemas for f in schema}
        types = {c: held[c] for c in ops if registry.known_type(held.get(c, ""))}
        select = select_sql(operators, types).replace(_READ, source)
        return Query(select, "p.uuid", source, "uuid", "uuid")
    if not batches:
        raise DataError("the oracle has no batch to read")
    plan = change_sql.plan(batches, ops, rules, names)
    con.execute(change_sql.files_table(plan))
    rows = change_sql.files_rows(plan, batches)
    marks = ", ".join("?" for _ in rows[0])
    con.executemany(f"INSERT INTO {change_sql.FILES_TABLE} VALUES ({marks})", rows)
    cur = con.execute(change_sql.checks_sql(plan), {"files": files})
    cols = [d[0] for d in cur.description]
    found = {r[0]: dict(zip(cols, r, strict=True)) for r in cur.fetchall()}
    dropped = 0
    for path in files:  # batch order: the first file's problem is the one told
        if path in found:
            why = change_sql.refusal(plan, found[path])
            if why:
                raise DataError(why)
            dropped += int(found[path]["nulls"])
    first = change_sql.quote(plan.key[0])
    return Query(
        change_sql.select_sql(plan),
        f"p.{first}",
        change_sql.READ,
        first,
        change_sql.order_by(plan),
        {KEY_METADATA: json.dumps(list(plan.key)).encode()},
        dropped,
    )


def expected_result(
    batches: Sequence[Batch],
    out_path: str | Path,
    *,
    budget: Budget | None = None,
    operators: Mapping[str, str] | None = None,
    changes: Changes | None = None,
) -> OracleReport:
    """Write the expected merged table (one parquet file, sorted by key), aggregating
    one key range at a time when the data needs more memory than the budget.
    `operators`: every non-key column's, in order (default: the contest's columns);
    `changes`: the row kinds, key and NULL-key rule (default: upserts of `uuid`)."""
    started = time.perf_counter()
    budget = budget or machine_budget()
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    work = out.with_name(out.name + ".parts")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    local = local_batches(batches, work / "batches")
    names = {str(lb.path): str(b.path) for lb, b in zip(local, batches, strict=True)}
    parts = budget.parts_for(data_bytes([b.path for b in local]))
    con = connect(budget.memory_limit, budget.threads, str(work))
    try:
        files = [str(b.path) for b in local]
        q = query(con, local, files, operators, changes or Changes(), names)
        bounds = key_ranges(con, q.sample_source, parts, {"files": files}, q.sample_column)
        part_files = []
        for i in range(len(bounds) + 1):
            path = work / f"part-{i:05d}.parquet"
            where = range_filter(q.range_column, bounds, i)
            con.execute(
                f"COPY ({q.sql('WHERE ' + where)} ORDER BY {q.order}) "
                f"TO '{sql_str(path)}' (FORMAT parquet, COMPRESSION zstd)",
                {"files": files},
            )
            part_files.append(path)
    finally:
        con.close()
    rows = _concat(part_files, tmp, q.metadata)
    shutil.rmtree(work, ignore_errors=True)
    tmp.replace(out)
    return OracleReport(
        out,
        rows,
        time.perf_counter() - started,
        len(part_files),
        budget.memory_limit,
        q.null_keys_dropped,
    )


def _concat(parts: Sequence[Path], out: Path, metadata: Mapping[bytes, bytes]) -> int:
    """Sorted parts, in order, into one parquet file, a row group at a time; each part
    deleted once copied and the file zstd-compressed, so that at scale 10 the oracle
    holds about half the disk it would (the machine's disk bounds the largest scale)."""
    rows = 0
    writer = None
    try:
        for path in parts:
            pf = pq.ParquetFile(path)
            if writer is None:
                schema = pf.schema_arrow
                if metadata:
                    schema = schema.with_metadata({**(schema.metadata or {}), **metadata})
                writer = pq.ParquetWriter(out, schema, compression="zstd")
            for g in range(pf.metadata.num_row_groups):
                t = pf.read_row_group(g)
                writer.write_table(t)
                rows += t.num_rows
            path.unlink()
    finally:
        if writer is not None:
            writer.close()
    return rows


def expected_rows(
    batches: Sequence[Batch],
    operators: Mapping[str, str] | None = None,
    changes: Changes | None = None,
) -> list[dict]:
    """The expected result in memory, sorted by key (for small data and tests)."""
    with tempfile.TemporaryDirectory() as tmp:
        local = local_batches(batches, Path(tmp))
        names = {str(lb.path): str(b.path) for lb, b in zip(local, batches, strict=True)}
        con = connect()
        try:
            files = [str(b.path) for b in local]
            q = query(con, local, files, operators, changes or Changes(), names)
            cur = con.execute(f"{q.sql('')} ORDER BY {q.order}", {"files": files})
            names_ = [d[0] for d in cur.description]
            return [dict(zip(names_, row, strict=True)) for row in cur.fetchall()]
        finally:
            con.close()


def sql_str(path: str | Path) -> str:
    """A path as the body of a SQL string literal (COPY takes no parameters)."""
    return str(path).replace("'", "''")
