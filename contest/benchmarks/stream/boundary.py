"""`contest bench stream --boundary-kills N`: kill -9 at each format's own commit
boundary, and a second query over the consumed folder through a symlink.

The random kills of stream.py and stream_peers.py land wherever they land (the 20 of a
sitting never hit Hudi's empty completed instant). Here the bench watches the table's
own commit record and kills the stream's process group the moment a new one appears:
LakeSoul's commit row in PostgreSQL (`contest_stream_batch`), Delta's log file
(`_delta_log/<v>.json`), Hudi's completed instant (`.hoodie/timeline/<t>_<t>.deltacommit`,
which Hudi 1.0.2 creates empty and fills afterwards), Paimon's snapshot file. No pause
after the commit: the kill lands wherever the polling (every few milliseconds) meets the
writer. Each kill is classified by what it left: the table's commit without Spark's
commit-log entry (the window a replay must skip), both, and for Hudi a completed instant
still empty. The stream is restarted from its checkpoint each time while the feed goes
on; then the folder is drained and the table compared with the oracle over every fed
file. Then a new checkpoint over the same folder reached through a symlink: refused.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contest.benchmarks.base import Row, Say
from contest.benchmarks.stream.peers import compare, peer_stage, read_peer
from contest.benchmarks.stream.stage import (
    CHILD_TIMEOUT_S,
    Feeder,
    Stage,
    batch_lines,
    check_table,
    drain,
    make_stage,
    read_text,
)
from contest.config import Config
from contest.data.batches import Batch
from contest.data.oracle import expected_rows
from contest.errors import UsageError
from contest.infra.proc import kill_group, spawn, wait_bounded
from contest.peers import registry
from contest.peers.registry import StreamTable
from contest.results.streaming import StreamBoundary, StreamRecord

# The windows a kill can land in (what it left behind).
TABLE_ONLY = "table commit, no Spark commit"
BOTH = "after Spark's commit"
EMPTY_INSTANT = "Hudi completed instant empty"


def commits(stage: Stage, fmt: str) -> int:
    """The table's own commit records, as the format's folder counts them: the boundary
    the kill aims at."""
    count = registry.by_stream(fmt).commit_records
    if count is None:
        raise UsageError(f"--formats: {fmt} has no commit record to kill at")
    table = StreamTable(stage.table_path, stage.conn, stage.name, stage.cfg.table.namespace)
    return count(table)


def _half_written(stage: Stage, fmt: str) -> bool:
    peer = registry.by_stream(fmt).peer
    return peer is not None and peer.commit_half_written(stage.table_path)


def _ids(folder: Path) -> set[int]:
    return {int(p.name) for p in folder.iterdir() if p.name.isdigit()} if folder.is_dir() else set()


def window(stage: Stage, fmt: str) -> str:
    """What a kill right after a new table commit left: Spark's commit-log entry of the
    batch it planned last (offsets/<n>) missing is the replay window."""
    if _half_written(stage, fmt):
        return EMPTY_INSTANT
    offsets, commits = _ids(stage.checkpoint / "offsets"), _ids(stage.checkpoint / "commits")
    return TABLE_ONLY if offsets and max(offsets) not in commits else BOTH


def _kill_at_commit(stage: Stage, fmt: str, log: Path, say: Say) -> str | None:
    """One run of the stream, killed the moment the table's commit record grows; the
    window it landed in (None: the child ended or timed out first)."""
    cmd = stage.command("--trigger", "processing-time", "--interval", "0.25")
    cmd += ["--max-files-per-trigger", "2"]
    proc = spawn(cmd, log, stage.env, stage.root)
    base, start = commits(stage, fmt), time.monotonic()
    try:
        while proc.poll() is None and time.monotonic() - start < CHILD_TIMEOUT_S:
            if commits(stage, fmt) > base:
                os.killpg(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.002)
        exited = proc.poll()
    finally:
        kill_group(proc)
    if exited not in (None, -signal.SIGKILL):
        say(f"{fmt}: the stream exited {exited} before a commit: see {log}.err")
        return None
    return window(stage, fmt)


def _final(stage: Stage, fmt: str, fed: list[Path]) -> tuple[bool, str, int]:
    """(table = oracle over every fed file, what differs, rows)."""
    if fmt == "lakesoul":
        check = check_table(stage, fed)
        return check.exact and check.double == 0, check.detail, check.rows

    actual = read_peer(stage, fmt, stage.root / stage.name / "result")
    ordered = sorted(fed, key=lambda p: p.name)
    expected = expected_rows([Batch(i, str(p), 0, 0, i) for i, p in enumerate(ordered)])
    diff = compare(actual, expected)
    detail = "" if actual == expected else (
        f"{diff['double_keys']} keys counted twice, {diff['lost_keys']} lost, "
        f"{diff['other_keys']} otherwise different"
    )  # fmt: skip
    return actual == expected, detail, len(actual)


def boundary_trials(stage: Stage, fmt: str, kills: int, rows: int, seed: int, say: Say) -> Row:
    """`kills` runs each killed at the format's own commit boundary, restarted from the
    checkpoint while the feed goes on; then the folder drained and the table checked."""
    logs = stage.root / stage.name / "logs"
    feeder = Feeder(stage.incoming, rows, 0.5, seed)
    feeder.start()
    windows: dict[str, int] = {}
    replayed = 0
    problems: list[str] = []
    try:
        for i in range(kills):
            log = logs / f"boundary-{i:02d}.log"
            where = _kill_at_commit(stage, fmt, log, say)
            lines = batch_lines(read_text(log.with_suffix(".err")))
            replayed += sum(b["status"] == "replayed" for b in lines)
            if where is None:
                problems.append(f"kill {i + 1}: no commit to kill at (see {log}.err)")
                continue
            windows[where] = windows.get(where, 0) + 1
            say(f"{fmt} boundary kill {i + 1}/{kills}: {where}")
    finally:
        fed = feeder.stop()
    code, text = drain(stage, logs / "boundary-drain.log")
    replayed += sum(b["status"] == "replayed" for b in batch_lines(text))
    exact, detail, n_rows = _final(stage, fmt, fed)
    if code != 0:
        problems.append(f"drain: exit {code}: {text.strip().splitlines()[-1:]}")
    if not exact:
        problems.append(detail)
    say(
        f"{fmt}: {kills} kills at the commit boundary ({windows}), {len(fed)} files fed, "
        f"{replayed} replay(s) skipped: {'exact' if not problems else problems[0]}"
    )
    return {
        "case": "kill -9 at the format's own commit boundary, restart from the checkpoint",
        "trials": kills,
        "windows": windows,
        "files_fed": len(fed),
        "batches_replayed": replayed,
        "rows": n_rows,
        "exact": not problems,
        "problems": problems[:5],
    }


def symlink_trial(stage: Stage, fmt: str, fed: int, say: Say) -> Row:
    """A second query (a new checkpoint) over the consumed folder reached through a
    symlink: refused (it would count every file again); the table unchanged."""
    logs = stage.root / stage.name / "logs"
    alias = stage.root / stage.name / "incoming-alias"
    if not alias.is_symlink():
        alias.symlink_to(stage.incoming, target_is_directory=True)
    before = commits(stage, fmt)
    cmd = stage.command("--trigger", "available-now", checkpoint=stage.checkpoint.with_name("cp-2"))
    cmd[cmd.index("--source") + 1] = str(alias)
    log = logs / "symlink.log"
    code = wait_bounded(spawn(cmd, log, stage.env, stage.root), CHILD_TIMEOUT_S)
    text = read_text(log.with_suffix(".err"))
    refused = code != 0 and "was committed to" in text
    unchanged = commits(stage, fmt) == before
    say(f"{fmt}: new checkpoint through a symlink: {'refused' if refused else 'NOT refused'}")
    return {
        "case": "new checkpoint over the consumed folder through a symlink: refused",
        "trials": 1,
        "windows": {},
        "files_fed": fed,
        "batches_replayed": 0,
        "rows": None,
        "exact": refused and unchanged,
        "problems": []
        if refused and unchanged
        else [
            f"exit {code}, {'refused' if refused else 'not refused'}; the table's commits "
            f"{before} before, {commits(stage, fmt)} after"
        ],
    }


def boundary_cases(
    cfg: Config,
    conn: Any,
    root: Path,
    fmt: str,
    cores: int,
    master: str,
    kills: int,
    rows: int,
    seed: int,
    say: Say,
) -> list[Row]:
    """The format's boundary kills and its symlinked-source trial, on a fresh table."""
    if fmt == "lakesoul":
        stage = make_stage(cfg, conn, root, "stream_bench_boundary", cores, master)
    else:
        stage = peer_stage(cfg, root, fmt, cores, master, suffix="_boundary")
    label = "lakesoul (harness)" if fmt == "lakesoul" else fmt
    first = boundary_trials(stage, fmt, kills, rows, seed, say)
    second = symlink_trial(stage, fmt, first["files_fed"], say)
    return [{"kind": "boundary", "format": label, **r} for r in (first, second)]


