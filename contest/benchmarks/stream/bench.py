"""`contest bench stream`: streaming upserts under faults, and their freshness.

Each case runs `contest stream run` as a child process (its own JVM) over a folder that
a feed fills, and checks the table against the oracle over exactly the files the
micro-batches committed (recorded with each commit): no file lost, none counted twice
(the `requests` sums would show it).

- kill -9: one stream, killed at random moments `trials` times (after 0-2 logged
  commits plus up to a second; a kill before the first commit too), restarted from its
  checkpoint each time while the feed goes on. The sink waits a second after each
  commit before Spark's checkpoint records the batch (`--pause-after-commit`), so most
  kills after a commit land in that window and the restart replays the batch. After
  each kill the table is exact, and at the end an available-now run drains the folder:
  every fed file consumed once.
- replay: the checkpoint's last commit-log entry deleted (a crash between the table's
  commit and Spark's), the query restarted (a new run id, the checkpoint's query id):
  Spark runs the batch again, the sink skips it.
- new checkpoint: a second query over the consumed folder is refused (it would count
  every file again).
- freshness and throughput at a few feed rates: landing (the file's modification time)
  to visible (the first moment the head snapshot, what a read starts from, holds its
  commit; polled every 0.1 s), and rows per core per second of the micro-batches' own
  work (write + commit).

The stream under test (its folders, child process, feed and check) is
contest/trials/stream/stage.py.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Sequence
from typing import Any

from contest.benchmarks.stream.boundary_page import render_boundary
from contest.benchmarks.stream.meta import commit_cost, render_meta
from contest.benchmarks.stream.peers import (
    measure_peers,
    render_peers,
    render_per_format,
    sink_of,
    who,
)
from contest.config import Config
from contest.errors import RunError, UsageError
from contest.infra.cluster import check_master
from contest.infra.noise import BUSY_RULE
from contest.infra.postgres import resolve_connection
from contest.infra.proc import kill_group
from contest.peers import registry
from contest.results.streaming import StreamFault, StreamFreshness, StreamRecord, series_key
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
from contest.trials.breaks import broken
from contest.trials.stream.boundary import boundary_cases
from contest.trials.stream.stage import (
    CHILD_TIMEOUT_S,
    Feeder,
    Stage,
    batch_lines,
    check_table,
    drain,
    freshness_figures,
    lag_summary,
    logged,
    make_stage,
    read_text,
    start_live_stream,
)
from meta.stream import batches, visible


def kill_trials(
    stage: Stage, trials: int, rows: int, rng: random.Random, seed: int, say: Say
) -> Row:
    logs = stage.root / stage.name / "logs"
    feeder = Feeder(stage.incoming, rows, 1.0, seed)
    feeder.start()
    replayed = 0
    bad: list[str] = []
    kills_after_commit = 0
    for i in range(trials):
        log = logs / f"trial-{i:02d}.log"
        err = log.with_suffix(".err")
        # After 0-2 logged commits plus up to a second; 0: a moment up to 2 s after the
        # query started (before its first commit, mostly).
        after = rng.randint(0, 2)
        then = rng.uniform(0.0, 2.0) if after == 0 else rng.uniform(0.0, 1.0)
        cmd = stage.command(
            "--trigger", "processing-time", "--interval", "0.5",
            "--max-files-per-trigger", "4", "--pause-after-commit", "1.0",
        )  # fmt: skip
        kill = broken(
            cmd,
            log,
            stage.env,
            stage.root,
            until=logged(err, after, "committed"),
            within_s=CHILD_TIMEOUT_S,
            poll_s=0.05 if after == 0 else 0.02,
            then_s=then,
        )
        exited = kill.exited
        lines = batch_lines(read_text(err))
        replayed += sum(b["status"] == "replayed" for b in lines)
        kills_after_commit += any(b["status"] == "committed" for b in lines)
        check = check_table(stage)
        say(
            f"kill -9 trial {i + 1}/{trials}: after {kill.at_s:.1f} s, "
            f"{sum(b['status'] == 'committed' for b in lines)} commit(s) logged, "
            f"{check.consumed} file(s) in the table: {'exact' if check.exact else check.detail}"
            + (f" (the child had exited: {exited})" if exited is not None else "")
        )
        if not check.exact or exited not in (None, -9):
            bad.append(f"trial {i + 1}: {check.detail or f'child exited {exited}: see {err}'}")
    fed = feeder.stop()
    code, text = drain(stage, logs / "drain.log")
    replayed += sum(b["status"] == "replayed" for b in batch_lines(text))
    final = check_table(stage, fed)
    if code != 0 or not final.exact:
        bad.append(f"drain: exit {code}, {final.detail}")
    say(
        f"kill -9: {trials} trials, {len(fed)} files fed, {final.consumed} consumed once, "
        f"{final.double} twice, {replayed} replayed batch(es) skipped: "
        f"{'exact' if not bad else bad[0]}"
    )
    return {
        "case": "kill -9 at random moments, restart from the checkpoint",
        "trials": trials,
        "kills_after_a_commit": kills_after_commit,
        "files_fed": len(fed),
        "files_consumed": final.consumed,
        "lost_files": len(fed) - final.consumed,
        "double_commits": final.double,
        "batches_replayed": replayed,
        "rows": final.rows,
        "exact": not bad,
        "problems": bad[:5],
    }


def replay_case(stage: Stage, say: Say) -> Row:
    """The checkpoint's last commit-log entry deleted, then a restart."""
    logs = stage.root / stage.name / "logs"
    before = batches(stage.conn, stage.table())
    commits = stage.checkpoint / "commits"
    last = max(int(p.name) for p in commits.iterdir() if p.name.isdigit())
    (commits / str(last)).unlink()  # this bench's own checkpoint
    (commits / f".{last}.crc").unlink(missing_ok=True)
    code, text = drain(stage, logs / "replay.log")
    lines = batch_lines(text)
    after = batches(stage.conn, stage.table())
    check = check_table(stage)
    skipped = [b for b in lines if b["status"] == "replayed"]
    runs = {b.run_id for b in before if b.batch_id == last}
    new_run = {b.get("run_id") for b in skipped}
    ok = (
        code == 0
        and [b["batch_id"] for b in skipped] == [last]
        and after == before
        and check.exact
        and not (runs & new_run)
    )
    say(
        f"replay: batch {last} run again by Spark under a new run id, "
        f"{'skipped' if skipped else 'NOT skipped'}; "
        f"table {'exact' if check.exact else check.detail}"
    )
    return {
        "case": "replay: last commit-log entry deleted, restart (new run id, same query id)",
        "trials": 1,
        "files_consumed": check.consumed,
        "lost_files": 0,
        "double_commits": check.double + (len(after) - len(before)),
        "batches_replayed": len(skipped),
        "rows": check.rows,
        "exact": ok,
        "problems": [] if ok else [f"exit {code}; skipped {skipped}; {check.detail}"],
    }


