"""Workloads: the shape of the data as configuration (`[workload]`), and the named ones.

A workload file is TOML holding one `[workload]` table (the keys of
`contest.config.WorkloadConfig`), so (without phases: `[[phase]]`, `[longevity]`,
read by contest/workload/plan.py) it is also a valid `--config` file. The named ones
live in the checkout's `workloads/` folder, shipped inside the package as
`contest.workloads` (like `sql/` as `meta.sql`), so an installed package finds them too.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

from contest.config import Config, WorkloadConfig
from contest.config.validation import register_check
from contest.data import operators
from contest.data.batches import COLUMNS, SCHEMA, SchemaRule
from contest.data.changes import KEY_TYPE_NAMES, check_changes, key_type
from contest.errors import ConfigError, DataError, toml_error

DEFAULT = "contest"
# workload.payload: the contest's seven payload columns then `columns`, or a user's own
# (exactly `columns`).
PAYLOADS = (DEFAULT, OWN := "own")
# workload.types: the column types a workload may name for a column (a user's data).
TYPES: dict[str, pa.DataType] = {
    "int32": pa.int32(),
    "int64": pa.int64(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "string": pa.string(),
    "binary": pa.binary(),
    "bool": pa.bool_(),
}


def workload_type(name: str) -> pa.DataType | None:
    """A `workload.types` name's Arrow type, or None: one of `TYPES`, or a decimal(P,S)
    (P at most 38), date, timestamp (microseconds, no zone) or timestamptz
    (microseconds, UTC), the operator registry's names for a user's other types."""
    if name in TYPES:
        return TYPES[name]
    try:
        typ = operators.arrow_type(name)
    except (KeyError, ValueError):
        return None
    return typ if not pa.types.is_decimal(typ) or 0 < typ.precision <= 38 else None


TYPE_NAMES = f"{', '.join(TYPES)}, decimal(P,S), date, timestamp, timestamptz"

# The contest's merge contract and the operators a workload's extra column may name:
# the operator registry's (contest/data/operators.py).
CONTRACT_OPERATORS: dict[str, str] = dict(operators.CONTRACT)
OPERATOR_NAMES = operators.OPERATOR_NAMES


def check_columns(cfg: Config) -> None:
    """A workload's extra columns: new lower-case names, each with a known operator.
    Registered with the config's validation (`register_check`), which cannot import
    the data layer."""
    w = cfg.workload
    if w.payload not in PAYLOADS:
        raise ConfigError(f"workload.payload: {w.payload!r} is not one of {', '.join(PAYLOADS)}")
    for col, op in w.columns.items():
        if not col.isidentifier() or col.lower() != col:
            raise ConfigError(f"workload.columns.{col}: a column name is lower-case a-z, 0-9, _")
        if col in COLUMNS and w.payload != OWN:
            raise ConfigError(f"workload.columns.{col}: a contest column already")
        if op not in OPERATOR_NAMES:
            raise ConfigError(
                f"workload.columns.{col}: {op!r} is not one of {', '.join(OPERATOR_NAMES)}"
            )
    for col, name in w.types.items():
        typ = workload_type(name)
        if typ is None:
            raise ConfigError(f"workload.types.{col}: {name!r} is not one of {TYPE_NAMES}")
        merged = w.columns.get(col)
        if merged is None and col not in w.key:
            raise ConfigError(f"workload.types.{col}: neither a key nor a workload.columns column")
        if merged is not None and not operators.get(merged).accepts(typ):
            raise ConfigError(f"workload.types.{col}: {merged} does not take a {name} column")

    for key, table in (("added", cfg.workload.added), ("widened", cfg.workload.widened)):
        for col, batch in table.items():
            where = f"workload.{key}.{col}"
            if col not in cfg.workload.columns:
                raise ConfigError(f"{where}: not one of the workload's extra columns")
            if not 0 < batch < cfg.workload.batches:
                raise ConfigError(
                    f"{where}: batch {batch} is not one of 1-{cfg.workload.batches - 1}"
                )
    for col in cfg.workload.widened:
        if column_type(cfg.workload.columns[col], cfg.workload.types.get(col)) != pa.int64():
            raise ConfigError(f"workload.widened.{col}: only an int64 column is widened")


register_check("workload.columns", check_columns)
register_check(
    "workload.op_values", lambda cfg: check_changes(cfg.workload, contract_operators(cfg.workload))
)


def named() -> list[str]:
    """The names of the workloads shipped with the package."""
    folder = resources.files("contest.workloads")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def workload_settings(spec: str) -> dict[str, Any]:
    """A workload by name (`hot-keys`) or file (`my.toml`) as dotted config keys
    (`workload.batches`, ...), its name included (the file's stem unless it sets one)."""
    path = Path(spec)
    if spec.endswith(".toml") or path.is_file():
        if not path.is_file():
            raise ConfigError(f"workload file not found: {path}")
        text, where, stem = path.read_text(), str(path), path.stem
    else:
        res = resources.files("contest.workloads") / f"{spec}.toml"
        if not res.is_file():
            raise ConfigError(
                f"no workload named {spec!r} (named: {', '.join(named())}; or give a .toml file)"
            )
        text, where, stem = res.read_text(), f"workloads/{spec}.toml", spec
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(toml_error(where, exc)) from None
    # Its phases (`[[phase]]`, `[longevity]`) are read by contest.workload.plan.
    extra = sorted(set(data) - {"workload", "phase", "longevity"})
    if extra or not isinstance(data.get("workload", {}), dict):
        raise ConfigError(
            f"{where}: a workload file holds a [workload] table and its phases, not {extra}"
        )
    body = dict(data.get("workload", {}))
    body.setdefault("name", stem)
    return {f"workload.{k}": v for k, v in body.items()}


def is_default(w: WorkloadConfig) -> bool:
    """The contest's shape (whatever the label says)."""
    return dataclasses.replace(w, name=DEFAULT) == WorkloadConfig()


def cache_label(w: WorkloadConfig) -> str:
    """A folder-name-safe key of a shape: '' for the contest's (so caches made before
    workloads existed stay valid), else the name and a digest of every setting but the
    two that say how a folder's files are read as batches (contest/data/staging.py)."""
    w = dataclasses.replace(w, files_per_batch=1, order_column="")
    if is_default(w):
        return ""
    settings = json.dumps(_settings(w), sort_keys=True)
    digest = hashlib.sha256(settings.encode()).hexdigest()[:10]
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in w.name)[:40]
    return f"{safe}-{digest}"


