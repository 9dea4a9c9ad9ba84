"""Every result file under a results folder, merged into one DuckDB in-memory database.

Records have changed shape over time (the commit in `environment.git_commit` or at the
top level, no machine at all in older lines, keys added and renamed) and an interrupted
run can leave a half-written last line. So each line is read on its own, a bad one is
counted and skipped, and each record is reduced to the flat columns the dashboard shows,
by small functions that know the old and new shapes; records lacking a machine or a
commit get "unknown". The whole line stays in a `raw` JSON column for ad-hoc SQL.

Tables (one row per record; `strategy`, `scale`, `machine`, `commit` in each):
  runs       results/runs.jsonl and results/cluster/*/runs.jsonl (`source` says which)
  scale      results/scale.jsonl (`contest bench scale`, always strategy optimized)
  sweeps     results/sweeps/<sweep>/runs.jsonl
  faults     results/faults.jsonl
  workloads  results/workloads/<workload>.jsonl (phases of a longevity run)
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

UNKNOWN = "unknown"
DIMENSIONS = ("strategy", "scale", "machine", "commit")

Record = Mapping[str, Any]


@dataclass
class Loaded:
    """The merged database and what went into it."""

    con: duckdb.DuckDBPyConnection
    root: Path
    files: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], int]:
    """The JSON objects of a JSON-lines file, and how many non-blank lines were not one."""
    records: list[dict[str, Any]] = []
    bad = 0
    with path.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(obj, dict):
                records.append(obj)
            else:
                bad += 1
    return records, bad


# -- the four filter dimensions, from old and new record shapes --------------------------


def _env(rec: Record) -> Mapping[str, Any]:
    env = rec.get("environment")
    return env if isinstance(env, Mapping) else {}


def _text(value: Any, keys: Iterable[str] = ("id", "name")) -> str | None:
    """A label from a string, a number or a mapping holding one under `keys`."""
    if isinstance(value, Mapping):
        for key in keys:
            if value.get(key) not in (None, ""):
                return _text(value[key])
        return None
    if isinstance(value, bool) or value is None:
        return None
    text = str(value).strip()
    return text or None


def strategy_of(rec: Record, default: str = UNKNOWN) -> str:
    return _text(rec.get("strategy")) or default


_SCALE_IN_PATH = re.compile(r"scale-([0-9]+(?:\.[0-9]+)?)")


def scale_label(value: float) -> str:
    """0.1 -> "0.1", 1.0 -> "1": the way the README names scales."""
    return f"{value:g}"


def scale_of(rec: Record) -> str:
    """The record's scale, or the one its data folder names (scale-1-seed-2022)."""
    value = number(rec.get("scale"))
    if value is not None:
        return scale_label(value)
    data = rec.get("data")
    match = _SCALE_IN_PATH.search(data) if isinstance(data, str) else None
    return scale_label(float(match.group(1))) if match else UNKNOWN


def machine_of(rec: Record) -> str:
    env = _env(rec)
    for value in (
        rec.get("machine"),
        rec.get("machine_id"),
        env.get("machine"),
        env.get("machine_id"),
    ):
        text = _text(value, ("id", "machine_id", "name", "host"))
        if text:
            return text
    return UNKNOWN


_SHA = re.compile(r"[0-9a-f]{8,40}")


def commit_of(rec: Record) -> str:
    """The git commit (7 characters), "+dirty" when the tree had changes, or unknown."""
    env = _env(rec)
    commit: str | None = None
    dirty = any(
        m.get(k) is True for m in (rec, env) for k in ("git_dirty", "dirty", "commit_dirty")
    )
    for value in (
        env.get("git_commit"),
        rec.get("git_commit"),
        rec.get("commit"),
        env.get("commit"),
    ):
        if isinstance(value, Mapping):
            dirty = dirty or value.get("dirty") is True
        text = _text(value, ("sha", "id", "commit", "hash"))
        if text:
            commit = text
            break
    if commit is None:
        return UNKNOWN
    if _SHA.fullmatch(commit):
        commit = commit[:7]
    if commit.endswith(("+dirty", "-dirty")):
        return commit[:-6] + "+dirty"
    return commit + "+dirty" if dirty else commit


def dimensions(rec: Record, strategy: str = UNKNOWN) -> dict[str, str]:
    return {
        "strategy": strategy_of(rec, strategy),
        "scale": scale_of(rec),
        "machine": machine_of(rec),
        "commit": commit_of(rec),
    }


# -- values ------------------------------------------------------------------------------


