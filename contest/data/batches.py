"""The contest's data: schema, batch files, and the version each batch carries."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from contest.config import WorkloadConfig
from contest.errors import DataError
from contest.infra.folders import folder_name, join, kind, list_files, open_input

SCHEMA = pa.schema(
    [
        ("uuid", pa.string()),
        ("ip", pa.string()),
        ("hostname", pa.string()),
        ("requests", pa.int64()),
        ("name", pa.string()),
        ("city", pa.string()),
        ("job", pa.string()),
        ("phonenum", pa.string()),
    ]
)
COLUMNS = tuple(SCHEMA.names)
# The contest's shape, the default workload (`[workload]`): at scale 1 base-0 has 10M
# rows, base-1..10 2M each; 20M distinct keys in 30M rows.
BATCHES = WorkloadConfig.batches
BASE0_ROWS = WorkloadConfig.first_rows
UPDATE_BATCH_ROWS = WorkloadConfig.batch_rows
_FILE_RE = re.compile(r"^base-(\d+)\.parquet$")
# A stream's source folder (`contest stream feed`): its files in number order are the
# batches a stream that consumed them all applied, in that order.
_FEED_RE = re.compile(r"^feed-(\d+)\.parquet$")


class SchemaRule:
    """A check of each batch file's columns that one expected schema cannot say (a
    workload's files may hold some of the payload columns: contest/data/workload.py
    `BatchColumns`); it may record what it found (which batches are partial)."""

    def check(self, path: str, index: int, actual: pa.Schema, rows: int = 0) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class Batch:
    index: int
    path: str  # an absolute local path, or an object-store URI (s3://bucket/prefix/...)
    rows: int
    bytes: int
    version: int
    mtime_ns: int = 0  # when the file was last written (caches key on it)

    @property
    def name(self) -> str:
        """The file's name, `base-<index>.parquet`."""
        return self.path.rsplit("/", 1)[-1]


def batch_rows(scale: float, workload: WorkloadConfig | None = None) -> list[int]:
    """Rows of base-0 .. base-<N-1> at a scale (scale 1 = the workload's sizes; by
    default the contest's)."""
    w = workload or WorkloadConfig()
    if scale <= 0:
        raise DataError(f"scale must be positive, got {scale}")
    first = max(1, round(w.first_rows * scale))
    rest = max(1, round(w.batch_rows * scale))
    return [first] + [rest] * (w.batches - 1)


def parse_versions(spec: str | None, indices: list[int]) -> dict[int, int]:
    """Batch index -> version. `spec`: None (index = version), `0=5,1=3,...` (unlisted
    batches keep their index), or `@file.json` holding {"0": 5, ...}."""
    versions = {i: i for i in indices}
    if spec:
        items: list[tuple[Any, Any]] = []
        if spec.startswith("@"):
            path = Path(spec[1:])
            try:
                raw: Mapping = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise DataError(f"{path}: cannot read versions: {exc}") from None
            items = list(raw.items())
        else:
            for part in spec.split(","):
                if "=" not in part:
                    raise DataError(f"versions: expected INDEX=VERSION, got {part!r}")
                idx, ver = part.split("=", 1)
                items.append((idx, ver))
        for idx, ver in items:
            try:
                idx_i, ver_i = int(idx), int(ver)
            except ValueError:
                raise DataError(f"versions: not integers: {idx}={ver}") from None
            if idx_i not in versions:
                raise DataError(f"versions: no batch base-{idx_i}.parquet in the data")
            versions[idx_i] = ver_i
    check_unique_versions(versions)
    return versions


def check_unique_versions(versions: Mapping[int, int]) -> None:
    seen: dict[int, int] = {}
    for idx, ver in sorted(versions.items()):
        if ver in seen:
            raise DataError(
                f"batches base-{seen[ver]}.parquet and base-{idx}.parquet both have version {ver}"
            )
        seen[ver] = idx


def upto(batches: Sequence[Batch], version: int | None) -> list[Batch]:
    """The batches a table holds as of `version` (those whose version is at most it):
    what a read as of that version must equal. None: all of them."""
    if version is None:
        return list(batches)
    out = [b for b in batches if b.version <= version]
    if not out:
        raise DataError(f"no batch has a version at most {version}")
    return out


