"""A user's data folder described from its parquet footers: a starting workload.

`contest dataset describe DIR` reads each file's footer (schema, rows, column
statistics), never the rows themselves, except a likely op column's distinct values,
streamed a row group at a time. From them it guesses the key and the op column, each
with the reason it gives, and writes a workload TOML whose payload is exactly the
files' other columns, each merged by UseLast until the user picks another operator.
Pure functions over footers; nothing here writes into the folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data import operators
from contest.data.batches import Batch, discover
from contest.data.changes import ROW_KINDS, key_type
from contest.data.workload import OWN, TYPES, workload_type
from contest.infra.folders import open_input

# A column whose name says it is a record's identity (id, uuid, pk, key, customer_id).
_KEY_NAME = re.compile(r"^(id|uuid|pk|key)$|_(id|key|pk|uuid)$")
# Names an op column goes by in change streams (Debezium's op, Flink's rowkind, ...).
_OP_NAMES = ("op", "_op", "__op", "op_type", "operation", "row_kind", "rowkind", "change_type")
# An op column has few distinct values: more than this and it is no op column.
_OP_DISTINCT_MAX = 16


@dataclass(frozen=True)
class Column:
    """One column over every file: its type (each file's, when they differ), the NULLs
    the statistics count (None: some row group has no null_count), the files holding it."""

    name: str
    types: tuple[pa.DataType, ...]
    nulls: int | None
    files: int
    # The first file (batch index) of int64 when the earlier files hold it as int32 (a
    # widening, workload.widened); 0: none.
    widened: int = 0

    @property
    def type(self) -> pa.DataType:
        return self.types[0]


@dataclass(frozen=True)
class PairRule:
    """Two columns that are a key together, and why (a guess the user confirms)."""

    first: Callable[[str], bool]
    second: Callable[[str], bool]
    why: str


# A parent key and a position inside it (TPC-H's l_orderkey + l_linenumber); a tenant
# (or shard) beside an id: ids repeat across tenants.
PAIR_RULES: tuple[PairRule, ...] = (
    PairRule(
        lambda n: bool(re.search(r"(order|parent)_?(key|id)$", n)),
        lambda n: bool(re.search(r"(line_?(number|no)?|_seq|_pos)$", n)),
        "a parent key and a line number inside it (like TPC-H's l_orderkey + l_linenumber)",
    ),
    PairRule(
        lambda n: n in ("tenant", "tenant_id", "shard", "shard_id", "region"),
        lambda n: bool(_KEY_NAME.search(n)) and not n.startswith(("tenant", "shard")),
        "an id beside a tenant (or shard) column: ids repeat across tenants",
    ),
)


@dataclass(frozen=True)
class Description:
    """What the footers say, and the workload guessed from it."""

    folder: str
    batches: tuple[Batch, ...]
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    key_why: str
    op_column: str
    op_values: str
    op_why: str
    # Columns no workload type takes yet (decimal, date, timestamp): left out, named.
    unsupported: tuple[str, ...]


def column_stats(footers: Sequence[pq.FileMetaData]) -> tuple[Column, ...]:
    """Every column of the files, in first-seen order, with its types and statistics'
    NULL count."""
    order: list[str] = []
    types: dict[str, list[pa.DataType]] = {}
    nulls: dict[str, int | None] = {}
    files: dict[str, int] = {}
    per_file: dict[str, list[tuple[int, pa.DataType]]] = {}
    for index, meta in enumerate(footers):
        schema = meta.schema.to_arrow_schema()
        for f in schema:
            if f.name not in types:
                order.append(f.name)
                types[f.name], nulls[f.name], files[f.name] = [], 0, 0
                per_file[f.name] = []
            if f.type not in types[f.name]:
                types[f.name].append(f.type)
            files[f.name] += 1
            per_file[f.name].append((index, f.type))
        for name, count in _null_counts(meta).items():
            before = nulls.get(name)
            nulls[name] = None if before is None or count is None else before + count
    return tuple(
        Column(n, tuple(types[n]), nulls[n], files[n], widened_at(per_file[n])) for n in order
    )


def widened_at(held: Sequence[tuple[int, pa.DataType]]) -> int:
    """The batch index from which a column is int64 when every file before it holds it
    as int32 (a declared widening), else 0 (none, or the types are mixed otherwise)."""
    kinds = [t for _, t in held]
    if set(kinds) != {pa.int32(), pa.int64()}:
        return 0
    first = kinds.index(pa.int64())
    if all(t == pa.int32() for t in kinds[:first]) and all(t == pa.int64() for t in kinds[first:]):
        return held[first][0]
    return 0


def _null_counts(meta: pq.FileMetaData) -> dict[str, int | None]:
    """Each top-level column's NULLs in one file by its row groups' statistics."""
    out: dict[str, int | None] = {}
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            chunk = group.column(c)
            name = chunk.path_in_schema.split(".")[0]
            stats = chunk.statistics
            count = stats.null_count if stats is not None and stats.has_null_count else None
            before = out.get(name, 0)
            out[name] = None if before is None or count is None else before + count
    return out


def _keyable(col: Column, every: int) -> bool:
    """A key column: in every file, one key type, no NULL the statistics know of."""
    return (
        col.files == every
        and len(col.types) == 1
        and key_type(col.type) is not None
        and col.nulls == 0
    )


def guess_key(columns: Sequence[Column], files: int) -> tuple[tuple[str, ...], str]:
    """The key the columns suggest and why, or () and why none: a pair by `PAIR_RULES`
    first, else one column named like an id (id, uuid, pk, key, *_id)."""
    usable = [c for c in columns if _keyable(c, files)]
    for rule in PAIR_RULES:
        firsts = [c.name for c in usable if rule.first(c.name)]
        seconds = [c.name for c in usable if rule.second(c.name) and c.name not in firsts]
        if len(firsts) == 1 and len(seconds) == 1:
            return (firsts[0], seconds[0]), f"{firsts[0]} + {seconds[0]}: {rule.why}"
    named = [c.name for c in usable if _KEY_NAME.search(c.name)]
    exact = [n for n in named if _KEY_NAME.match(n) and "_" not in n]
    pick = exact or named
    if len(pick) == 1:
        return (pick[0],), (
            f"{pick[0]}: named like an id, of a key type, in every file, no NULL in the statistics"
        )
    if pick:
        return (), f"several columns named like an id ({', '.join(pick)}): pick workload.key"
    return (), "no column named like an id (id, uuid, pk, *_id) of a key type without NULLs"


def guess_op(
    columns: Sequence[Column], values: Callable[[str], set[str] | None]
) -> tuple[str, str, str]:
    """The op column, its spelling (ROW_KINDS) and why, or ("", "", why none): a string
    column named like one whose values (`values`: its distinct ones, None when too many)
    are all one spelling's."""
    for col in columns:
        if col.name not in _OP_NAMES or operators.type_name(col.type) != operators.STRING:
            continue
        found = values(col.name)
        if found is None:
            continue
        for spelling, kinds in ROW_KINDS.items():
            if found and found <= set(kinds):
                shown = ", ".join(sorted(found))
                return col.name, spelling, f"{col.name}: its values {shown} are {spelling}'s"
    return "", "", "no string column named like an op column holding row kinds"


def distinct_values(batches: Iterable[Batch], column: str) -> set[str] | None:
    """A column's distinct values over the files, one row group at a time; None when
    there are more than an op column has."""
    seen: set[str] = set()
    for b in batches:
        with open_input(b.path) as fh:
            pf = pq.ParquetFile(fh)
            if column not in pf.schema_arrow.names:
                continue
            for g in range(pf.num_row_groups):
                part = pf.read_row_group(g, columns=[column]).column(0)
                seen.update(v for v in part.unique().to_pylist() if v is not None)
                if len(seen) > _OP_DISTINCT_MAX:
                    return None
    return seen


def type_name(typ: pa.DataType) -> str | None:
    """A workload type's name (`workload.types`) for an arrow type, or None."""
    if pa.types.is_large_string(typ):
        return "string"
    simple = next((name for name, t in TYPES.items() if t == typ), None)
    if simple is not None:
        return simple
    name = operators.type_name(typ)  # decimal(P,S), date, timestamp(tz), as declared
    return name if workload_type(name) == typ else None


def describe(folder: str) -> Description:
    """The folder's files (discover's order: base-N, else natural name order) and the
    workload their footers suggest."""
    batches = tuple(discover(folder, None, None))
    footers = []
    for b in batches:
        with open_input(b.path) as fh:
            footers.append(pq.read_metadata(fh))
    columns = column_stats(footers)
    key, key_why = guess_key(columns, len(batches))
    op, spelling, op_why = guess_op(columns, lambda c: distinct_values(batches, c))
    unsupported = tuple(
        c.name for c in columns if c.name not in key and c.name != op and _payload_type(c) is None
    )
    return Description(folder, batches, columns, key, key_why, op, spelling, op_why, unsupported)


def _payload_type(col: Column) -> str | None:
    """The type a payload column is declared as: the widest of its files' (int32 files
    beside int64 ones widen), None when no workload type or UseLast takes it."""
    names = {type_name(t) for t in col.types}
    if names == {"int32", "int64"}:
        return "int64" if col.widened else None
    if len(names) != 1:
        return None
    name = names.pop()
    typ = None if name is None else workload_type(name)
    if typ is None or not operators.get(operators.USE_LAST).accepts(typ):
        return None
    return name


# Names a change log's position or time takes (Debezium's source.lsn and ts_ms, flattened).
LOG_POSITION_NAMES = ("lsn", "ts_ms", "scn", "offset", "position", "seq", "sequence")


def log_positions(columns: Sequence[Column]) -> list[str]:
    """Columns that look like a log position (`workload.order_column`): an integer or
    timestamp column named like one, offered commented out for the user to choose."""
    out = []
    for col in columns:
        name = col.name.lower()
        named = name in LOG_POSITION_NAMES or name.split("_", 1)[-1] in LOG_POSITION_NAMES
        if named and all(pa.types.is_integer(t) or pa.types.is_timestamp(t) for t in col.types):
            out.append(col.name)
    return out


def to_toml(d: Description, name: str) -> str:
    """The starting workload: its columns with UseLast and their types, the key and the
    op column guessed (each with its reason), the batch order as comments."""

    def s(v: str) -> str:
        return json.dumps(v)

    out = [
        f"# A workload described from the footers of {d.folder} (contest dataset describe).",
        "# Check the key and pick each column's operator (UseLast: the last row's value).",
        "[workload]",
        f"name = {s(name)}",
        f"payload = {s(OWN)}",
        f"batches = {len(d.batches)}",
        f"# key: {d.key_why}",
    ]
    out.append(f"key = [{', '.join(s(k) for k in d.key)}]" if d.key else "# key = [...]")
    out.append(f"# op column: {d.op_why}")
    if d.op_column:
        out += [f"op_column = {s(d.op_column)}", f"op_values = {s(d.op_values)}"]
    out.append("# batch order (one file a batch, natural name order, rows as the file has them):")
    out += [f"#   {b.index}: {b.name} ({_rows(b.rows)})" for b in d.batches]
    out.append(
        "# files_per_batch = 1  # consecutive files one batch, one commit (then set batches)"
    )
    for col in log_positions(d.columns):
        out.append(
            f"# order_column = {s(col)}  # a log position? the files by its ranges, rows by it"
        )
    for col in d.unsupported:
        shown = ", ".join(str(t) for t in _column(d, col).types)
        out.append(f"# {col} ({shown}): no workload type takes it yet, left out")
    payload = [
        c
        for c in d.columns
        if c.name not in d.key and c.name != d.op_column and c.name not in d.unsupported
    ]
    out.append("")
    out.append("[workload.columns]")
    out += [f"{c.name} = {s(operators.USE_LAST)}" for c in payload]
    types = {c.name: _payload_type(c) for c in payload}
    declared = {
        n: t for n, t in types.items() if t and t != operators.get(operators.USE_LAST).default_type
    }
    for k in d.key:
        key_name = type_name(_column(d, k).type)
        if key_name and key_name != "string":
            declared[k] = key_name
    out.append("")
    out.append("[workload.types]")
    out += [f"{n} = {s(t)}" for n, t in declared.items()]
    widened = {c.name: c.widened for c in payload if c.widened and declared.get(c.name)}
    if widened:
        out += ["", "# int32 in the files before this batch, int64 from it", "[workload.widened]"]
        out += [f"{n} = {i}" for n, i in widened.items()]
    return "\n".join(out) + "\n"


def _column(d: Description, name: str) -> Column:
    return next(c for c in d.columns if c.name == name)


def _rows(n: int) -> str:
    return f"{n:,} row" if n == 1 else f"{n:,} rows"
