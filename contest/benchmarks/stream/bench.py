"""`contest bench stream`: streaming upserts under faults, and their freshness.

Each case runs `contest stream run` as a child process (its own JVM) over a folder that
a feed fills, and checks the table against the oracle over exactly the files the
micro-batches committed (recorded with each commit): no file lost, none counted twice
(the `requests` sums would show it).

- the harness's sink under faults (contest/trials/stream/sink.py): kill -9 at random
  moments and restarts from the checkpoint, a replayed micro-batch skipped, a second
  query (a new checkpoint) over the consumed folder refused.
- freshness and throughput at a few feed rates: landing (the file's modification time)
  to visible (the first moment the head snapshot, what a read starts from, holds its
  commit; polled every 0.1 s), and rows per core per second of the micro-batches' own
  work (write + commit).

The stream under test (its folders, child process, feed and check) is
contest/trials/stream/stage.py; the page (streaming.md) is page.py.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence
from typing import Any

from contest.benchmarks.stream import page
from contest.benchmarks.stream.meta import commit_cost
from contest.benchmarks.stream.peers import measure_peers
from contest.config import Config
from contest.errors import RunError, UsageError
from contest.infra.cluster import check_master
from contest.infra.postgres import resolve_connection
from contest.infra.proc import kill_group
from contest.peers import registry
from contest.results.streaming import StreamRecord
from contest.sitting import (
    POSITIVE,
    SEED,
    Benchmark,
    Option,
    Row,
    Say,
    Sitting,
    Stamper,
    at_least,
    no_stamp,
    utc_now,
)
from contest.stream.feed import write_feed_file
from contest.trials.stream.boundary import boundary_cases
from contest.trials.stream.sink import kill_trials, new_checkpoint_case, replay_case
from contest.trials.stream.stage import (
    CHILD_TIMEOUT_S,
    Feeder,
    Stage,
    batch_lines,
    check_table,
    freshness_figures,
    lag_summary,
    make_stage,
    read_text,
    start_live_stream,
)
from meta.stream import visible


def freshness(
    stage: Stage, rate: float, files: int, rows: int, cores: int, seed: int, say: Say
) -> Row:
    """Feed `files` files at `rate` files/s into a running query; landing -> visible."""
    logs = stage.root / stage.name / "logs"
    log = logs / "stream.log"
    proc, start = start_live_stream(stage, log)
    # A warm-up file first (the first micro-batch of a JVM starts Spark's Python
    # workers): measured from the next one on, once it is visible.

    table = stage.table()
    warm = str(write_feed_file(stage.incoming, 0, rows, seed))
    while not any(warm in b.source_files for b in visible(stage.conn, table)):
        if proc.poll() is not None or time.monotonic() - start > CHILD_TIMEOUT_S:
            kill_group(proc)
            raise RunError(f"the warm-up file never became visible: see {log}.err")
        time.sleep(0.1)
    feeder = Feeder(stage.incoming, rows, 1.0 / rate, seed, most=files)
    feeder.start()
    seen: dict[str, float] = {}
    while time.monotonic() - start < CHILD_TIMEOUT_S and proc.poll() is None:
        now = time.time()
        for b in visible(stage.conn, table):
            for f in b.source_files:
                seen.setdefault(f, now)
        if len(seen) >= files + 1 and not feeder.is_alive():
            break
        time.sleep(0.1)
    fed = feeder.stop()
    measured = list(feeder.files)
    kill_group(proc)
    lines = [
        b for b in batch_lines(read_text(log.with_suffix(".err"))) if b["status"] == "committed"
    ][1:]  # the warm-up's batch apart
    check = check_table(stage, fed)
    lags = sorted(seen[str(p)] - p.stat().st_mtime for p in measured if str(p) in seen)
    busy = sum(b["write_s"] + b["commit_s"] for b in lines)
    total_rows = sum(b["rows"] for b in lines)
    last_seen = max((seen[str(p)] for p in measured if str(p) in seen), default=0.0)
    span = last_seen - min(p.stat().st_mtime for p in measured) if lags else 0.0
    say(
        f"freshness at {rate:g} files/s ({rate * rows:,.0f} rows/s): "
        f"{lag_summary(lags)}, {len(lines)} micro-batches; "
        f"{'exact' if check.exact else check.detail}"
    )
    figures = freshness_figures(
        rate, rows, len(measured), lags, len(lines), total_rows, span, busy, cores
    )
    return figures | {
        "exact": check.exact and len(lags) == len(measured),
    }


def measure(
    cfg: Config,
    conn: Any,
    *,
    trials: int,
    rows: int,
    rates: Sequence[float],
    rate_files: int,
    cores: int,
    seed: int,
    say: Say = print,
    formats: Sequence[str] = ("lakesoul",),
    peer_trials: int = 3,
    meta_batches: int = 0,
    meta_history: int = 0,
    master: str = "",
    boundary_kills: int = 0,
    all_sinks: bool = False,
    stamp: Stamper = no_stamp,
) -> list[Row]:
    """Every part's rows, each stamped (`stamp`) as its part ends: the noise of a row
    is that of its own part, not of the whole sitting."""
    root = (cfg.work_path / "bench" / "stream").absolute()
    rng = random.Random(seed)
    out: list[Row] = []
    if meta_batches:
        record = commit_cost(conn, cfg, meta_batches, 0, say)
        out.append({"kind": "metadata", "format": "lakesoul (harness)", **record, **stamp()})
        if meta_history:
            record = commit_cost(conn, cfg, min(meta_batches, 100), meta_history, say)
            out.append({"kind": "metadata", "format": "lakesoul (harness)", **record, **stamp()})
    for fmt in formats if boundary_kills else ():  # each format's own commit boundary
        cases = boundary_cases(
            cfg, conn, root, fmt, cores, master, boundary_kills, rows, seed, say, all_sinks
        )
        part = stamp()
        out += [{**r, **part} for r in cases]
    peers = [f for f in formats if f != "lakesoul"]
    if peers:
        out += measure_peers(
            cfg,
            peers,
            trials=peer_trials,
            rows=rows,
            cores=cores,
            seed=seed,
            say=say,
            rates=rates,
            rate_files=rate_files,
            master=master,
            all_sinks=all_sinks,
            stamp=stamp,
        )
    if "lakesoul" not in formats:
        return out
    if trials:
        stage = make_stage(cfg, conn, root, "stream_bench_faults", cores, master)
        faults = [kill_trials(stage, trials, rows, rng, seed, say)]
        faults.append(replay_case(stage, say))
        faults.append(new_checkpoint_case(stage, say))
        part = stamp()
        out += [{"kind": "fault", "format": "lakesoul (harness)", **r, **part} for r in faults]
    for i, rate in enumerate(rates if rate_files else ()):
        st = make_stage(cfg, conn, root, f"stream_bench_rate{i}", cores, master)
        out.append(
            {
                "kind": "freshness",
                "format": "lakesoul (harness)",
                **freshness(st, rate, rate_files, rows, cores, seed, say),
                **stamp(),
            }
        )
    return out


class StreamBench(Benchmark):
    name = "stream"
    stem = "streaming"
    summary = "streaming upserts: kill -9, replay, new checkpoint; freshness, throughput"
    description = (
        "`contest stream run` as a child process over a fed folder: kill -9 at random "
        "moments (--trials) and restarts, a replayed micro-batch, a second query over the "
        "consumed folder; the table checked against the oracle after each. Then freshness "
        "(file landing to visible in a read) and throughput at each --rates. Results to "
        "<out>/streaming.md and streaming.jsonl."
    )
    options = (
        Option(
            "--trials",
            "kill -9 trials of the harness's sink (0 = none of its fault cases)",
            int,
            20,
            **at_least(0),
        ),
        Option("--rows", "rows per fed file", int, 500, **at_least(2)),
        Option(
            "--boundary-kills",
            "kill -9s at each format's own commit boundary, then a symlinked source (0 = none)",
            int,
            0,
            **at_least(0),
        ),
        Option(
            "--rates",
            "feed rates, files per second, comma-separated or repeated",
            float,
            [0.5, 2.0],
            many=True,
        ),
        Option(
            "--rate-files",
            "files fed at each rate (0 = no freshness runs)",
            int,
            20,
            **at_least(0),
        ),
        Option(
            "--cores",
            "cores of the streaming query: local[N], or at most N of --master's",
            int,
            2,
            **POSITIVE,
        ),
        Option(
            "--formats",
            "table formats: " + ", ".join(registry.stream_names()) + " (lakesoul: the "
            "harness's sink; the others each a peer format's)",
            str,
            ["lakesoul"],
            many=True,
        ),
        Option(
            "--sinks",
            "each peer format's streaming sinks: default (its first) or all (its own and "
            "the harness's, rows apart)",
            str,
            "default",
            valid=lambda v: v in ("default", "all"),
            rule="default or all",
        ),
        Option(
            "--peer-trials",
            "kill -9 trials of each peer format (0 = none of its fault cases)",
            int,
            3,
            **at_least(0),
        ),
        Option(
            "--master",
            "run the streams on this cluster (spark://HOST:PORT, at most --cores cores; "
            "default: local[--cores])",
            str,
        ),
        Option(
            "--meta-batches",
            "micro-batch commits of the metadata-cost part, commit only (0 = skip)",
            int,
            1000,
            **at_least(0),
        ),
        Option(
            "--meta-history",
            "commits of a synthetic history before a second, shorter metadata run (0 = none)",
            int,
            0,
            **at_least(0),
        ),
        SEED,
    )

    def check(self, options: Any) -> None:
        super().check(options)
        for name in options.formats:
            registry.by_stream(name)  # one line naming an unknown format
        if any(r <= 0 for r in options.rates):
            raise UsageError(f"--rates must be positive, got {options.rates}")

    def run(self, sitting: Sitting) -> bool:
        cfg, opts = sitting.config(), sitting.options
        if opts.master:
            check_master(opts.master)
        load_start = os.getloadavg()[0]  # the machine is shared: the load is labelled
        records = measure(
            cfg,
            resolve_connection(cfg),
            trials=opts.trials,
            rows=opts.rows,
            rates=opts.rates,
            rate_files=opts.rate_files,
            cores=opts.cores,
            seed=opts.seed,
            say=sitting.say,
            formats=opts.formats,
            peer_trials=opts.peer_trials,
            meta_batches=opts.meta_batches,
            meta_history=opts.meta_history,
            master=opts.master or "",
            boundary_kills=opts.boundary_kills,
            all_sinks=opts.sinks == "all",
            stamp=lambda: {"stamp": sitting.stamp()},
        )
        when = utc_now()
        load = {"load_1m_start": load_start, "load_1m_end": os.getloadavg()[0]}
        where = {"host": os.uname().nodename, "master": opts.master or f"local[{opts.cores}]"}
        typed = sitting.record(*({**r, "when": when, **where, **load} for r in records))
        return all(r.exact for r in typed)

    def render(self, records: Sequence[StreamRecord]) -> str:
        return page.render(records)
