"""A `Config` built in one direction: defaults, file, environment, flags; its variants
(`override`), its TOML and its dictionary."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_type_hints

from contest.config.sections import Config, WorkloadConfig
from contest.config.validation import validate
from contest.errors import ConfigError, key_line, toml_error
from meta.schema import read_lakesoul_properties

# Environment variables and the config key each one sets.
ENV_KEYS = {
    "LAKESOUL_PG_URL": "pg.url",
    "LAKESOUL_PG_USERNAME": "pg.username",
    "LAKESOUL_PG_PASSWORD": "pg.password",
    "CONTEST_STATE_DIR": "state_dir",
    "CONTEST_WORK_DIR": "work_dir",
    "CONTEST_SPARK_MASTER": "spark.master",
    "CONTEST_PG_PORT": "pg.port",
    "CONTEST_RESULTS_DIR": "results_dir",
    # The variables S3 users already set (AWS CLI, SDKs, pyarrow, MinIO's docs).
    "AWS_ENDPOINT_URL": "s3.endpoint",
    "AWS_ACCESS_KEY_ID": "s3.access_key",
    "AWS_SECRET_ACCESS_KEY": "s3.secret_key",
    "AWS_DEFAULT_REGION": "s3.region",
    "AWS_REGION": "s3.region",
}
# The embedded S3 server's endpoint and credentials (mode 0600, under the state folder),
# written by `contest s3 up`, used while it runs when no endpoint is configured.
EMBEDDED_S3_FILE = Path("s3") / "credentials.json"
# LakeSoul's own variable: the properties file its JVM libraries read.
LAKESOUL_HOME = "lakesoul_home"
LAKESOUL_PROPERTIES = {
    "lakesoul.pg.url": "pg.url",
    "lakesoul.pg.username": "pg.username",
    "lakesoul.pg.password": "pg.password",
}


def _coerce(value: Any, typ: Any, key: str) -> Any:
    if typ is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{key}: expected true/false, got {value!r}")
    if typ is int:
        if isinstance(value, bool):
            raise ConfigError(f"{key}: expected an integer, got {value!r}")
        try:
            return int(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{key}: expected an integer, got {value!r}") from None
    if typ is float:
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ConfigError(f"{key}: expected a number, got {value!r}") from None
    if typ is str:
        if isinstance(value, (dict, list)):
            raise ConfigError(f"{key}: expected a string, got {value!r}")
        return str(value)
    if typ == dict[str, str]:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}: expected a table of strings, got {value!r}")
        return {str(k): str(v) for k, v in value.items()}
    if typ == dict[str, int]:
        if not isinstance(value, Mapping):
            raise ConfigError(f"{key}: expected a table of integers, got {value!r}")
        return {str(k): _coerce(v, int, f"{key}.{k}") for k, v in value.items()}
    if typ == list[str]:
        return _string_list(value, key)
    raise ConfigError(f"{key}: unsupported type {typ}")


def _string_list(value: Any, key: str) -> list[str]:
    """A list of strings from TOML's list or a flag's `a,b` (no other value is one)."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{key}: expected a list of strings, got {value!r}")
    return list(value)


def set_key(cfg: Any, dotted: str, value: Any) -> None:
    """Set one dotted key (`spark.master`) on a config being built (private to
    `load_config` and `override`); unknown keys are an error naming the key."""
    parts = dotted.split(".")
    target = cfg
    for i, part in enumerate(parts):
        hints = get_type_hints(type(target))
        if part not in hints:
            raise ConfigError(f"unknown configuration key: {'.'.join(parts[: i + 1])}")
        typ = hints[part]
        if dataclasses.is_dataclass(typ):
            if i == len(parts) - 1:
                if not isinstance(value, Mapping):
                    raise ConfigError(f"{dotted}: expected a table")
                for k, v in value.items():
                    set_key(cfg, f"{dotted}.{k}", v)
                return
            target = getattr(target, part)
            continue
        if i != len(parts) - 1:
            # dict-valued keys take the rest as one key (spark.conf.spark.x.y).
            if typ == dict[str, str]:
                getattr(target, part)[".".join(parts[i + 1 :])] = str(value)
                return
            if typ == dict[str, int]:
                getattr(target, part)[".".join(parts[i + 1 :])] = _coerce(value, int, dotted)
                return
            raise ConfigError(f"unknown configuration key: {dotted}")
        object.__setattr__(target, part, _coerce(value, typ, dotted))
        return


def get_key(cfg: Any, dotted: str) -> Any:
    """The value of one dotted key (`peer.buckets`); a dict-valued key takes the rest
    as one key (`spark.conf.spark.x.y`), None when that entry is not set."""
    value = cfg
    parts = dotted.split(".")
    for i, part in enumerate(parts):
        if isinstance(value, Mapping):
            return value.get(".".join(parts[i:]))
        if not hasattr(value, part):
            raise ConfigError(f"unknown configuration key: {'.'.join(parts[: i + 1])}")
        value = getattr(value, part)
    return value