def render_boundary(rows: Sequence[StreamRecord]) -> list[str]:
    """The boundary-kill table (empty when none ran)."""
    cases = [r for r in rows if isinstance(r, StreamBoundary)]
    if not cases:
        return []
    lines = [
        "",
        "## Kills at each format's own commit boundary, and a symlinked source",
        "",
        "`--boundary-kills N`: the bench polls the table's own commit record every few "
        "milliseconds (LakeSoul's commit row in PostgreSQL, Delta's `_delta_log` file, "
        "Hudi's completed instant, Paimon's snapshot file) and kill -9s the stream the "
        "moment a new one appears (no pause after the commit), restarts it from its "
        "checkpoint while the feed goes on (2 files/s), then drains the folder and "
        "compares the table with the oracle over every fed file. Windows: what the kill "
        f"left: `{TABLE_ONLY}` (the replay window), `{BOTH}` (the kill came later), "
        f"`{EMPTY_INSTANT}` (Hudi 1.0.2's completed instant created, not yet filled). "
        "Then a new checkpoint over the same folder through a symlink. Correctness, not "
        "timing.",
        "",
        "| format | case | sitting | kills | windows the kills landed in | files fed "
        "| replays skipped | table = oracle |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in cases:
        windows = ", ".join(f"{k}: {v}" for k, v in sorted(r.windows.items()))
        verdict = "yes" if r.exact else "NO: " + "; ".join(r.problems)
        lines.append(
            f"| {r.format} | {r.case} | {r.sitting or '-'} | {r.trials} "
            f"| {windows or '-'} | {r.files_fed} | {r.batches_replayed} | {verdict} |"
        )
    return lines
