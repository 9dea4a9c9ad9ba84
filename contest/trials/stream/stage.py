"""A stream under test, for `contest bench stream` and its peer formats: its folders
and table (`Stage`), its child process (`contest stream run`, own JVM), its feed
(`Feeder`), its check against the oracle (`check_table`), and the figures a freshness
run reports (the same for the harness's sink and the peers').

The cases themselves: the harness's sink's kill -9 trials, replay and new checkpoint in
sink.py; freshness, and the peer formats' cases, in contest/benchmarks/stream/bench.py
and peers.py.
"""

from __future__ import annotations

import json
import shutil
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contest.config import Config, absolute_paths, override, to_toml
from contest.data.changes import changes_of
from contest.data.oracle import expected_rows
from contest.errors import RunError
from contest.evaluation.jobs import child_env, cli_command
from contest.infra.proc import kill_group, spawn, wait_bounded
from contest.read.arrow import read_merged
from contest.stream.feed import existing, write_feed_file
from contest.stream.run import consumed_batches
from contest.stream.sink import BATCH_LINE
from contest.trials.breaks import read_text
from contest.write.job import WriteMode, prepare_table
from meta import catalog
from meta.stream import batches

CHILD_TIMEOUT_S = 600.0


@dataclass
class Stage:
    """One streaming table of the bench: its folders, table, and the child's command."""

    cfg: Config
    conn: Any
    root: Path
    name: str
    config_file: Path
    env: dict[str, str]
    # The table's format: lakesoul (the harness's sink) or a peer's (contest/stream/peer.py).
    fmt: str = "lakesoul"

    @property
    def incoming(self) -> Path:
        return self.root / self.name / "incoming"

    @property
    def checkpoint(self) -> Path:
        return self.root / self.name / "checkpoint"

    @property
    def table_path(self) -> Path:
        return self.root / self.name / "table"

    def command(self, *extra: str, checkpoint: Path | None = None) -> list[str]:
        return cli_command(
            self.config_file,
            "stream", "run",
            "--table", self.table_path,
            "--name", self.name,
            "--source", self.incoming,
            "--checkpoint", checkpoint or self.checkpoint,
            "--format", self.fmt,
            *extra,
        )  # fmt: skip

    def table(self):
        return catalog.get_table(self.conn, self.name, self.cfg.table.namespace)


def child_config(cfg: Config, cores: int, master: str = "") -> Config:
    """The config of a stream's child process: local[cores], or `master` (a cluster's
    URL) with at most `cores` cores."""
    values: dict[str, object] = {"spark.ui": False, "spark.driver_memory": "1g"}
    values["spark.master"] = master or f"local[{cores}]"
    if master:
        values["spark.conf.spark.cores.max"] = str(cores)
    return override(absolute_paths(cfg), values)


def make_stage(
    cfg: Config, conn: Any, root: Path, name: str, cores: int, master: str = ""
) -> Stage:
    """A fresh table (a previous sitting's, of this bench, replaced) and its folders;
    the child runs on `master` when given (local[cores] otherwise)."""
    folder = root / name
    shutil.rmtree(folder, ignore_errors=True)  # this bench's own folder of a previous sitting
    folder.mkdir(parents=True)
    config_file = folder / "child.toml"
    config_file.write_text(to_toml(child_config(cfg, cores, master)))
    stage = Stage(cfg, conn, root, name, config_file, child_env(cfg))
    prepare_table(conn, cfg, str(stage.table_path), name, WriteMode.REPLACE)
    return stage


def batch_lines(text: str) -> list[dict]:
    """The `stream-batch` JSON lines a child logged (contest/stream/sink.py)."""
    out = []
    for line in text.splitlines():
        if line.startswith(BATCH_LINE):
            try:
                out.append(json.loads(line[len(BATCH_LINE) :]))
            except ValueError:
                continue  # a line cut by the kill
    return out


def logged(batches: int, status: str | None = None) -> Callable[[str], bool]:
    """The moment a stream's log says its query started and holds `batches` micro-batch
    lines (of `status` only, when given): a kill trial's (`broken_when_logged`)."""

    def reached(text: str) -> bool:
        lines = [b for b in batch_lines(text) if status is None or b["status"] == status]
        return "stream: query" in text and len(lines) >= batches

    return reached


@dataclass
class Check:
    exact: bool
    consumed: int  # source files the committed micro-batches hold
    double: int  # source files committed more than once
    rows: int
    detail: str = ""