def new_checkpoint_case(stage: Stage, say: Say) -> Row:
    """A second query (a new checkpoint, so a new query id) over the consumed folder."""
    logs = stage.root / stage.name / "logs"
    before = batches(stage.conn, stage.table())
    other = stage.root / stage.name / "checkpoint-2"
    code, text = drain(stage, logs / "new-checkpoint.log", other)
    after = batches(stage.conn, stage.table())
    check = check_table(stage)
    refused = code != 0 and "was committed to" in text
    ok = refused and after == before and check.exact
    say(f"new checkpoint over the consumed folder: {'refused' if refused else 'NOT refused'}")
    return {
        "case": "new query id (a new checkpoint) over the consumed folder: refused",
        "trials": 1,
        "files_consumed": check.consumed,
        "lost_files": 0,
        "double_commits": check.double + (len(after) - len(before)),
        "batches_replayed": 0,
        "rows": check.rows,
        "exact": ok,
        "problems": [] if ok else [f"exit {code}: {text.strip().splitlines()[-1:]}"],
    }


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


def _or_dash(value: object) -> str:
    """A figure, or "-" where the format gives none (Paimon's own sink times no batch)."""
    return "-" if value is None else str(value)


def is_peer(r: StreamRecord) -> bool:
    """A record of a peer format's stream (not the harness's LakeSoul sink)."""
    return not r.format.startswith("lakesoul")


