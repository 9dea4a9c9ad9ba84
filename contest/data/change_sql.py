"""The oracle's SQL for change data: row kinds, batch files of some of the payload
columns, keys of one or two columns (contest/data/changes.py).

Per key, in (batch version, row position) order: the rows up to the key's last delete
are forgotten, and each payload column folds, with its operator, the rows after it whose
file holds that column. A column absent from a file gives those rows no value at all
(its value, and its order key, NULL): every operator's DuckDB aggregate skips such a row
(tests/contest/data/test_change_oracle.py holds each operator to it), while a NULL the
file holds keeps its order key and follows the operator's NULL rule. A key whose last
row is a delete folds no row: it is absent.

Nothing here runs SQL: `plan` reads the files' footers, the rest builds text the oracle
(contest/data/oracle.py) runs, so each piece is checked on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data import operators as registry
from contest.data.batches import Batch
from contest.data.changes import KEY_TYPE_NAMES, Changes, KeyType, key_type
from contest.errors import DataError, MergeOperatorError

# version * 2^40 + row position (the oracle's order key): positions stay below 2^40.
ORDER = "(v.version::HUGEINT * 1099511627776 + p.file_row_number)"
READ = "read_parquet($files, filename = true, file_row_number = true, union_by_name = true)"
# The table of the batch files: each one's version and which partial columns it holds.
FILES_TABLE = "batch_files"


@dataclass(frozen=True)
class ChangePlan:
    """What the oracle needs to know of the files before any row is read."""

    rules: Changes
    operators: dict[str, str]
    # Each key column's type, as the files have it.
    key_types: dict[str, KeyType]
    # Payload columns some files hold and others not, and which files hold each.
    partial: dict[str, frozenset[str]]
    # Payload columns no file holds (NULL for every key).
    missing: frozenset[str]
    # Every file's path as DuckDB reads it -> its name in messages (the batch's own).
    names: dict[str, str]
    # A payload column's type name (int64, float64, string) as the files have it, when
    # not its operator's default (a user's data, workload.types); absent: the default.
    types: dict[str, str] = dataclasses.field(default_factory=dict)

    def type_of(self, col: str) -> str:
        return self.types.get(col) or registry.get(self.operators[col]).default_type

    @property
    def key(self) -> tuple[str, ...]:
        return self.rules.key


def needed(rules: Changes, schemas: Sequence[pa.Schema], operators: Mapping[str, str]) -> bool:
    """Whether the data needs the change path: row kinds, another key, or a file that
    lacks a payload column; else the oracle's upsert path computes the same faster."""
    if not (rules.upserts_only and rules.contest_key):
        return True
    return any(col not in schema.names for schema in schemas for col in operators)


def plan(
    batches: Sequence[Batch],
    operators: Mapping[str, str],
    rules: Changes,
    names: Mapping[str, str] | None = None,
) -> ChangePlan:
    """The files' columns checked (every key column of an allowed type, the same in every
    file; the op column a string), each refused in one line naming the file."""
    names = dict(names or {})
    key_types: dict[str, tuple[KeyType, pa.DataType, str]] = {}
    holders: dict[str, set[str]] = {col: set() for col in operators}
    types: dict[str, str] = {}
    for b in batches:
        schema = pq.read_schema(b.path)
        where = names.setdefault(str(b.path), str(b.path))
        for col in rules.key:
            found = _key_column(schema, col, where, rules)
            first = key_types.setdefault(col, (*found, where))
            if found[0] is not first[0]:
                raise DataError(
                    f"{where}: key column {col!r} is {found[1]}, {first[2]} has {first[1]}"
                )
        if rules.op_column:
            _op_column(schema, rules.op_column, where)
        for col in operators:
            if col in schema.names:
                holders[col].add(str(b.path))
                types.setdefault(col, registry.type_name(schema.field(col).type))
    every = {str(b.path) for b in batches}
    return ChangePlan(
        rules,
        {col: op for col, op in operators.items() if col not in rules.key},
        {col: found[0] for col, found in key_types.items()},
        {c: frozenset(h) for c, h in holders.items() if h and h != every},
        frozenset(c for c, h in holders.items() if not h),
        names,
        {c: t for c, t in types.items() if c in operators and c not in rules.key},
    )


