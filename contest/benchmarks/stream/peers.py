"""`contest bench stream --formats delta,paimon,hudi`: the fault cases on the peer
formats' own exactly-once sinks (contest/stream/peer.py), honestly counted.

Each format gets one stream: `contest stream run --format F` as a child process over a
folder a feed fills, killed with -9 at random moments (`trials` times; the Delta and
Hudi sinks, the harness's `foreachBatch`, wait a second after each commit as the
LakeSoul sink does, so kills land between its commit and Spark's; a format's own sink
has no such hook and is killed wherever it is), restarted from its checkpoint; then the replay case
(an available-now run drains the folder, the checkpoint's last commit-log entry is
deleted and the query run again: Spark runs that batch again under its old id). Then
the table is read merged by the format's own reader (`contest read` with peer.format,
contest/peers/read.py) and compared with the oracle over every fed file:

- double-counted keys: `requests` above the oracle's (a batch committed twice adds its
  sums again); lost keys: missing, or `requests` below it (a batch never committed);
- commits in the format's log against Spark's micro-batches that read files (its offset
  log and the file source's log in the checkpoint): more commits than micro-batches is a
  double commit.

A double commit is reported with its reproduction: the command lines and folders.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from typing import Any

from contest.config import Config
from contest.data.batches import Batch
from contest.data.changes import changes_of
from contest.data.oracle import expected_rows
from contest.errors import RunError
from contest.infra.proc import kill_group
from contest.peers import formats
from contest.results.streaming import StreamFault, StreamRecord
from contest.sitting import Row, Say, Stamper, no_stamp
from contest.stream.feed import write_feed_file
from contest.trials.breaks import broken_when_logged
from contest.trials.stream.peer import (
    compare,
    expected_over,
    micro_batch_files,
    micro_batches_with_files,
    peer_stage,
    read_peer,
)
from contest.trials.stream.stage import (
    CHILD_TIMEOUT_S,
    Feeder,
    Stage,
    batch_lines,
    drain,
    freshness_figures,
    lag_summary,
    logged,
    read_text,
    start_live_stream,
)


def peer_faults(
    stage: Stage, fmt: str, trials: int, rows: int, rng: random.Random, seed: int, say: Say
) -> Row:
    logs = stage.root / stage.name / "logs"
    feeder = Feeder(stage.incoming, rows, 1.0, seed)
    feeder.start()
    lines: list[dict] = []
    for i in range(trials):
        log = logs / f"trial-{i:02d}.log"
        cmd = stage.command(
            "--trigger", "processing-time", "--interval", "0.5", "--max-files-per-trigger", "2",
            "--pause-after-commit", "1.0",
        )  # fmt: skip
        # After 0-2 micro-batches this run logged, plus up to 3 s (a micro-batch of a
        # peer's sink takes seconds here: the kill lands in one, or between two).
        after = rng.randint(0, 2)
        kill, text = broken_when_logged(
            cmd,
            log,
            stage.env,
            stage.root,
            logged(after),
            within_s=CHILD_TIMEOUT_S,
            poll_s=0.05,
            then_s=rng.uniform(0.0, 3.0),
        )
        got = batch_lines(text)
        lines += got
        say(
            f"{fmt} kill -9 trial {i + 1}/{trials} after {kill.at_s:.1f} s: "
            f"{len(got)} micro-batch(es) logged"
            + (f" (the child had exited: {kill.exited}, see {log}.err)" if kill.finished else "")
        )
    fed = feeder.stop()
    code, text = drain(stage, logs / "drain.log")  # so there is a last batch to replay
    lines += batch_lines(text)
    commits = stage.checkpoint / "commits"
    done = [int(p.name) for p in commits.iterdir() if p.name.isdigit()] if commits.is_dir() else []
    replayed_batch = max(done, default=None)
    if replayed_batch is not None:
        (commits / str(replayed_batch)).unlink()  # this bench's own checkpoint
        (commits / f".{replayed_batch}.crc").unlink(missing_ok=True)
    replay_code, text = drain(stage, logs / "replay.log")
    code = code or replay_code
    lines += batch_lines(text)
    fmt_obj = formats.for_stream(fmt)
    batches = micro_batches_with_files(stage.checkpoint)
    table_commits = fmt_obj.commit_count(stage.table_path)
    actual = read_peer(stage, fmt, stage.root / stage.name / "result")
    expected = expected_over(stage, fed)
    diff = compare(actual, expected)
    double_commits = max(0, table_commits - len(batches))
    exact = code == 0 and actual == expected and double_commits == 0
    skipped = sum(b["status"] == "replayed" for b in lines)
    problems = []
    if not exact:
        problems.append(
            f"exit {code}; {table_commits} commits for {len(batches)} micro-batches; "
            f"{diff['double_keys']} keys counted twice, {diff['lost_keys']} lost, "
            f"{diff['other_keys']} otherwise different"
            + (
                f". Reproduce: {stage.name}: `contest stream run --format {fmt} --trigger "
                f"available-now` over a fed folder, delete <checkpoint>/commits/"
                f"{replayed_batch}, run it again"
                if double_commits or diff["double_keys"]
                else " (no double commit: see the per-format notes)"
            )
        )
    say(
        f"{fmt}: {trials} kills, replay of batch {replayed_batch}; {len(fed)} files fed, "
        f"{len(batches)} micro-batches, {table_commits} table commits; "
        f"{'exact' if exact else problems[0]}"
    )
    return {
        "case": "kill -9 at random moments, drain, then replay of the last batch",
        "trials": trials,
        "replayed_batch": replayed_batch,
        "files_fed": len(fed),
        "files_consumed": len(fed) if diff["lost_keys"] == 0 else None,
        "micro_batches": len(batches),
        "table_commits": table_commits,
        "lost_files": None,
        "lost_keys": diff["lost_keys"],
        "double_keys": diff["double_keys"],
        "double_commits": double_commits,
        "batches_replayed": skipped,
        "rows": len(actual),
        "exact": exact,
        "problems": problems,
    }


def peer_freshness(
    stage: Stage, fmt: str, rate: float, files: int, rows: int, cores: int, seed: int, say: Say
) -> Row:
    """Feed `files` files at `rate` files/s into a running query of the format's sink;
    landing (the file's modification time) -> visible: the first poll (every 0.1 s) at
    which the format's log holds the commit of the micro-batch that read the file, what
    a merged read started then sees. Commits are counted in the format's log
    (`commit_count`); the k-th data commit is the k-th micro-batch that read files (no
    kill and no replay here: one commit a micro-batch, checked at the end)."""
    fmt_obj = formats.for_stream(fmt)
    log = stage.root / stage.name / "logs" / "stream.log"
    proc, start = start_live_stream(stage, log, fmt)

    def wait(done: Any, what: str) -> None:
        while not done():
            if proc.poll() is not None or time.monotonic() - start > CHILD_TIMEOUT_S:
                kill_group(proc)
                raise RunError(f"{fmt}: {what}: see {log.with_suffix('.err')}")
            time.sleep(0.1)

    # A warm-up file first (a JVM's first micro-batch starts Python workers and loads the
    # format's classes): measured from the next one on, once it is visible.
    write_feed_file(stage.incoming, 0, rows, seed)
    wait(lambda: fmt_obj.commit_count(stage.table_path) >= 1, "the warm-up never committed")
    visible_at = [time.time()] * fmt_obj.commit_count(stage.table_path)
    feeder = Feeder(stage.incoming, rows, 1.0 / rate, seed, most=files)
    feeder.start()
    while time.monotonic() - start < CHILD_TIMEOUT_S and proc.poll() is None:
        now = time.time()
        n = fmt_obj.commit_count(stage.table_path)
        visible_at += [now] * (n - len(visible_at))
        if not feeder.is_alive():
            read = micro_batch_files(stage.checkpoint)
            names = set().union(*read.values()) if read else set()
            if n >= len(read) and all(p.name in names for p in feeder.files):
                break
        time.sleep(0.1)
    fed = feeder.stop()
    measured = list(feeder.files)
    # The sink logs a micro-batch (rows, seconds) just after its commit is visible: a few
    # seconds for the last line before the kill.
    settle = time.monotonic() + 30
    while time.monotonic() < settle and proc.poll() is None:
        logged = len(batch_lines(read_text(log.with_suffix(".err"))))
        if logged >= len(micro_batch_files(stage.checkpoint)):
            break
        time.sleep(0.1)
    kill_group(proc)
    read = micro_batch_files(stage.checkpoint)
    order = sorted(read)
    commits = fmt_obj.commit_count(stage.table_path)
    seen: dict[str, float] = {}
    if commits == len(order):
        for k, batch in enumerate(order[: len(visible_at)]):
            for name in read[batch]:
                seen[name] = visible_at[k]
    lags = sorted(seen[p.name] - p.stat().st_mtime for p in measured if p.name in seen)
    lines = batch_lines(read_text(log.with_suffix(".err")))[1:]  # the warm-up's batch apart
    busy = sum(b.get("write_s", 0.0) + b.get("commit_s", 0.0) for b in lines)
    total_rows = sum(b["rows"] for b in lines)
    last_seen = max((seen[p.name] for p in measured if p.name in seen), default=0.0)
    span = last_seen - min(p.stat().st_mtime for p in measured) if lags else 0.0
    actual = read_peer(stage, fmt, stage.root / stage.name / "result")
    ordered = sorted(fed, key=lambda p: p.name)
    expected = expected_rows(
        [Batch(i, str(p), 0, 0, i) for i, p in enumerate(ordered)],
        changes=changes_of(stage.cfg),
    )
    exact = actual == expected and commits == len(order) and len(lags) == len(measured)
    problems = (
        []
        if exact
        else [
            f"{commits} commits for {len(order)} micro-batches; "
            f"{len(lags)} of {len(measured)} files seen; {compare(actual, expected)}"
        ]
    )
    say(
        f"{fmt} freshness at {rate:g} files/s ({rate * rows:,.0f} rows/s): "
        f"{lag_summary(lags)}, {len(order) - 1} micro-batches; "
        f"{'exact' if exact else problems[0]}"
    )
    figures = freshness_figures(
        rate, rows, len(measured), lags, len(order) - 1, total_rows, span, busy, cores
    )
    return figures | {
        "exact": exact,
        "problems": problems,
    }


def measure_peers(
    cfg: Config,
    formats_: list[str],
    *,
    trials: int,
    rows: int,
    cores: int,
    seed: int,
    say: Say = print,
    rates: Sequence[float] = (),
    rate_files: int = 0,
    master: str = "",
    all_sinks: bool = False,
    stamp: Stamper = no_stamp,
) -> list[Row]:
    """Per format and sink (its default, or with `all_sinks` every one it has: its own
    and the harness's, rows apart): the fault cases, then freshness at each feed rate
    (a fresh table each), each row stamped as it is measured."""
    root = (cfg.work_path / "bench" / "stream").absolute()
    rng = random.Random(seed)
    out = []
    for fmt in formats_:
        found = formats.for_stream(fmt)
        default = found.stream_sink()
        for sink in found.stream_sinks() if all_sinks else (default,):
            tag = "" if sink == default else "_" + sink.name.replace("-", "_")
            of = {"format": fmt, "sink": sink.name}
            if trials:  # 0: the freshness runs alone (a sitting of its own)
                stage = peer_stage(cfg, root, fmt, cores, master, tag, sink.name)
                record = peer_faults(stage, fmt, trials, rows, rng, seed, say)
                out.append({"kind": "fault", **of, **record, **stamp()})
            for i, rate in enumerate(rates if rate_files else ()):
                st = peer_stage(cfg, root, fmt, cores, master, f"{tag}_rate{i}", sink.name)
                fresh = peer_freshness(st, fmt, rate, rate_files, rows, cores, seed, say)
                out.append({"kind": "freshness", **of, **fresh, **stamp()})
    return out


def sink_of(r: StreamRecord) -> str:
    """The sink a peer format's record was measured through: its own name, or (lines
    from before sinks were named) the format's default then, which is its default now."""
    return r.sink or formats.for_stream(r.format).stream_sink().name


def who(r: StreamRecord) -> str:
    """A peer record's row label: the format and its sink."""
    return f"{r.format}, {sink_of(r)}"


def _load(r: StreamRecord) -> str:
    load = r.load_1m_start
    return "-" if load is None else f"load {load:.1f}"


def render_peers(rows: Sequence[StreamRecord]) -> list[str]:
    """The peer formats' fault table (empty when none ran)."""
    peers = [r for r in rows if isinstance(r, StreamFault) and r.table_commits is not None]
    if not peers:
        return []
    lines = [
        "",
        "## Peer formats' sinks: the format's own and the harness's",
        "",
        "One stream a format and sink (`own`: the format's documented sink; `foreach-"
        "batch`: the harness's, made exactly once with what the format documents; see "
        "'Per format' below): kill -9 at random moments (restart from the checkpoint each"
        " time), the folder drained, then the checkpoint's last commit-log entry deleted "
        "and the query run again (Spark replays that batch under its id); the table read "
        "by the format's own merged reader and compared with the oracle over every fed "
        "file. Double commits: the format's commits beyond the micro-batches that read "
        "files; keys counted twice: `requests` above the oracle's.",
        "",
        "| format, sink | sitting (load) | kills | replayed batch | files fed | micro-batches "
        "| table commits | double commits | keys counted twice | keys lost "
        "| replays skipped (logged) | table = oracle |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in peers:
        verdict = "yes" if r.exact else "NO: " + "; ".join(r.problems)
        lines.append(
            f"| {who(r)} | {'-' if r.sitting is None else r.sitting} ({_load(r)}) "
            f"| {r.trials} | {r.replayed_batch} | {r.files_fed} "
            f"| {r.micro_batches} | {r.table_commits} | {r.double_commits} "
            f"| {r.double_keys} | {r.lost_keys} | {r.batches_replayed} | {verdict} |"
        )
    return lines


def render_per_format() -> list[str]:
    """What each format's sinks need for exactly once, and which are measured."""
    return [
        "",
        "## Per format",
        "",
        "| format | what it needs for exactly once | measured here |",
        "|---|---|---|",
        "| LakeSoul (this harness) | (query id, batch id) recorded in the commit's "
        "PostgreSQL transaction; the checkpoint's query id, not the run id | yes (above) |",
        "| Delta Lake 3.3.2 | `foreach-batch`, Delta's documented upsert from a stream "
        '(its own `format("delta")` sink only appends): the micro-batch collapsed, then '
        "MERGE with the checkpoint's query id and the batch id as the session settings "
        "`spark.databricks.delta.write.txnAppId` / `txnVersion` (delta-io/delta#1555: the "
        "write options reach DataFrame writes only) | yes (peer table above) |",
        '| Apache Paimon 0.9.0 | `own`, its `format("paimon")` sink; nothing recognises a '
        "replayed batch id (apache/paimon#9666): the aggregation engine sums it again | "
        "yes (peer table above) |",
        "| Apache Hudi 1.0.2 | `foreach-batch`, the harness's: the micro-batch collapsed "
        "by key in source order, then upserted with hudi-merger's record merger; the "
        "checkpoint's query id and the batch id in the commit's extra metadata as Hudi's "
        "own streaming sink records them (`_hudi_streaming_sink_checkpoint`), and before "
        "writing the timeline's latest completed commit holding the query id read as "
        "that sink reads it (`CommitUtils.getValidCheckpointForCurrentWriter`): a batch "
        'id not above it is skipped. `own`, Hudi\'s `format("hudi")` sink with the same '
        "merger: it records and checks the batch id itself, but its dedup before an "
        "upsert combines a key's rows of one micro-batch in no particular order, and a "
        "last-non-NULL column cannot be merged out of order with one ordering value per "
        "row | both (`--sinks all`: rows apart in the peer table above) |",
        "",
    ]
