"""How `contest bench duckdb` runs its DuckDB reference (contest/benchmarks/duckdb/merge.py
in a process of its own): the memory each of its rows runs with, and one timed run.

The headline row runs DuckDB at its defaults, as users run it: no memory limit set
(DuckDB's own, 80% of the machine's memory), one query, threads = the sitting's cores,
spilling under the work folder; exempt by name from the harness's 8 GB bound
(contest/infra/memory_bound.py). A sitting may add rows under a memory limit, each a row
of its own, never in place of the defaults row: `equal` holds DuckDB at optimized's peak
process-tree memory (an equal-memory comparison), `oracle` at the oracle's budget (at
most 4 GiB: how sittings before ran the reference, which made it spill at scale 1).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from contest.config import Config
from contest.data.changes import changes_of
from contest.data.checker import SUCCESS_MARKER
from contest.data.oracle import config_budget
from contest.data.workload import contract_operators
from contest.errors import RunError
from contest.infra.proc import run_timed
from contest.results.benchmarks import DuckDBRecord

DEFAULTS = "defaults"


@dataclass(frozen=True)
class Memory:
    """One way the reference's memory is set: what the page calls it, and the limit in
    bytes (None: DuckDB's default) from the configuration and the optimized rows
    measured so far in the sitting."""

    shown: str
    limit: Callable[[Config, Sequence[DuckDBRecord]], int | None]


def optimized_peak(_cfg: Config, so_far: Sequence[DuckDBRecord]) -> int | None:
    """The highest peak process-tree memory of optimized's default runs so far (its write
    and read, JVM and Python workers together)."""
    peaks = [r.peak_rss_bytes for r in so_far if r.label == "optimized" and r.peak_rss_bytes]
    if not peaks:
        raise RunError("no optimized run has measured its peak memory yet in this sitting")
    return max(peaks)


MEMORY = MappingProxyType(
    {
        DEFAULTS: Memory("at DuckDB's defaults", lambda _cfg, _so_far: None),
        "equal": Memory("at optimized's peak process-tree memory", optimized_peak),
        "oracle": Memory(
            "capped at the oracle's budget",
            lambda cfg, _so_far: config_budget(cfg.oracle).memory_limit,
        ),
    }
)
# The extra rows a sitting may ask for (`--duckdb-variant`): every way but the defaults.
VARIANTS = tuple(m for m in MEMORY if m != DEFAULTS)


def run_duckdb(
    cfg: Config,
    data: Path,
    cores: int,
    out_dir: Path,
    log: Path,
    parts: int = 0,
    memory: str = DEFAULTS,
    so_far: Sequence[DuckDBRecord] = (),
) -> dict:
    """One timed DuckDB merge into `out_dir` (a result folder the checker takes) with its
    memory set as `memory` says, in `parts` key ranges (0: one query at DuckDB's defaults,
    as many as a memory limit needs otherwise). Its row says how DuckDB ran."""
    limit = MEMORY[memory].limit(cfg, so_far)
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    cmd = [sys.executable, "-m", "contest.benchmarks.duckdb.merge", "--data", str(data)]
    cmd += ["--out", str(out_dir), "--threads", str(cores), "--parts", str(parts)]
    if limit is not None:
        cmd += ["--memory-limit", str(limit)]
    if cfg.write.versions:
        cmd += ["--versions", cfg.write.versions]
    # The workload's columns, key and row kinds (a user's data: the oracle's query).
    cmd += ["--operators", json.dumps(contract_operators(cfg.workload))]
    cmd += ["--changes", json.dumps(dataclasses.asdict(changes_of(cfg)))]
    r = run_timed(cmd, log)
    shutil.rmtree(out_dir / ".spill", ignore_errors=True)
    if not r.ok:
        raise RunError(f"DuckDB merge exited {r.returncode}: {r.last_line} (log {log})")
    (out_dir / SUCCESS_MARKER).touch()
    return {
        "seconds": round(r.seconds, 3),
        "peak_process_rss_bytes": r.peak_process_rss_bytes,
        "peak_rss_bytes": r.peak_rss_bytes,
        "duckdb_memory": memory,
        # Noise during DuckDB's own process, as the floor's and optimized's rows record it.
        "outside_share": r.noise.outside_share if r.noise is not None else None,
        **json.loads(r.last_line),
    }
