"""Change data: how a batch's rows change the table beyond an upsert.

Three rules widen the contract (README, "The data and the contract"): a row kind per row
(insert, update, delete, in LakeSoul's or Debezium's spelling), batch files that hold
the key and only some of the payload columns, and a key of one or two columns of a few
types. The spellings and the key types are data here (`ROW_KINDS`, `KEY_TYPES`), read by
the oracle, the configuration's check and, later, every engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import pyarrow as pa

from contest.config import Config, WorkloadConfig
from contest.data.operators import DECIMAL, family
from contest.errors import ConfigError, DataError

INSERT, UPDATE, DELETE = "insert", "update", "delete"
LAKESOUL, DEBEZIUM = "lakesoul", "debezium"

# workload.op_values -> {value in the op column: the row kind it means}. LakeSoul's CDC
# column spells the kind out; Debezium's `op` field says c(reate), r(ead: a snapshot's
# row, an insert to whoever replays it), u(pdate), d(elete).
ROW_KINDS: dict[str, dict[str, str]] = {
    LAKESOUL: {"insert": INSERT, "update": UPDATE, "delete": DELETE},
    DEBEZIUM: {"c": INSERT, "r": INSERT, "u": UPDATE, "d": DELETE},
}

# A 16-byte binary key (a UUID's bytes, a hash) is that many bytes in every row.
BINARY_KEY_BYTES = 16


@dataclass(frozen=True)
class KeyType:
    """A type a key column may have: its name in messages, the arrow types that are it,
    and DuckDB's type for it (the result keeps it: a binary key stays binary)."""

    name: str
    accepts: Callable[[pa.DataType], bool]
    duckdb: str
    # Its values' byte length is checked row by row (a variable-width binary column may
    # hold any length; a fixed-width one passes).
    checks_length: bool = False


def _is_binary16(typ: pa.DataType) -> bool:
    if pa.types.is_fixed_size_binary(typ):
        return typ.byte_width == BINARY_KEY_BYTES
    return pa.types.is_binary(typ) or pa.types.is_large_binary(typ)


KEY_TYPES: tuple[KeyType, ...] = (
    KeyType("string", lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "VARCHAR"),
    KeyType("int32", pa.types.is_int32, "INTEGER"),
    KeyType("int64", pa.types.is_int64, "BIGINT"),
    KeyType(
        "16-byte binary",
        _is_binary16,
        "BLOB",
        checks_length=True,
    ),
)
KEY_TYPE_NAMES = ", ".join(t.name for t in KEY_TYPES)


def key_type(typ: pa.DataType) -> KeyType | None:
    """The key type an arrow type is, or None when a key may not have it."""
    return next((k for k in KEY_TYPES if k.accepts(typ)), None)


@dataclass(frozen=True)
class Changes:
    """What the rows of a batch mean: the key's columns, the column of row kinds ("" =
    every row an upsert) and its spelling, and whether rows with a NULL key part are
    dropped (else refused)."""

    key: tuple[str, ...] = ("uuid",)
    op_column: str = ""
    op_values: str = LAKESOUL
    drop_null_keys: bool = False

    @property
    def upserts_only(self) -> bool:
        return not self.op_column

    @property
    def contest_key(self) -> bool:
        """The contest's own key, `uuid` alone."""
        return self.key == ("uuid",)

    @property
    def spelling(self) -> dict[str, str]:
        return spelling(self.op_values)

    @property
    def delete_values(self) -> tuple[str, ...]:
        """The op column's values that delete (the kinds' order in the registry)."""
        return tuple(v for v, kind in self.spelling.items() if kind == DELETE)


def spelling(op_values: str) -> dict[str, str]:
    """The op column's values and their kinds; an unknown spelling in one line."""
    try:
        return ROW_KINDS[op_values]
    except KeyError:
        raise ConfigError(
            f"workload.op_values: {op_values!r} is not one of {', '.join(ROW_KINDS)}"
        ) from None


def spelled(op_values: str) -> dict[str, str]:
    """Each row kind's value in a spelling (its first in the registry: Debezium's
    insert is `c`), for results that name a kind (a changes read's op column)."""
    out: dict[str, str] = {}
    for value, kind in spelling(op_values).items():
        out.setdefault(kind, value)
    return out


def changes_of(cfg: Config) -> Changes:
    """The change rules a configuration sets (`[workload]`, `write.drop_null_keys`)."""
    w = cfg.workload
    return Changes(tuple(w.key), w.op_column, w.op_values, cfg.write.drop_null_keys)


