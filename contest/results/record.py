"""What every typed results record shares: read from a JSON object of any shape its
file has held (checked field by field against the declared types), written back as one.

A record is a frozen dataclass (keyword-only fields). `upgrade` turns an older line's
shape into the current one (a renamed key, a value moved); keys no field knows are kept
in `extra`, so a newer writer's line survives an older reader, and the test over the
committed lines asserts none is left there. Reading a file goes through `read_lines`:
strict (a line that is not a record names its file and line) or lenient (counted and
skipped: the dashboard reads half-written last lines of interrupted runs).
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, Union, get_args, get_origin

from contest.errors import DataError

R = TypeVar("R", bound="Record")
T = TypeVar("T")


class NotARecord(ValueError):
    """A JSON object that is not a record of the type asked for (a field missing or of
    the wrong type)."""


@dataclass(frozen=True, kw_only=True)
class Record:
    """Base of the typed records of the results files."""

    # Keys this version does not know (a newer writer's), kept as they were.
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    # What a line's author calls the record in an error ("a scale record").
    what: ClassVar[str] = "record"

    @classmethod
    def upgrade(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """An older line's shape as the current one; the default: as it is."""
        return raw

    @classmethod
    def from_dict(cls: type[R], raw: Mapping[str, Any]) -> R:
        if not isinstance(raw, Mapping):
            raise NotARecord(f"not a JSON object but {type(raw).__name__}")
        data = cls.upgrade(dict(raw))
        hints = _hints(cls)
        kwargs: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name == "extra":
                continue
            if f.name not in data:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise NotARecord(f"no {f.name!r}")
                continue
            value = _convert(data[f.name], hints[f.name])
            if not conforms(value, hints[f.name]):
                raise NotARecord(f"{f.name!r} is {data[f.name]!r}, not {_name(hints[f.name])}")
            kwargs[f.name] = value
        names = {f.name for f in dataclasses.fields(cls)}
        extra = {k: v for k, v in data.items() if k not in names or k == "extra"}
        return cls(**kwargs, extra=extra)

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of this record (nested records as objects), unknown keys kept."""
        out: dict[str, Any] = dict(self.extra)
        for f in dataclasses.fields(self):
            if f.name != "extra":
                out[f.name] = _plain(getattr(self, f.name))
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


def _convert(value: Any, hint: Any) -> Any:
    """Nested records built from their objects; everything else as it is."""
    if _is_union(hint):
        for arg in get_args(hint):
            if arg is not type(None) and value is not None:
                converted = _convert(value, arg)
                if converted is not value:
                    return converted
        return value
    if isinstance(hint, type) and issubclass(hint, Record) and isinstance(value, Mapping):
        return hint.from_dict(value)
    origin, args = get_origin(hint), get_args(hint)
    if origin in (list, tuple) and isinstance(value, list) and args:
        return [_convert(v, args[0]) for v in value]
    if origin in (dict, Mapping) and isinstance(value, Mapping) and len(args) == 2:
        return {k: _convert(v, args[1]) for k, v in value.items()}
    return value


def conforms(value: Any, hint: Any) -> bool:
    """Whether a JSON value is of the declared type (an int is a float; a bool is
    neither)."""
    if hint is Any:
        return True
    if _is_union(hint):
        return any(conforms(value, a) for a in get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    origin, args = get_origin(hint), get_args(hint)
    if origin in (list, tuple):
        return isinstance(value, list) and all(conforms(v, args[0]) for v in value)
    if origin in (dict, Mapping):
        return isinstance(value, Mapping) and all(
            isinstance(k, str) and conforms(v, args[1]) for k, v in value.items()
        )
    return isinstance(value, hint)


def _name(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def read_lines(path: Path, parse: Callable[[dict[str, Any]], T], what: str = "record") -> list[T]:
    """Every record of a JSON-lines file, in file order; a line that is not one raises
    a DataError naming the file and line."""
    records, bad = _read(path, parse, what, strict=True)
    return records


def read_lenient(path: Path, parse: Callable[[dict[str, Any]], T]) -> tuple[list[T], int]:
    """The records of a JSON-lines file, and how many non-blank lines were not one (an
    interrupted run's half-written last line): what the dashboard shows and counts."""
    return _read(path, parse, "record", strict=False)


def _read(
    path: Path, parse: Callable[[dict[str, Any]], T], what: str, strict: bool
) -> tuple[list[T], int]:
    out: list[T] = []
    bad = 0
    with path.open(encoding="utf-8", errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise NotARecord(f"not a JSON object but {type(obj).__name__}")
                out.append(parse(obj))
            except (json.JSONDecodeError, ValueError, TypeError) as exc:
                if strict:
                    raise DataError(f"{path}:{n}: not a {what}: {exc}") from None
                bad += 1
    return out, bad


def append_lines(path: Path, records: typing.Iterable[Record], sort_keys: bool = False) -> None:
    """Append records as JSON lines (the folder made when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        for r in records:
            fh.write(json.dumps(r.to_dict(), sort_keys=sort_keys, default=str) + "\n")
