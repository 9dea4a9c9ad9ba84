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
from importlib import resources
from pathlib import Path
from typing import Any

import pyarrow as pa

from contest.config import Config, WorkloadConfig
from contest.config.validation import register_check
from contest.data import operators
from contest.data.batches import COLUMNS, SCHEMA
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


register_check("workload.columns", check_columns)


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
    settings = json.dumps(dataclasses.asdict(w), sort_keys=True)
    digest = hashlib.sha256(settings.encode()).hexdigest()[:10]
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in w.name)[:40]
    return f"{safe}-{digest}"


def column_type(op: str) -> pa.DataType:
    """An extra column's type: its operator's (the registry's `default_type`)."""
    return operators.arrow_type(operators.get(op).default_type)


def workload_schema(w: WorkloadConfig) -> pa.Schema:
    """The batches' schema: the contest's columns, then the workload's extra ones."""
    return pa.schema([*SCHEMA, *(pa.field(c, column_type(op)) for c, op in w.columns.items())])


def contract_operators(w: WorkloadConfig) -> dict[str, str]:
    """Every non-key column's merge operator: the contest's, then the extra columns'."""
    return {**CONTRACT_OPERATORS, **w.columns}