def _key_column(
    schema: pa.Schema, col: str, where: str, rules: Changes
) -> tuple[KeyType, pa.DataType]:
    if col not in schema.names:
        raise DataError(f"{where}: no key column {col!r} (workload.key = {list(rules.key)})")
    typ = schema.field(col).type
    found = key_type(typ)
    if found is None:
        raise DataError(f"{where}: key column {col!r} is {typ}; a key is {KEY_TYPE_NAMES}")
    return found, typ


def _op_column(schema: pa.Schema, col: str, where: str) -> None:
    if col not in schema.names:
        raise DataError(f"{where}: no op column {col!r} (workload.op_column)")
    typ = schema.field(col).type
    if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
        raise DataError(f"{where}: op column {col!r} is {typ}, not a string")


def quote(name: str) -> str:
    """A column name as a SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def literal(value: object) -> str:
    """A key value as a SQL literal: a string, an integer or bytes."""
    if isinstance(value, bytes):
        return "'" + "".join(f"\\x{b:02x}" for b in value) + "'::BLOB"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    raise DataError(f"a key value of type {type(value).__name__} has no SQL literal")


def files_table(p: ChangePlan) -> str:
    """The CREATE statement of the files' table: each file, its version, and a flag per
    partial column (`h<i>`, in `p.partial`'s order), TRUE where the file holds it."""
    flags = [f"h{i} BOOLEAN" for i in range(len(p.partial))]
    cols = ", ".join(["file VARCHAR", "version BIGINT", *flags])
    return f"CREATE OR REPLACE TEMP TABLE {FILES_TABLE} ({cols})"


def files_rows(p: ChangePlan, batches: Sequence[Batch]) -> list[tuple]:
    """The files' table's rows, in `files_table`'s column order."""
    return [
        (str(b.path), b.version, *(str(b.path) in held for held in p.partial.values()))
        for b in batches
    ]


def checks_sql(p: ChangePlan) -> str:
    """One pass over the rows, a row per file: its rows with a NULL key part (`nulls`),
    with a NULL in each key column (`null_<i>`), with an op value the spelling does not
    know (`bad_ops`, the first of them `bad_op`), with a binary key not 16 bytes long
    (`short_<i>`)."""
    cols = [f"p.{quote(k)}" for k in p.key]
    parts = [
        "p.filename AS file",
        f"count(*) FILTER (WHERE {' OR '.join(c + ' IS NULL' for c in cols)}) AS nulls",
    ]
    parts += [f"count(*) FILTER (WHERE {c} IS NULL) AS null_{i}" for i, c in enumerate(cols)]
    if p.rules.op_column:
        op = f"p.{quote(p.rules.op_column)}"
        known = ", ".join(literal(v) for v in p.rules.spelling)
        bad = f"({op} IS NULL OR {op} NOT IN ({known}))"
        parts.append(f"count(*) FILTER (WHERE {bad}) AS bad_ops")
        parts.append(f"arg_min_null({op}, p.file_row_number) FILTER (WHERE {bad}) AS bad_op")
    for i, (c, col) in enumerate(zip(cols, p.key, strict=True)):
        if p.key_types[col].checks_length:
            parts.append(f"count(*) FILTER (WHERE octet_length({c}) <> 16) AS short_{i}")
    return f"SELECT {', '.join(parts)} FROM {READ} AS p GROUP BY p.filename"


def refusal(p: ChangePlan, row: Mapping[str, object]) -> str | None:
    """The first problem a file's row of `checks_sql` shows, in one line naming the
    file, the column and the count or value; None when there is none."""
    where = p.names.get(str(row["file"]), str(row["file"]))
    for i, col in enumerate(p.key):
        if row[f"null_{i}"] and not p.rules.drop_null_keys:
            return (
                f"{where}: {row[f'null_{i}']} row(s) with a NULL key column {col!r} "
                "(set write.drop_null_keys=true to drop and count them)"
            )
    if row.get("bad_ops"):
        value = "NULL" if row["bad_op"] is None else repr(row["bad_op"])
        return (
            f"{where}: op column {p.rules.op_column!r} holds {value} ({row['bad_ops']} "
            f"row(s)), not one of {', '.join(p.rules.spelling)} "
            f"(workload.op_values = {p.rules.op_values!r})"
        )
    for i, col in enumerate(p.key):
        if row.get(f"short_{i}"):
            return f"{where}: key column {col!r} holds {row[f'short_{i}']} value(s) not 16 bytes"
    return None


def select_sql(p: ChangePlan) -> str:
    """The expected rows: the key's columns, then each payload column folded by its
    operator over the rows after the key's last delete. `{where}` is left open for a
    condition on the rows (`p.` the file's columns)."""
    keys = ", ".join(f"l.{quote(k)}" for k in p.key)
    # A row with a NULL key part is refused before this runs, or dropped here.
    known = " AND ".join(f"l.{quote(k)} IS NOT NULL" for k in p.key)
    aggs = [f"l.{quote(k)} AS {quote(k)}" for k in p.key]
    flags = {col: f"l.h{i}" for i, col in enumerate(p.partial)}
    for col, op in p.operators.items():
        try:
            typ = p.type_of(col)
            value, order = f"l.{quote(col)}", "l.__ord"
            if col in flags:
                value = f"CASE WHEN {flags[col]} THEN {value} END"
                order = f"CASE WHEN {flags[col]} THEN {order} END"
            agg = registry.sql_aggregate(op, value, order, typ)
        except MergeOperatorError as exc:
            raise DataError(
                f"column {col!r}: the oracle knows no operator {op!r} ({exc})"
            ) from None
        aggs.append(f"{agg} AS {quote(col)}")
    return (
        f"WITH src AS ({_source(p)}),\n"
        f"live AS ({_live(p)})\n"
        f"SELECT {', '.join(aggs)}\nFROM live AS l\n"
        f"WHERE {known} AND NOT l.__del AND (l.__cut IS NULL OR l.__ord > l.__cut)\n"
        f"GROUP BY {keys}"
    )


def _source(p: ChangePlan) -> str:
    """Every row: its key, whether it deletes, its order key, each payload column under
    its operator's type, and its file's flags."""
    cols = [f"p.{quote(k)} AS {quote(k)}" for k in p.key]
    if p.rules.op_column:
        deletes = ", ".join(literal(v) for v in p.rules.delete_values)
        cols.append(f"p.{quote(p.rules.op_column)} IN ({deletes}) AS __del")
    else:
        cols.append("FALSE AS __del")
    cols.append(f"{ORDER} AS __ord")
    for col in p.operators:
        typ = registry.sql_type(p.type_of(col))
        value = "NULL" if col in p.missing else f"p.{quote(col)}"
        cols.append(f"CAST({value} AS {typ}) AS {quote(col)}")
    cols.extend(f"v.h{i} AS h{i}" for i in range(len(p.partial)))
    return (
        f"SELECT {', '.join(cols)} FROM {READ} AS p "
        f"JOIN {FILES_TABLE} AS v ON p.filename = v.file {{where}}"
    )


def _live(p: ChangePlan) -> str:
    """The rows beside their key's last delete (`__cut`, NULL when it has none)."""
    if p.rules.upserts_only:
        return "SELECT *, NULL::HUGEINT AS __cut FROM src"
    keys = ", ".join(quote(k) for k in p.key)
    cut = f"max(CASE WHEN __del THEN __ord END) OVER (PARTITION BY {keys})"
    return f"SELECT *, {cut} AS __cut FROM src"


def order_by(p: ChangePlan) -> str:
    return ", ".join(quote(k) for k in p.key)