def discover(
    data_dir: str | Path,
    versions: str | None = None,
    schema: pa.Schema | Callable[[int], pa.Schema] | SchemaRule | None = SCHEMA,
) -> list[Batch]:
    """The batch files of a data folder (a local path or `s3://bucket/prefix`), checked:
    contiguous base-0..base-N, parquet, and (unless `schema` is None) the contest schema,
    or each batch's own when `schema` is a function of the batch index (a workload that
    evolves its schema), or by a `SchemaRule` (a workload's change data). Raises
    DataError naming the file."""
    root = folder_name(data_dir)  # absolute: Spark's JVM may run in another folder
    if kind(root) != "folder":
        raise DataError(f"{data_dir}: no such data folder")
    entries = list_files(root, folders=True)
    found, stem = {}, "base"
    for pattern, name in ((_FILE_RE, "base"), (_FEED_RE, "feed")):
        found = {int(m.group(1)): e for e in entries if (m := pattern.match(e.name))}
        if found:
            stem = name
            break
    if not found:
        # A user's files (`contest dataset describe`): any *.parquet, in natural name order.
        named = sorted((e for e in entries if e.name.endswith(".parquet")), key=natural_key)
        found, stem = dict(enumerate(named)), ""
    if not found:
        raise DataError(
            f"{root}: no batch files (expected base-0.parquet, base-1.parquet, ..., or a "
            "stream's feed-000000.parquet, ..., or any *.parquet names, in natural order)"
        )
    for i in range(max(found) + 1):
        if i not in found:
            name = f"base-{i}.parquet" if stem == "base" else f"feed-{i:06d}.parquet"
            raise DataError(
                f"{join(root, name)}: missing (batches must be "
                f"{stem}-0..{stem}-{max(found)} without gaps)"
            )
    vmap = parse_versions(versions, sorted(found))
    batches = []
    for i in sorted(found):
        entry = found[i]
        try:
            with open_input(entry.uri) as fh:
                meta = pq.read_metadata(fh)
        except Exception as exc:  # pyarrow raises ArrowInvalid/OSError for non-parquet
            raise DataError(f"{entry.uri}: not a parquet file ({exc.__class__.__name__})") from None
        if isinstance(schema, SchemaRule):
            schema.check(entry.uri, i, meta.schema.to_arrow_schema(), meta.num_rows)
        elif schema is not None:
            want = schema if isinstance(schema, pa.Schema) else schema(i)
            check_schema(entry.uri, meta.schema.to_arrow_schema(), want)
        batches.append(Batch(i, entry.uri, meta.num_rows, entry.size, vmap[i], entry.mtime_ns))
    return batches


def file_digests(batches: Sequence[Batch]) -> list[dict[str, Any]]:
    """Each batch file's name, bytes and SHA-256 (read a megabyte at a time), never its
    content: what a record says of a user's data."""
    out = []
    for b in batches:
        digest = hashlib.sha256()
        with open_input(b.path) as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        out.append({"name": b.name, "bytes": b.bytes, "sha256": digest.hexdigest()})
    return out


def natural_key(entry: Any) -> tuple:
    """A file's place in natural name order (part-2 before part-10): its name (or an
    entry's `.name`) as text and numbers in turn."""
    name = entry if isinstance(entry, str) else entry.name
    parts = re.split(r"(\d+)", name)
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p)


def check_schema(path: str | Path, actual: pa.Schema, expected: pa.Schema = SCHEMA) -> None:
    names = [f.name for f in actual]
    if names != list(expected.names):
        missing = [n for n in expected.names if n not in names]
        extra = [n for n in names if n not in expected.names]
        detail = []
        if missing:
            detail.append(f"missing column(s) {', '.join(missing)}")
        if extra:
            detail.append(
                f"unexpected column(s) {', '.join(extra)} (a workload's extra columns? give "
                "its --workload)"
            )
        if not detail:
            detail.append(f"columns in order {', '.join(names)}")
        raise DataError(
            f"{path}: schema differs: {'; '.join(detail)} (expected {', '.join(expected.names)})"
        )
    for f in expected:
        got = actual.field(f.name).type
        if got != f.type and not (pa.types.is_large_string(got) and pa.types.is_string(f.type)):
            raise DataError(f"{path}: column {f.name} is {got}, expected {f.type}")