def declares_changes(cfg: Config) -> bool:
    """The configuration declares change data (an op column, or another key than the
    contest's `uuid`): what a stream, whose files are not known beforehand, goes by."""
    rules = changes_of(cfg)
    return not (rules.upserts_only and rules.contest_key)


def row_kind(rules: Changes, value: str | None, where: str) -> str:
    """The kind of one op value; any other value is refused in one line naming `where`
    (a file) and the value."""
    kind = rules.spelling.get(value) if value is not None else None
    if kind is None:
        shown = "NULL" if value is None else repr(value)
        raise DataError(
            f"{where}: op column {rules.op_column!r} holds {shown}, not one of "
            f"{', '.join(rules.spelling)} (workload.op_values = {rules.op_values!r})"
        )
    return kind


def check_changes(w: WorkloadConfig, payload: Mapping[str, str]) -> None:
    """The op column's spelling known, and the op column none of the payload columns
    (`payload`: every non-key column's operator)."""
    spelling(w.op_values)
    if w.op_column and w.op_column in payload:
        raise ConfigError(f"workload.op_column: {w.op_column!r} is a payload column")


# -- what an engine can express --------------------------------------------------------


@dataclass(frozen=True)
class ChangeSupport:
    """The change data a format or engine takes, each by the mechanism named (the
    feature table in the documentation is drawn from these): "" = it cannot, and change
    data that needs it is refused in one line before any data is written. The default
    takes nothing beyond the contest's upserts keyed by one string column."""

    # How a delete row reaches the table (e.g. "MERGE ... WHEN MATCHED THEN DELETE").
    deletes: str = ""
    # Without `deletes`: the mechanism it lacks, said in its refusal and the feature
    # table (default: no delete mechanism at all).
    no_deletes: str = ""
    # How a batch that holds only some payload columns leaves the others as they were.
    partial_columns: str = ""
    # Whether, with partial columns, a NULL that overwrites (UseLast) is told from an
    # absent column; False: such an operator with partial columns is refused.
    absent_is_not_null: bool = False
    # The key types it keys by (`KEY_TYPES` names) and whether a key may have two columns.
    key_types: tuple[str, ...] = ("string",)
    composite_keys: bool = False
    # A user's payload types it cannot store, each (the operator registry's type name,
    # e.g. "timestamp" for one without a zone, and the mechanism it lacks).
    refused_types: tuple[tuple[str, str], ...] = ()


def change_refusal(
    support: ChangeSupport,
    rules: Changes,
    key_types: Mapping[str, str],
    partial: bool,
    null_overwriting: tuple[str, ...],
    who: str,
    payload_types: Mapping[str, str] | None = None,
) -> str | None:
    """Why `who` cannot take this change data, in one line naming the mechanism it lacks,
    or None. `key_types`: each key column's key-type name; `partial`: some batch holds
    only some payload columns; `null_overwriting`: the columns whose operator lets a
    NULL overwrite (UseLast); `payload_types`: each payload column's type name."""
    refused = dict(support.refused_types)
    for col, typ in (payload_types or {}).items():
        # A name as the registry gives it (timestamp: no zone), or "decimal" for any.
        why = refused.get(typ) or (refused.get(DECIMAL) if family(typ) == DECIMAL else None)
        if why:
            return f"{who}: cannot store column {col!r} of type {typ}: {why}"
    if rules.op_column and not support.deletes:
        lacks = support.no_deletes or "it has no delete mechanism"
        return f"{who}: cannot delete rows (op column {rules.op_column!r}): {lacks}"
    if len(rules.key) > 1 and not support.composite_keys:
        cols = ", ".join(rules.key)
        return f"{who}: cannot key by {len(rules.key)} columns ({cols}): it keys by one column"
    for col, typ in key_types.items():
        if typ not in support.key_types:
            return (
                f"{who}: cannot key by a {typ} column ({col}): it keys by "
                f"{', '.join(support.key_types)}"
            )
    if partial and not support.partial_columns:
        return (
            f"{who}: cannot take batches holding only some columns: "
            "it has no partial-update mechanism"
        )
    if partial and null_overwriting and not support.absent_is_not_null:
        return (
            f"{who}: cannot tell a NULL from an absent column, which the NULL-overwriting "
            f"operator of {', '.join(null_overwriting)} needs with partial columns "
            f"(its partial updates: {support.partial_columns})"
        )
    return None
