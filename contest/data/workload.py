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
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

from contest.config import Config, WorkloadConfig
from contest.config.validation import register_check
from contest.data import operators
from contest.data.batches import COLUMNS, SCHEMA
from contest.data.changes import check_changes
from contest.errors import ConfigError, toml_error

DEFAULT = "contest"
# The contest's merge contract and the operators a workload's extra column may name:
# the operator registry's (contest/data/operators.py).
CONTRACT_OPERATORS: dict[str, str] = dict(operators.CONTRACT)
OPERATOR_NAMES = operators.OPERATOR_NAMES


def check_columns(cfg: Config) -> None:
    """A workload's extra columns: new lower-case names, each with a known operator.
    Registered with the config's validation (`register_check`), which cannot import
    the data layer."""
    for col, op in cfg.workload.columns.items():
        if not col.isidentifier() or col.lower() != col:
            raise ConfigError(f"workload.columns.{col}: a column name is lower-case a-z, 0-9, _")
        if col in COLUMNS:
            raise ConfigError(f"workload.columns.{col}: a contest column already")
        if op not in OPERATOR_NAMES:
            raise ConfigError(
                f"workload.columns.{col}: {op!r} is not one of {', '.join(OPERATOR_NAMES)}"
            )

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
        if operators.get(cfg.workload.columns[col]).default_type != operators.INT64:
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
    workloads existed stay valid), else the name and a digest of every setting."""
    if is_default(w):
        return ""
    settings = json.dumps(_settings(w), sort_keys=True)
    digest = hashlib.sha256(settings.encode()).hexdigest()[:10]
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in w.name)[:40]
    return f"{safe}-{digest}"


# Settings added after workloads were cached: left out of a cache's key while they hold
# their default, so the data cached before them keeps its folder.
_LATER_SETTINGS = ("op_column", "op_values", "key")


def _settings(w: WorkloadConfig) -> dict[str, Any]:
    default = WorkloadConfig()
    settings = dataclasses.asdict(w)
    for name in _LATER_SETTINGS:
        if settings[name] == getattr(default, name):
            del settings[name]
    return settings


def column_type(op: str) -> pa.DataType:
    """An extra column's type: its operator's (the registry's `default_type`)."""
    return operators.arrow_type(operators.get(op).default_type)


def workload_schema(w: WorkloadConfig) -> pa.Schema:
    """The batches' schema: the contest's columns, then the workload's extra ones."""
    return pa.schema([*SCHEMA, *(pa.field(c, column_type(op)) for c, op in w.columns.items())])


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


def schema_of_batch(w: WorkloadConfig) -> pa.Schema | Callable[[int], pa.Schema]:
    """What `discover` checks each batch against: one schema, or per batch when the
    workload evolves its schema."""
    if not (w.added or w.widened):
        return workload_schema(w)
    return lambda index: batch_schema(w, index)


def contract_operators(w: WorkloadConfig) -> dict[str, str]:
    """Every non-key column's merge operator: the contest's, then the extra columns' (a
    contest column made a key column, by `workload.key`, is no longer merged)."""
    ops = {**CONTRACT_OPERATORS, **w.columns}
    return {col: op for col, op in ops.items() if col not in w.key}
