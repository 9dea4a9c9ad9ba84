"""Every results file, published and local, merged into one DuckDB in-memory database.

Each file is read through its typed record (`contest.results.registry`: the one place
that knows which file holds which record and every older shape of it); a line that is
no record (an interrupted run's half-written last line) is counted and skipped. Each
record is reduced to the flat columns the dashboard shows, from its fields; the whole
record stays in a `raw` JSON column for ad-hoc SQL.

Every row carries the filter dimensions: `origin` (published: the results folder;
local: this machine's own store under the work folder), `strategy`, `scale`,
`machine`, `commit`. Tables (one row per record; read_bench one per read variant):
  runs              runs.jsonl, cluster/*/runs.jsonl and peer_sittings.jsonl (`source`
                    says which)
  scale             scale.jsonl (`contest bench scale`: strategy optimized)
  sweeps            sweeps/<sweep>/runs.jsonl
  faults            faults.jsonl
  workloads         workloads/<workload>.jsonl (phases of a longevity run)
  stream_faults, stream_freshness, stream_metadata      streaming.jsonl, by kind
  read_bench, compact, duckdb, commit_paths, meta_replay, native_merge
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from contest.results import registry
from contest.results.benchmarks import (
    CommitPathRecord,
    CompactRecord,
    DuckDBRecord,
    FaultRecord,
    NativeMergeRecord,
    ReadBenchRecord,
    ReplayRecord,
    ScaleRecord,
)
from contest.results.labels import (
    UNKNOWN,
    commit_label,
    run_commit,
    run_load,
    run_machine,
    run_scale,
    scale_label,
    scale_of_data,
)
from contest.results.runs import RunRecord
from contest.results.streaming import (
    StreamBoundary,
    StreamFault,
    StreamFreshness,
    StreamMetadata,
    StreamRecord,
)
from contest.results.workloads import PhaseRecord

DIMENSIONS = ("origin", "strategy", "scale", "machine", "commit")
PUBLISHED, LOCAL = "published", "local"
Row = dict[str, Any]

# Each table's columns after the dimensions, as "name:type" (s text, f float, n integer,
# b boolean); every table ends with the whole record as JSON, `raw`.
_TYPES = {"s": pa.string(), "f": pa.float64(), "n": pa.int64(), "b": pa.bool_()}
_COLUMNS = {
    "runs": (
        "source:s when:s run_id:s correct:b rows_per_core_s:f write_s:f read_s:f "
        "total_s:f cores:n master:s busy:s load1:f error:s"
    ),
    "scale": (
        "when:s sitting:s scale_value:f rows:n correct:b write_s:f read_s:f "
        "rows_per_core_s:f s_per_million_rows:f peak_rss_bytes:f stored_bytes:f "
        "files_per_bucket:f error:s"
    ),
    "sweeps": (
        "sweep:s case_name:s rep:n when:s correct:b rows_per_core_s:f write_s:f read_s:f busy:s"
    ),
    "faults": (
        "name:s title:s when:s trials:n goal_met:b lost:n destroyed:n half_commits:n "
        "orphans_left:n recovered:n seconds:f not_run:s"
    ),
    "workloads": (
        "workload:s seq:n run_id:s phase:s when:s batches_applied:f seconds:f correct:b "
        "files_per_bucket:f load1:f"
    ),
    "stream_faults": (
        "format:s case_name:s sitting:s trials:n files_fed:n files_consumed:n "
        "lost_files:n double_commits:n batches_replayed:n table_commits:n double_keys:n "
        "lost_keys:n exact:b load_start:f load_end:f"
    ),
    "stream_freshness": (
        "format:s sitting:s rate_files_s:f rows_per_file:n files:n micro_batches:n "
        "p50_s:f p99_s:f max_s:f rows_per_s:f rows_per_core_s:f exact:b load_start:f "
        "load_end:f"
    ),
    "stream_metadata": (
        "format:s sitting:s history_commits:n micro_batches:n commit_ms_first:f "
        "commit_ms_last:f commit_ms_p99:f head_snapshot_bytes:n"
    ),
    "read_bench": "sitting:s variant:s rows:n repeat:n median_s:f min_s:f max_s:f vs_default:f",
    "compact": (
        "when:s rows:n repeat:n files_per_bucket_before:f files_per_bucket_after:f "
        "median_before_s:f min_before_s:f max_before_s:f median_after_s:f min_after_s:f "
        "max_after_s:f speedup:f"
    ),
    "duckdb": "sitting:s engine:s round:n seconds:f correct:b peak_rss_bytes:f",
    "commit_paths": "sitting:s path:s round:n writers:n commits_per_s:f retries:n lost:n",
    "meta_replay": "sitting:s commits:n driver_s:f distributed_s:f identical:b",
    "native_merge": "bench:s variant:s median_s:f ratio:f rounds:n exact:b load1:f",
}
SCHEMAS = {
    name: pa.schema(
        [(d, pa.string()) for d in DIMENSIONS]
        + [(c, _TYPES[t]) for c, t in (x.split(":") for x in spec.split())]
        + [("raw", pa.string())]
    )
    for name, spec in _COLUMNS.items()
}


@dataclass
class Loaded:
    """The merged database and what went into it."""

    con: duckdb.DuckDBPyConnection
    root: Path
    local: Path | None = None
    files: list[str] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)


def _dims(origin: str, strategy: str, scale: str, machine: str, commit: str) -> Row:
    return {
        "origin": origin,
        "strategy": strategy or UNKNOWN,
        "scale": scale,
        "machine": machine or UNKNOWN,
        "commit": commit,
    }


def _raw(rec: Any) -> str:
    return json.dumps(rec.to_dict(), sort_keys=True, default=str)


def _sitting_of(rec: Any, fallback: str | None = None) -> str:
    return rec.sitting or fallback or UNKNOWN


# -- one row per record, per table -------------------------------------------------------


def run_row(rec: RunRecord, origin: str, source: str) -> Row:
    return {
        **_dims(origin, rec.strategy, run_scale(rec), run_machine(rec), run_commit(rec)),
        "source": source,
        "when": rec.when or None,
        "run_id": rec.run_id or None,
        "correct": rec.correct,
        "rows_per_core_s": rec.rows_per_core_s,
        "write_s": rec.write_s,
        "read_s": rec.read_s,
        "total_s": rec.total_s,
        "cores": rec.cores,
        "master": rec.master or None,
        "busy": rec.busy,
        "load1": run_load(rec),
        "error": rec.error,
        "raw": _raw(rec),
    }


def sweep_row(rec: RunRecord, origin: str, sweep: str) -> Row:
    case = rec.case or ", ".join(f"{k}={v}" for k, v in sorted((rec.settings or {}).items()))
    return {
        **_dims(origin, rec.strategy, run_scale(rec), run_machine(rec), run_commit(rec)),
        "sweep": sweep,
        "case_name": case or UNKNOWN,
        "rep": rec.rep,
        "when": rec.when or None,
        "correct": rec.correct,
        "rows_per_core_s": rec.rows_per_core_s,
        "write_s": rec.write_s,
        "read_s": rec.read_s,
        "busy": rec.busy,
        "raw": _raw(rec),
    }


def scale_row(rec: ScaleRecord, origin: str) -> Row:
    # `contest bench scale` measures the optimized pipeline only.
    return {
        **_dims(origin, "optimized", scale_label(rec.scale), UNKNOWN, UNKNOWN),
        "when": rec.when or None,
        "sitting": _sitting_of(rec, rec.when),
        "scale_value": rec.scale,
        "rows": rec.rows,
        "correct": rec.correct,
        "write_s": rec.write_s,
        "read_s": rec.read_s,
        "rows_per_core_s": rec.rows_per_core_s,
        "s_per_million_rows": rec.s_per_million_rows,
        "peak_rss_bytes": rec.peak_rss_bytes,
        "stored_bytes": rec.stored_bytes,
        "files_per_bucket": rec.files_per_bucket,
        "error": rec.error,
        "raw": _raw(rec),
    }


def fault_row(rec: FaultRecord, origin: str) -> Row:
    return {
        **_dims(origin, UNKNOWN, scale_label(rec.scale), UNKNOWN, commit_label(rec.git_commit)),
        "name": rec.name,
        "title": rec.title,
        "when": rec.when or None,
        "trials": rec.trials,
        "goal_met": rec.goal_met,
        "lost": rec.lost,
        "destroyed": rec.destroyed,
        "half_commits": rec.half_commits,
        "orphans_left": rec.orphans_left,
        "recovered": rec.recovered,
        "seconds": rec.seconds,
        "not_run": rec.not_run,
        "raw": _raw(rec),
    }


def workload_row(rec: PhaseRecord, origin: str, seq: int) -> Row:
    # A phase the strategy has no form of (a peer's compaction) did not run.
    phase = f"{rec.phase} (skipped)" if rec.skipped else rec.phase
    return {
        **_dims(
            origin,
            rec.strategy,
            scale_label(rec.scale),
            rec.machine_id,
            commit_label(rec.git_commit),
        ),
        "workload": rec.workload,
        "seq": seq,
        "run_id": rec.run_id,
        "phase": phase,
        "when": rec.when or None,
        "batches_applied": rec.batches_applied,
        "seconds": rec.seconds,
        "correct": rec.correct,
        "files_per_bucket": rec.files_per_bucket,
        "load1": rec.load1,
        "raw": json.dumps(rec.to_dict(), sort_keys=True, default=str),
    }


def _stream_dims(rec: StreamRecord, origin: str) -> Row:
    return {
        **_dims(origin, UNKNOWN, UNKNOWN, rec.host, UNKNOWN),
        "format": rec.format,
        "sitting": _sitting_of(rec, rec.when),
        "raw": _raw(rec),
    }


def stream_row(rec: StreamRecord, origin: str) -> tuple[str, Row]:
    """The streaming table a record goes to, and its row."""
    base = _stream_dims(rec, origin)
    if isinstance(rec, StreamFault):
        return "stream_faults", {
            **base,
            "case_name": rec.case,
            "trials": rec.trials,
            "files_fed": rec.files_fed,
            "files_consumed": rec.files_consumed,
            "lost_files": rec.lost_files,
            "double_commits": rec.double_commits,
            "batches_replayed": rec.batches_replayed,
            "table_commits": rec.table_commits,
            "double_keys": rec.double_keys,
            "lost_keys": rec.lost_keys,
            "exact": rec.exact,
            "load_start": rec.load_1m_start,
            "load_end": rec.load_1m_end,
        }
    if isinstance(rec, StreamFreshness):
        return "stream_freshness", {
            **base,
            "rate_files_s": rec.rate_files_s,
            "rows_per_file": rec.rows_per_file,
            "files": rec.files,
            "micro_batches": rec.micro_batches,
            "p50_s": rec.freshness_p50_s,
            "p99_s": rec.freshness_p99_s,
            "max_s": rec.freshness_max_s,
            "rows_per_s": rec.rows_per_s,
            "rows_per_core_s": rec.rows_per_core_s,
            "exact": rec.exact,
            "load_start": rec.load_1m_start,
            "load_end": rec.load_1m_end,
        }
    if isinstance(rec, StreamBoundary):  # a kill trial too: at the commit boundary
        windows = ", ".join(f"{k}: {v}" for k, v in sorted(rec.windows.items()))
        return "stream_faults", {
            **base,
            "case_name": f"{rec.case} ({windows})" if windows else rec.case,
            "trials": rec.trials,
            "files_fed": rec.files_fed,
            "files_consumed": None,
            "lost_files": None,
            "double_commits": None,
            "batches_replayed": rec.batches_replayed,
            "table_commits": None,
            "double_keys": None,
            "lost_keys": None,
            "exact": rec.exact,
            "load_start": rec.load_1m_start,
            "load_end": rec.load_1m_end,
        }
    assert isinstance(rec, StreamMetadata)
    return "stream_metadata", {
        **base,
        "history_commits": rec.history_commits,
        "micro_batches": rec.micro_batches,
        "commit_ms_first": rec.commit_ms_first,
        "commit_ms_last": rec.commit_ms_last,
        "commit_ms_p99": rec.commit_ms_p99,
        "head_snapshot_bytes": rec.head_snapshot_bytes,
    }


def read_bench_rows(rec: ReadBenchRecord, origin: str) -> list[Row]:
    return [
        {
            **_dims(origin, UNKNOWN, scale_label(rec.scale), UNKNOWN, UNKNOWN),
            "sitting": _sitting_of(rec, f"{rec.rows} rows"),
            "variant": name,
            "rows": rec.rows,
            "repeat": rec.repeat,
            "median_s": v.median_s,
            "min_s": v.min_s,
            "max_s": v.max_s,
            "vs_default": v.vs_default,
            "raw": _raw(rec),
        }
        for name, v in rec.variants.items()
    ]


def compact_row(rec: CompactRecord, origin: str) -> Row:
    scale = scale_label(rec.scale) if rec.scale is not None else scale_of_data(rec.data)
    return {
        **_dims(origin, "optimized", scale, UNKNOWN, UNKNOWN),
        "when": rec.when,
        "rows": rec.rows,
        "repeat": rec.repeat,
        "files_per_bucket_before": rec.files_per_bucket_before,
        "files_per_bucket_after": rec.files_per_bucket_after,
        "median_before_s": rec.median_before_s,
        "min_before_s": min(rec.read_before_s, default=None),
        "max_before_s": max(rec.read_before_s, default=None),
        "median_after_s": rec.median_after_s,
        "min_after_s": min(rec.read_after_s, default=None),
        "max_after_s": max(rec.read_after_s, default=None),
        "speedup": rec.speedup,
        "raw": _raw(rec),
    }


def duckdb_row(rec: DuckDBRecord, origin: str, sitting: str) -> Row:
    return {
        **_dims(origin, rec.engine, scale_of_data(rec.data), UNKNOWN, UNKNOWN),
        "sitting": sitting,
        "engine": rec.engine,
        "round": rec.round,
        "seconds": rec.seconds,
        "correct": rec.correct,
        "peak_rss_bytes": rec.peak_process_rss_bytes,
        "raw": _raw(rec),
    }


def commit_path_row(rec: CommitPathRecord, origin: str) -> Row:
    return {
        **_dims(origin, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN),
        "sitting": _sitting_of(rec),
        "path": rec.path,
        "round": rec.round,
        "writers": rec.writers,
        "commits_per_s": rec.commits_per_s,
        "retries": rec.retries,
        "lost": rec.lost,
        "raw": _raw(rec),
    }


def replay_row(rec: ReplayRecord, origin: str) -> Row:
    return {
        **_dims(origin, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN),
        "sitting": _sitting_of(rec, rec.when),
        "commits": rec.commits,
        "driver_s": rec.driver_s,
        "distributed_s": rec.distributed_s,
        "identical": rec.identical,
        "raw": _raw(rec),
    }


def native_merge_row(rec: NativeMergeRecord, origin: str) -> Row:
    return {
        **_dims(origin, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN),
        "bench": rec.bench,
        "variant": rec.variant,
        "median_s": rec.median_s,
        "ratio": rec.ratio,
        "rounds": rec.rounds,
        "exact": rec.exact,
        "load1": rec.load[0] if rec.load else None,
        "raw": _raw(rec),
    }


# -- the files ---------------------------------------------------------------------------

Adder = Callable[[dict[str, list[Row]], list[Any], str, Path], None]


def _label(path: Path) -> str:
    return path.parent.name


def _add_runs(rows: dict[str, list[Row]], recs: list[Any], origin: str, path: Path) -> None:
    source = path.name if path.parent.parent.name != "cluster" else f"cluster/{_label(path)}"
    rows["runs"] += [run_row(r, origin, source) for r in recs]


def _add_duckdb(rows: dict[str, list[Row]], recs: list[Any], origin: str, path: Path) -> None:
    # Old lines have no sitting: a round 1 of optimized begins one.
    n, last = 0, None
    for r in recs:
        if r.sitting is None and r.round == 1 and r.engine == "optimized":
            n += 1
        key = r.sitting or f"sitting {n}"
        last = key
        rows["duckdb"].append(duckdb_row(r, origin, last))


def _add_streaming(rows: dict[str, list[Row]], recs: list[Any], origin: str, path: Path) -> None:
    for r in recs:
        table, row = stream_row(r, origin)
        rows[table].append(row)


ADDERS: dict[str, Adder] = {
    "runs": _add_runs,
    "cluster": _add_runs,
    "peer_sittings": _add_runs,  # the runs of `contest bench peers`' sittings
    "sweeps": lambda rows, recs, o, p: rows["sweeps"].extend(
        sweep_row(r, o, _label(p)) for r in recs
    ),
    "workloads": lambda rows, recs, o, p: rows["workloads"].extend(
        workload_row(r, o, i) for i, r in enumerate(recs)
    ),
    "streaming": _add_streaming,
    "scale": lambda rows, recs, o, p: rows["scale"].extend(scale_row(r, o) for r in recs),
    "faults": lambda rows, recs, o, p: rows["faults"].extend(fault_row(r, o) for r in recs),
    "read_bench": lambda rows, recs, o, p: rows["read_bench"].extend(
        x for r in recs for x in read_bench_rows(r, o)
    ),
    "compact": lambda rows, recs, o, p: rows["compact"].extend(compact_row(r, o) for r in recs),
    "duckdb": _add_duckdb,
    "commit_paths": lambda rows, recs, o, p: rows["commit_paths"].extend(
        commit_path_row(r, o) for r in recs
    ),
    "meta_replay": lambda rows, recs, o, p: rows["meta_replay"].extend(
        replay_row(r, o) for r in recs
    ),
    "native_merge": lambda rows, recs, o, p: rows["native_merge"].extend(
        native_merge_row(r, o) for r in recs
    ),
}


def load(root: Path, local: Path | None = None, database: str = ":memory:") -> Loaded:
    """Read every results file under `root` (published) and under `local` (this
    machine's own store, same layout) into one DuckDB database (in memory unless
    `database` names a file), one table per kind of record."""
    rows: dict[str, list[Row]] = {name: [] for name in SCHEMAS}
    loaded = Loaded(con=duckdb.connect(database), root=root, local=local)
    folders = [(PUBLISHED, root)] + ([(LOCAL, local)] if local and local.is_dir() else [])
    for origin, folder in folders:
        for kind, path in registry.every_file(folder):
            records, bad = kind.read_lenient(path)
            rel = path.relative_to(folder).as_posix()
            name = rel if origin == PUBLISHED else f"local: {rel}"
            loaded.files.append(name)
            if bad:
                loaded.skipped[name] = bad
            ADDERS[kind.name](rows, records, origin, path)
    for name, schema in SCHEMAS.items():
        loaded.con.register("incoming", pa.Table.from_pylist(rows[name], schema=schema))
        loaded.con.execute(f"CREATE TABLE {name} AS SELECT * FROM incoming")
        loaded.con.unregister("incoming")
    return loaded