def check_table(stage: Stage, fed: Sequence[Path] | None = None) -> Check:
    """The table against the oracle over the files its micro-batches committed (and,
    given `fed`, every fed file consumed)."""
    table = stage.table()
    recorded = batches(stage.conn, table)
    files = [f for b in recorded for f in b.source_files]
    double = len(files) - len(set(files))
    if not recorded:
        return Check(True, 0, 0, 0, "nothing committed yet")
    actual = read_merged(stage.conn, stage.cfg, table).to_pylist()
    expected = expected_rows(consumed_batches(stage.conn, table), changes=changes_of(stage.cfg))
    detail = ""
    exact = actual == expected and double == 0
    if actual != expected:
        detail = f"{len(actual)} rows read, {len(expected)} expected; rows differ"
    if fed is not None:
        lost = sorted({str(p) for p in fed} - set(files))
        if lost:
            exact = False
            detail += f"; {len(lost)} fed file(s) never committed: {lost[:2]}"
    return Check(exact, len(set(files)), double, len(actual), detail)


class Feeder(threading.Thread):
    """Drops feed files at a fixed interval until stopped."""

    def __init__(self, folder: Path, rows: int, interval_s: float, seed: int, most: int = 10**6):
        super().__init__(daemon=True)
        self.folder, self.rows, self.interval_s, self.seed, self.most = (
            folder,
            rows,
            interval_s,
            seed,
            most,
        )
        self.halt = threading.Event()
        self.files: list[Path] = []

    def run(self) -> None:
        have = existing(self.folder)
        index = have[-1] + 1 if have else 0
        while not self.halt.is_set() and len(self.files) < self.most:
            self.files.append(write_feed_file(self.folder, index, self.rows, self.seed))
            index += 1
            self.halt.wait(self.interval_s)

    def stop(self) -> list[Path]:
        self.halt.set()
        self.join()
        return sorted(self.folder.glob("feed-*.parquet"))


def drain(stage: Stage, log: Path, checkpoint: Path | None = None) -> tuple[int, str]:
    """`contest stream run --trigger available-now`: exit code and stderr."""
    cmd = stage.command("--trigger", "available-now", checkpoint=checkpoint)
    proc = spawn(cmd, log, stage.env, stage.root)
    code = wait_bounded(proc, CHILD_TIMEOUT_S)
    return code, read_text(log.with_suffix(".err"))


def start_live_stream(stage: Stage, log: Path, what: str = "") -> tuple[Any, float]:
    """The stage's query on a 0.25 s processing-time trigger, once it has started (its
    log says so): the process and when it was spawned (a freshness run's clock)."""
    proc = spawn(
        stage.command("--trigger", "processing-time", "--interval", "0.25"),
        log,
        stage.env,
        stage.root,
    )
    start = time.monotonic()
    while "stream: query" not in read_text(log.with_suffix(".err")):
        if proc.poll() is not None or time.monotonic() - start > CHILD_TIMEOUT_S:
            kill_group(proc)
            prefix = f"{what}: " if what else ""
            raise RunError(f"{prefix}the stream did not start: see {log.with_suffix('.err')}")
        time.sleep(0.05)
    return proc, start


def lag_summary(lags: Sequence[float]) -> str:
    """p50 and p99 of the lags, as a progress line says them."""
    return (
        f"p50 {percentile(lags, 50):.2f} s, p99 {percentile(lags, 99):.2f} s over {len(lags)} files"
    )


def freshness_figures(
    rate: float,
    rows: int,
    files: int,
    lags: Sequence[float],
    micro_batches: int,
    total_rows: int,
    span: float,
    busy: float,
    cores: int,
) -> dict:
    """One feed rate's figures, the same for the harness's sink and the peers': `lags`
    (sorted) from each file landing to its rows being visible, rows per second over
    `span` (first landing to last visible), rows per core-second of `busy` writing."""
    return {
        "rate_files_s": rate,
        "rows_per_file": rows,
        "rows_per_s_fed": round(rate * rows, 1),
        "files": files,
        "visible": len(lags),
        "micro_batches": micro_batches,
        "freshness_p50_s": round(percentile(lags, 50), 3),
        "freshness_p99_s": round(percentile(lags, 99), 3),
        "freshness_max_s": round(lags[-1], 3) if lags else None,
        "rows_per_s": round(total_rows / span, 1) if span else None,
        "rows_per_core_s": round(total_rows / (cores * busy), 1) if busy else None,
        "cores": cores,
    }


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(p) - 1]