def number(value: Any) -> float | None:
    """A finite number, else None (booleans, strings and NaN are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if value == value and value not in (float("inf"), float("-inf")) else None


def integer(value: Any) -> int | None:
    n = number(value)
    return int(n) if n is not None else None


def flag(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def text(value: Any, limit: int = 300) -> str | None:
    if value is None or value == "":
        return None
    s = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _first(rec: Record, *keys: str) -> Any:
    for key in keys:
        if rec.get(key) is not None:
            return rec[key]
    return None


def batches_applied(rec: Record) -> float | None:
    """How many batches a workload phase had applied when it ran (the longevity axis).

    New shapes say so (`batches_applied`); otherwise the end of the phase's batch range,
    a list [first, last] or text "first-last", 0-based, so last + 1 batches."""
    n = number(_first(rec, "batches_applied", "applied_batches"))
    if n is not None:
        return n
    span = _first(rec, "batch_range", "batches")
    if isinstance(span, str):
        parts = [p for p in re.split(r"[^0-9]+", span) if p]
        span = [int(p) for p in parts] if parts else None
    if isinstance(span, list) and span and all(number(x) is not None for x in span):
        return float(max(span)) + 1
    last = number(_first(rec, "last_batch", "batch_end", "batch"))
    return last + 1 if last is not None else None


# -- one row per record, per table -------------------------------------------------------

_DIMS = [(name, pa.string()) for name in DIMENSIONS]
_SCHEMAS: dict[str, pa.Schema] = {
    "runs": pa.schema(
        [
            ("source", pa.string()),
            ("when", pa.string()),
            *_DIMS,
            ("correct", pa.bool_()),
            ("rows_per_core_s", pa.float64()),
            ("write_s", pa.float64()),
            ("read_s", pa.float64()),
            ("total_s", pa.float64()),
            ("cores", pa.int64()),
            ("master", pa.string()),
            ("error", pa.string()),
            ("raw", pa.string()),
        ]
    ),
    "scale": pa.schema(
        [
            ("when", pa.string()),
            *_DIMS,
            ("scale_value", pa.float64()),
            ("rows", pa.int64()),
            ("correct", pa.bool_()),
            ("write_s", pa.float64()),
            ("read_s", pa.float64()),
            ("rows_per_core_s", pa.float64()),
            ("s_per_million_rows", pa.float64()),
            ("peak_rss_bytes", pa.float64()),
            ("stored_bytes", pa.float64()),
            ("files_per_bucket", pa.float64()),
            ("error", pa.string()),
            ("raw", pa.string()),
        ]
    ),
    "sweeps": pa.schema(
        [
            ("sweep", pa.string()),
            ("case_name", pa.string()),
            ("rep", pa.int64()),
            ("when", pa.string()),
            *_DIMS,
            ("correct", pa.bool_()),
            ("rows_per_core_s", pa.float64()),
            ("write_s", pa.float64()),
            ("read_s", pa.float64()),
            ("raw", pa.string()),
        ]
    ),
    "faults": pa.schema(
        [
            ("name", pa.string()),
            ("title", pa.string()),
            ("when", pa.string()),
            *_DIMS,
            ("trials", pa.int64()),
            ("goal_met", pa.bool_()),
            ("lost", pa.int64()),
            ("destroyed", pa.int64()),
            ("half_commits", pa.int64()),
            ("orphans_left", pa.int64()),
            ("recovered", pa.int64()),
            ("seconds", pa.float64()),
            ("not_run", pa.string()),
            ("raw", pa.string()),
        ]
    ),
    "workloads": pa.schema(
        [
            ("workload", pa.string()),
            ("seq", pa.int64()),
            ("phase", pa.string()),
            ("when", pa.string()),
            *_DIMS,
            ("batches_applied", pa.float64()),
            ("seconds", pa.float64()),
            ("correct", pa.bool_()),
            ("files_per_bucket", pa.float64()),
            ("raw", pa.string()),
        ]
    ),
}


def _raw(rec: Record) -> str:
    return json.dumps(rec, sort_keys=True, default=str)


def run_row(rec: Record, source: str) -> dict[str, Any]:
    return {
        "source": source,
        "when": text(rec.get("when")),
        **dimensions(rec),
        "correct": flag(rec.get("correct")),
        "rows_per_core_s": number(rec.get("rows_per_core_s")),
        "write_s": number(rec.get("write_s")),
        "read_s": number(rec.get("read_s")),
        "total_s": number(rec.get("total_s")),
        "cores": integer(rec.get("cores")),
        "master": text(rec.get("master")),
        "error": text(rec.get("error")),
        "raw": _raw(rec),
    }


def scale_row(rec: Record, source: str) -> dict[str, Any]:
    # `contest bench scale` measures the optimized pipeline only (bench_scale.py); newer
    # records may name their strategy.
    return {
        "when": text(rec.get("when")),
        **dimensions(rec, strategy="optimized"),
        "scale_value": number(rec.get("scale")),
        "rows": integer(rec.get("rows")),
        "correct": flag(rec.get("correct")),
        "write_s": number(rec.get("write_s")),
        "read_s": number(rec.get("read_s")),
        "rows_per_core_s": number(rec.get("rows_per_core_s")),
        "s_per_million_rows": number(rec.get("s_per_million_rows")),
        "peak_rss_bytes": number(_first(rec, "peak_process_rss_bytes", "peak_rss_bytes")),
        "stored_bytes": number(rec.get("stored_bytes")),
        "files_per_bucket": number(rec.get("files_per_bucket")),
        "error": text(rec.get("error")),
        "raw": _raw(rec),
    }


def sweep_row(rec: Record, source: str) -> dict[str, Any]:
    case = rec.get("case")
    if case is None and isinstance(rec.get("settings"), Mapping):
        case = ", ".join(f"{k}={v}" for k, v in sorted(rec["settings"].items()))
    return {
        "sweep": source,
        "case_name": text(case) or UNKNOWN,
        "rep": integer(rec.get("rep")),
        "when": text(rec.get("when")),
        **dimensions(rec),
        "correct": flag(rec.get("correct")),
        "rows_per_core_s": number(rec.get("rows_per_core_s")),
        "write_s": number(rec.get("write_s")),
        "read_s": number(rec.get("read_s")),
        "raw": _raw(rec),
    }


def fault_row(rec: Record, source: str) -> dict[str, Any]:
    return {
        "name": text(rec.get("name")) or UNKNOWN,
        "title": text(rec.get("title")),
        "when": text(rec.get("when")),
        **dimensions(rec),
        "trials": integer(rec.get("trials")),
        "goal_met": flag(rec.get("goal_met")),
        "lost": integer(rec.get("lost")),
        "destroyed": integer(rec.get("destroyed")),
        "half_commits": integer(rec.get("half_commits")),
        "orphans_left": integer(rec.get("orphans_left")),
        "recovered": integer(rec.get("recovered")),
        "seconds": number(rec.get("seconds")),
        "not_run": text(rec.get("not_run")),
        "raw": _raw(rec),
    }


def workload_row(rec: Record, source: str, seq: int) -> dict[str, Any]:
    phase = text(_first(rec, "phase", "kind", "task")) or UNKNOWN
    return {
        "workload": text(rec.get("workload")) or source,
        "seq": seq,
        # A phase the strategy has no form of (a peer's compaction) did not run.
        "phase": f"{phase} (skipped)" if rec.get("skipped") else phase,
        "when": text(rec.get("when")),
        **dimensions(rec),
        "batches_applied": batches_applied(rec),
        "seconds": number(_first(rec, "seconds", "read_s", "elapsed_s", "duration_s")),
        "correct": flag(rec.get("correct")),
        "files_per_bucket": number(rec.get("files_per_bucket")),
        "raw": _raw(rec),
    }


# -- the files ---------------------------------------------------------------------------

RowMaker = Callable[[Record, str], dict[str, Any]]


def sources(root: Path) -> list[tuple[str, Path, str]]:
    """(table, file, source label) for every result file the dashboard reads."""
    found: list[tuple[str, Path, str]] = []
    if (root / "runs.jsonl").is_file():
        found.append(("runs", root / "runs.jsonl", "runs.jsonl"))
    for path in sorted(root.glob("cluster/*/runs.jsonl")):
        found.append(("runs", path, f"cluster/{path.parent.name}"))
    if (root / "scale.jsonl").is_file():
        found.append(("scale", root / "scale.jsonl", "scale.jsonl"))
    for path in sorted(root.glob("sweeps/*/runs.jsonl")):
        found.append(("sweeps", path, path.parent.name))
    if (root / "faults.jsonl").is_file():
        found.append(("faults", root / "faults.jsonl", "faults.jsonl"))
    for path in sorted(root.glob("workloads/*.jsonl")):
        found.append(("workloads", path, path.stem))
    return found


_MAKERS: dict[str, RowMaker] = {
    "runs": run_row,
    "scale": scale_row,
    "sweeps": sweep_row,
    "faults": fault_row,
}


def load(root: Path, database: str = ":memory:") -> Loaded:
    """Read every result file under `root` into one DuckDB database (in memory unless
    `database` names a file), one table per kind of result."""
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in _SCHEMAS}
    loaded = Loaded(con=duckdb.connect(database), root=root)
    for table, path, label in sources(root):
        records, bad = read_jsonl(path)
        rel = path.relative_to(root).as_posix()
        loaded.files.append(rel)
        if bad:
            loaded.skipped[rel] = bad
        if table == "workloads":
            rows[table].extend(workload_row(r, label, i) for i, r in enumerate(records))
        else:
            rows[table].extend(_MAKERS[table](r, label) for r in records)
    for name, schema in _SCHEMAS.items():
        loaded.con.register("incoming", pa.Table.from_pylist(rows[name], schema=schema))
        loaded.con.execute(f"CREATE TABLE {name} AS SELECT * FROM incoming")
        loaded.con.unregister("incoming")
    return loaded