# Settings added after workloads were cached: left out of a cache's key while they hold
# their default, so the data cached before them keeps its folder.
_LATER_SETTINGS = (
    "op_column",
    "op_values",
    "key",
    "delete_share",
    "reinsert_share",
    "streams",
    "payload",
    "types",
    "files_per_batch",  # (and order_column: how a folder's files are read, never in a key)
    "order_column",
)


def _settings(w: WorkloadConfig) -> dict[str, Any]:
    default = WorkloadConfig()
    settings = dataclasses.asdict(w)
    for name in _LATER_SETTINGS:
        if settings[name] == getattr(default, name):
            del settings[name]
    return settings


def column_type(op: str, declared: str | None = None) -> pa.DataType:
    """An extra column's type: the one declared (`workload.types`), else its operator's
    (the registry's `default_type`)."""
    if declared:
        typ = workload_type(declared)
        if typ is None:
            raise ConfigError(f"workload type {declared!r} is not one of {TYPE_NAMES}")
        return typ
    return operators.arrow_type(operators.get(op).default_type)


def workload_schema(
    w: WorkloadConfig, key_types: Mapping[str, pa.DataType] | None = None
) -> pa.Schema:
    """The batches' schema: the contest's columns, then the workload's extra ones. With
    another key (`workload.key`): the key's columns first (of `key_types`, the types the
    files have; string when unknown), then every payload column. The op column is not
    in it: it is no payload column and not in the result."""
    extra = [pa.field(c, column_type(op, w.types.get(c))) for c, op in w.columns.items()]
    fields = [*SCHEMA, *extra] if w.payload != OWN else extra
    if (
        w.payload != OWN
        and list(w.key) == ["uuid"]
        and (key_types is None or key_types.get("uuid") == pa.string())
    ):
        return pa.schema(fields)
    types = {f.name: f.type for f in fields}
    types.update({k: column_type("", w.types[k]) for k in w.key if k in w.types})
    keys = [pa.field(k, (key_types or {}).get(k, types.get(k, pa.string()))) for k in w.key]
    payload = [
        pa.field(c, types.get(c) or column_type(op)) for c, op in contract_operators(w).items()
    ]
    return pa.schema([*keys, *payload])