def _load(rows: Sequence[StreamRecord]) -> str:
    """The sitting's load label (1-minute load average at its start and end; 2 cores)."""
    first = rows[0] if rows else None
    if first is None or first.load_1m_start is None or first.load_1m_end is None:
        return ""
    return (
        f"; load average {first.load_1m_start:.1f} at its start, "
        f"{first.load_1m_end:.1f} at its end, on 2 cores shared with other engineers"
    )


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
        own = [r for r in records if not is_peer(r)]
        newest = own[-1].sitting if own else None  # a peers-only sitting aside
        # Of each kind, the newest sitting that ran it (a sitting may run some parts only).
        last = {r.kind: r.sitting for r in own}
        rows = [r for r in own if r.sitting == last[r.kind]]
        # Each peer format's newest record of each kind (and feed rate), whichever
        # sitting ran it last.
        peers = sorted((r for r in records if is_peer(r)), key=lambda r: r.sitting or "")
        rows += list({(*series_key(r), sink_of(r)): r for r in peers}.values())
        lines = [
            "# Streaming upserts, exactly once",
            "",
            "`contest bench stream`: `contest stream run` (Spark Structured Streaming, file "
            "source, `foreachBatch`) as a child process over a folder that `contest stream "
            "feed`'s generator fills; each micro-batch one LakeSoul commit with the next "
            "version, (checkpoint query id, batch id, source files) recorded in the commit's "
            "transaction. After each case the merged table is compared with the oracle "
            "(DuckDB) over exactly the files the committed micro-batches consumed. The "
            "newest sitting that ran each part is shown"
            + (f" (the newest: {newest})" if newest else "")
            + _load(rows)
            + ".",
            "",
            "## Faults",
            "",
            "| format | case | trials | files fed / consumed | lost | double commits "
            "| replayed batches skipped | table = oracle |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            if not isinstance(r, StreamFault) or r.table_commits is not None:
                continue
            fed = r.files_fed
            lines.append(
                f"| {r.format} | {r.case} | {r.trials} "
                f"| {fed if fed is not None else '-'} / {r.files_consumed} "
                f"| {r.lost_files} | {r.double_commits} | {r.batches_replayed} "
                f"| {'yes' if r.exact else 'NO: ' + '; '.join(r.problems)} |"
            )
        lines += render_boundary(rows) + render_peers(rows) + render_meta(rows)
        lines += [
            "",
            "## Freshness and throughput",
            "",
            "Freshness: a file's landing (its modification time, set when the feed renames "
            "it into the folder) to the first moment the table's head snapshot (where every "
            "read starts) holds its micro-batch, polled every 0.1 s; for a peer format, the "
            "first moment its log (Delta's `_delta_log`, Hudi's timeline, Paimon's "
            "snapshots) holds the commit of the micro-batch that read the file (the k-th "
            "data commit is the k-th micro-batch with files, checked: as many commits as "
            "micro-batches). Throughput: rows per "
            "core per second of the micro-batches' own work (write + commit), and rows per "
            "second from the first landing to the last visible. A warm-up file first (the "
            "first micro-batch of a JVM starts Spark's Python workers), not measured. "
            "The machine is shared by "
            "several engineers: timings are indicative only. Noise: other work's share of "
            "the CPUs, mean / highest 2 s, over the interval named (the row's own part; in "
            "rows stamped before parts were, the whole sitting), `-`: not measured; no "
            "freshness run records the noise of its own jobs, so no row is judged busy (the "
            f"one rule: {BUSY_RULE}).",
            "",
            "| format (, sink) | sitting | feed (files/s × rows) | files | micro-batches "
            "| freshness p50 s | p99 s | max s | rows/s | rows/core/s (batch work) | cores "
            "| noise | exact |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in rows:
            if not isinstance(r, StreamFreshness):
                continue
            label = who(r) if is_peer(r) else r.format
            lines.append(
                f"| {label} | {r.sitting or '-'} | {r.rate_files_s:g} × {r.rows_per_file:,} "
                f"| {r.files} | {r.micro_batches} | {r.freshness_p50_s} "
                f"| {r.freshness_p99_s} | {r.freshness_max_s} | {_or_dash(r.rows_per_s)} "
                f"| {_or_dash(r.rows_per_core_s)} | {r.cores} "
                f"| {r.stamp.summary() if r.stamp else '-'} | {'yes' if r.exact else 'NO'} |"
            )
        lines += render_per_format()
        return "\n".join(lines)