def unless_set(cfg: Config, mapping: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of `mapping` whose key `cfg` still holds at its built-in value: a
    preset that yields to what a user set (a value set equal to the default cannot be
    told from it, and takes the preset's)."""
    default = Config()
    return {k: v for k, v in mapping.items() if get_key(cfg, k) == get_key(default, k)}


def apply_mapping(cfg: Config, mapping: Mapping[str, Any]) -> None:
    for key, value in mapping.items():
        set_key(cfg, key, value)


def override(cfg: Config, mapping: Mapping[str, Any]) -> Config:
    """A validated variant of `cfg` with dotted keys set (`cfg` is left as it was)."""
    out = copy.deepcopy(cfg)
    apply_mapping(out, mapping)
    validate(out)
    return out


def load_config(
    config_file: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
    preset: Mapping[str, Any] | None = None,
    workload: Mapping[str, Any] | None = None,
) -> Config:
    """Defaults (and a strategy's preset), then the TOML file, then a named workload
    (`--workload`: its `workload.*` keys replace the whole section), then the
    environment, then explicit overrides."""
    cfg = Config()
    for key, value in (preset or {}).items():
        set_key(cfg, key, value)
    if config_file is not None:
        path = Path(config_file)
        if not path.is_file():
            raise ConfigError(f"config file not found: {path}")
        text = path.read_text()
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(toml_error(path, exc)) from None
        try:
            apply_mapping(cfg, data)
        except ConfigError as exc:  # a key or value of this file: name the file and line
            raise ConfigError(f"{path}{key_line(text, str(exc))}: {exc}") from None
    if workload is not None:
        object.__setattr__(cfg, "workload", WorkloadConfig())
        apply_mapping(cfg, workload)
    env = env or {}
    if env.get(LAKESOUL_HOME):
        apply_mapping(cfg, lakesoul_home_settings(Path(env[LAKESOUL_HOME])))
    for var, key in ENV_KEYS.items():
        if env.get(var):
            set_key(cfg, key, env[var])
    if overrides:
        for key, value in overrides.items():
            set_key(cfg, key, value)
    if not cfg.s3.configured:
        apply_mapping(cfg, embedded_s3_settings(cfg.state_path))

    validate(cfg)
    return cfg


def embedded_s3_settings(state: Path) -> dict[str, str]:
    """The embedded S3 server's settings (s3.*), or none when it was not started."""
    path = state / EMBEDDED_S3_FILE
    if not path.is_file():
        return {}
    info = json.loads(path.read_text())
    try:
        os.kill(int(info["pid"]), 0)
    except ProcessLookupError:
        return {}  # stopped without `contest s3 down`
    except PermissionError:
        pass
    return {f"s3.{k}": str(info[k]) for k in ("endpoint", "region", "access_key", "secret_key")}


def lakesoul_home_settings(path: Path) -> dict[str, str]:
    """PostgreSQL settings from LakeSoul's properties file (the `lakesoul_home` file)."""
    if not path.is_file():
        raise ConfigError(f"{LAKESOUL_HOME}={path}: no such properties file")
    props = read_lakesoul_properties(path)
    return {key: props[name] for name, key in LAKESOUL_PROPERTIES.items() if props.get(name)}


def to_toml(cfg: Config, *, secrets: bool = False) -> str:
    """The resolved configuration as TOML that `load_config` reads back (the password
    only when asked: it travels by environment to child processes)."""

    def scalar(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'

    top, sections = [], []
    for f in dataclasses.fields(cfg):
        value = getattr(cfg, f.name)
        if not dataclasses.is_dataclass(value):
            top.append(f"{f.name} = {scalar(value)}")
            continue
        lines, tables = [f"[{f.name}]"], []
        for sub in dataclasses.fields(value):
            v = getattr(value, sub.name)
            if not sub.repr and not secrets:
                continue  # passwords and keys travel by environment
            if isinstance(v, dict):
                tables.append(f"[{f.name}.{sub.name}]")
                tables.extend(f"{scalar(k)} = {scalar(x)}" for k, x in v.items())
            elif isinstance(v, list):
                lines.append(f"{sub.name} = [{', '.join(scalar(x) for x in v)}]")
            else:
                lines.append(f"{sub.name} = {scalar(v)}")
        sections.append("\n".join(lines + tables))
    return "\n".join(top) + "\n\n" + "\n\n".join(sections) + "\n"


def absolute_paths(cfg: Config) -> Config:
    """The same config with its folders absolute: for a child process in another folder."""
    return dataclasses.replace(
        cfg,
        state_dir=str(Path(cfg.state_dir).absolute()),
        work_dir=str(Path(cfg.work_dir).absolute()),
        results_dir=str(Path(cfg.results_dir).absolute()),
    )


def as_dict(cfg: Config) -> dict[str, Any]:
    """For records: everything but the password."""
    data = dataclasses.asdict(cfg)
    data["pg"].pop("password", None)
    data["s3"].pop("access_key", None)
    data["s3"].pop("secret_key", None)
    return data