def batch_schema(w: WorkloadConfig, index: int) -> pa.Schema:
    """The schema batch `index` is written with: the newest (`workload_schema`) less the
    columns added after it, the widened ones still int32 before their batch. The oracle
    and every reader read each batch under the newest schema (NULL for a column it
    lacks, int32 read as int64)."""
    fields = [
        pa.field(f.name, pa.int32()) if index < w.widened.get(f.name, 0) else f
        for f in workload_schema(w)
        if index >= w.added.get(f.name, 0)
    ]
    return pa.schema(fields)


@dataclass
class BatchColumns(SchemaRule):
    """Each batch file's columns checked against the workload (what `discover` asks):
    every key column, of a key type (the same in every file); the op column when the
    workload has one, a string; and any of the payload columns, each of its batch's type
    (`batch_schema`). A file lacking payload columns is partial: recorded here (with the
    columns it lacks), for the oracle's change path and for `change_refusal`. A file
    holding only the key and the op column (deletes) counts as partial: its rows' kinds
    are not read here. Anything else is refused in one line naming the file."""

    w: WorkloadConfig
    # Batch index -> the payload columns its file lacks.
    partial: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # Each key column's arrow type and key-type name, as the files have it.
    key_arrow: dict[str, pa.DataType] = field(default_factory=dict)
    key_types: dict[str, str] = field(default_factory=dict)

    def check(self, path: str, index: int, actual: pa.Schema, rows: int = 0) -> None:
        names = actual.names
        for col in self.w.key:
            self._key(path, actual, col, rows)
        op = self.w.op_column
        if op:
            if op not in names:
                raise DataError(f"{path}: no op column {op!r} (workload.op_column)")
            typ = actual.field(op).type
            if not (pa.types.is_string(typ) or pa.types.is_large_string(typ)):
                raise DataError(f"{path}: op column {op!r} is {typ}, not a string")
        payload = {f.name: f.type for f in batch_schema(self.w, index) if f.name not in self.w.key}
        extra = [n for n in names if n not in payload and n not in self.w.key and n != op]
        if extra:
            raise DataError(
                f"{path}: unexpected column(s) {', '.join(extra)} (a workload's extra columns "
                f"or op column? give its --workload; expected {', '.join(payload)})"
            )
        for name in names:
            want = payload.get(name)
            got = actual.field(name).type
            if want is not None and got != want and not _same_string(got, want):
                raise DataError(
                    f"{path}: column {name} is {got}, expected {want} ({rows:,} row(s))"
                )
        missing = tuple(c for c in payload if c not in names)
        if missing:
            self.partial[index] = missing

    def _key(self, path: str, actual: pa.Schema, col: str, rows: int = 0) -> None:
        if col not in actual.names:
            raise DataError(
                f"{path}: no key column {col!r} (workload.key = {list(self.w.key)}; "
                f"{rows:,} row(s) without it)"
            )
        typ = actual.field(col).type
        found = key_type(typ)
        if found is None:
            raise DataError(f"{path}: key column {col!r} is {typ}; a key is {KEY_TYPE_NAMES}")
        first = self.key_types.setdefault(col, found.name)
        if first != found.name:
            raise DataError(
                f"{path}: key column {col!r} is {found.name}, an earlier batch's {first}"
            )
        self.key_arrow.setdefault(col, typ)

    def table_schema(self) -> pa.Schema:
        """The union of the files' columns under the newest schema: the key's (as the
        files have them), then every payload column (a column no file holds included:
        NULL for every key). A table of change data is created with it."""
        return workload_schema(self.w, self.key_arrow)


def _same_string(got: pa.DataType, want: pa.DataType) -> bool:
    return pa.types.is_large_string(got) and pa.types.is_string(want)


def schema_of_batch(w: WorkloadConfig) -> BatchColumns:
    """What `discover` checks each batch against: the workload's columns, a file holding
    some of the payload columns (a partial batch) or columns of an earlier schema (a
    workload that evolves it) included (`BatchColumns`)."""
    return BatchColumns(w)


def null_overwriting(w: WorkloadConfig) -> tuple[str, ...]:
    """The payload columns whose operator lets a present NULL overwrite (UseLast): with
    partial batches, a format must tell such a NULL from an absent column."""
    return tuple(c for c, op in contract_operators(w).items() if operators.get(op).null_overwrites)


def contract_operators(w: WorkloadConfig) -> dict[str, str]:
    """Every non-key column's merge operator: the contest's, then the extra columns' (a
    contest column made a key column, by `workload.key`, is no longer merged)."""
    ops = dict(w.columns) if w.payload == OWN else {**CONTRACT_OPERATORS, **w.columns}
    return {col: op for col, op in ops.items() if col not in w.key}
