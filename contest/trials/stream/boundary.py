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

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from contest.config import Config
from contest.errors import UsageError
from contest.evaluation.jobs import cli_command
from contest.infra.proc import spawn, wait_bounded
from contest.peers import formats, registry
from contest.peers.registry import StreamTable
from contest.sitting import Row, Say
from contest.stream.feed import write_feed_file
from contest.trials.breaks import broken
from contest.trials.stream.peer import compare, expected_over, peer_stage, read_peer
from contest.trials.stream.stage import (
    CHILD_TIMEOUT_S,
    Feeder,
    Stage,
    batch_lines,
    check_table,
    drain,
    make_stage,
    read_text,
)

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


def restart(stage: Stage, log: Path) -> tuple[int, str, list[str]]:
    """The stream restarted from its checkpoint until the folder is drained: its exit
    code, stderr, and each micro-batch's status (committed, replayed, repaired)."""
    code, text = drain(stage, log)
    return code, text, [b["status"] for b in batch_lines(text)]


def _kill_at_commit(stage: Stage, fmt: str, log: Path, say: Say) -> str | None:
    """One run of the stream, killed the moment the table's commit record grows; the
    window it landed in (None: the child ended or timed out first)."""
    cmd = stage.command("--trigger", "processing-time", "--interval", "0.25")
    cmd += ["--max-files-per-trigger", "2"]
    base = commits(stage, fmt)
    kill = broken(
        cmd,
        log,
        stage.env,
        stage.root,
        until=lambda: commits(stage, fmt) > base,
        within_s=CHILD_TIMEOUT_S,
        poll_s=0.002,
    )
    if kill.exited not in (None, -signal.SIGKILL):
        say(f"{fmt}: the stream exited {kill.exited} before a commit: see {log}.err")
        return None
    return window(stage, fmt)


def _is_peer(fmt: str) -> bool:
    """A peer format's stream (the others: the harness's LakeSoul sink)."""
    return registry.by_stream(fmt).peer is not None


def _final(stage: Stage, fmt: str, fed: list[Path]) -> tuple[bool, str, int]:
    """(table = oracle over every fed file, what differs, rows)."""
    if not _is_peer(fmt):
        check = check_table(stage, fed)
        return check.exact and check.double == 0, check.detail, check.rows

    actual = read_peer(stage, fmt, stage.root / stage.name / "result")
    expected = expected_over(stage, fed)
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
    code, text, statuses = restart(stage, logs / "boundary-drain.log")
    replayed += statuses.count("replayed")
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


def first_commit_trials(
    new_stage: Callable[[str], Stage], fmt: str, trials: int, rows: int, say: Say
) -> Row:
    """`trials` new tables, each stream killed the moment its table's first commit
    record appears (the table's creation and first commit: LakeSoul's first commit row,
    Delta's version 0, Hudi's first completed instant, Paimon's snapshot-1), restarted
    from its checkpoint until the folder is drained, and checked against the oracle: a
    replay of a first commit is verified by the format's own reader, never assumed."""
    windows: dict[str, int] = {}
    replayed = repaired = fed_total = 0
    problems: list[str] = []
    for i in range(trials):
        stage = new_stage(f"_first{i}")
        logs = stage.root / stage.name / "logs"
        fed = [write_feed_file(stage.incoming, j, rows) for j in range(2)]
        fed_total += len(fed)
        where = _kill_at_commit(stage, fmt, logs / "kill.log", say)
        if where is None:
            problems.append(f"table {i + 1}: no first commit to kill at (see {logs}/kill.err)")
            continue
        windows[where] = windows.get(where, 0) + 1
        code, text, statuses = restart(stage, logs / "drain.log")
        replayed += statuses.count("replayed")
        repaired += statuses.count("repaired")
        exact, detail, _ = _final(stage, fmt, fed)
        if code != 0:
            problems.append(f"table {i + 1}: restart exit {code}: {text.strip().splitlines()[-1:]}")
        elif not exact:
            problems.append(f"table {i + 1}: {detail}")
        say(f"{fmt} first-commit kill {i + 1}/{trials}: {where}, {statuses or 'no batch'}")
    return {
        "case": "kill -9 at a new table's first commit, restart from the checkpoint",
        "trials": trials,
        "windows": windows,
        "files_fed": fed_total,
        "batches_replayed": replayed,
        "batches_repaired": repaired,
        "rows": None,
        "exact": not problems,
        "problems": problems[:5],
    }


def after_compact_trial(stage: Stage, fmt: str, kills: int, rows: int, say: Say) -> Row:
    """A table with commits, compacted by `contest compact` (the format's own
    compaction), then `kills` streams each killed at the next commit record, restarted,
    and the table checked against the oracle over every fed file."""
    logs = stage.root / stage.name / "logs"
    fed = [write_feed_file(stage.incoming, j, rows) for j in range(2)]
    problems: list[str] = []
    code, text = drain(stage, logs / "before-compact.log")
    if code != 0:
        problems.append(f"first run: exit {code}: {text.strip().splitlines()[-1:]}")
    code = compact(stage, fmt, logs / "compact.log")
    if code != 0:
        problems.append(f"contest compact: exit {code} (see {logs}/compact.err)")
    windows: dict[str, int] = {}
    replayed = repaired = 0
    for i in range(kills if not problems else 0):
        fed += [write_feed_file(stage.incoming, len(fed) + j, rows) for j in range(2)]
        where = _kill_at_commit(stage, fmt, logs / f"after-compact-{i:02d}.log", say)
        if where is None:
            problems.append(f"kill {i + 1}: no commit to kill at")
            continue
        windows[where] = windows.get(where, 0) + 1
        code, text, statuses = restart(stage, logs / f"after-compact-drain-{i:02d}.log")
        replayed += statuses.count("replayed")
        repaired += statuses.count("repaired")
        if code != 0:
            problems.append(f"kill {i + 1}: restart exit {code}: {text.strip().splitlines()[-1:]}")
    exact, detail, n_rows = _final(stage, fmt, fed)
    if not exact and not problems:
        problems.append(detail)
    verdict = problems[0] if problems else "exact"
    say(f"{fmt}: {kills} kills after a compaction ({windows}): {verdict}")
    return {
        "case": "kill -9 at a commit after contest compact, restart from the checkpoint",
        "trials": kills,
        "windows": windows,
        "files_fed": len(fed),
        "batches_replayed": replayed,
        "batches_repaired": repaired,
        "rows": n_rows,
        "exact": not problems,
        "problems": problems[:5],
    }


def compact(stage: Stage, fmt: str, log: Path) -> int:
    """`contest compact` of the stage's table (a peer format's own compaction, or the
    harness's of a LakeSoul table), in a child like the stream's."""
    impl = registry.by_stream(fmt)
    if impl.peer is not None:
        peer = formats.for_stream(impl.name).name
        cmd = cli_command(stage.config_file, "--set", f"peer.format={peer}", "compact")
    else:
        cmd = cli_command(stage.config_file, "compact")
    cmd += ["--table", str(stage.table_path)]
    return wait_bounded(spawn(cmd, log, stage.env, stage.root), CHILD_TIMEOUT_S)


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
    all_sinks: bool = False,
) -> list[Row]:
    """The format's boundary kills, its symlinked-source trial, its first-commit kills
    (each on a new table) and its kills after a compaction, each on a fresh table; for a
    peer, through its default sink or (`all_sinks`) each of its sinks, rows apart."""
    if not _is_peer(fmt):
        return _cases(
            lambda suffix: make_stage(
                cfg, conn, root, f"stream_bench_{suffix.strip('_')}", cores, master
            ),
            fmt,
            {"format": "lakesoul (harness)"},
            kills,
            rows,
            seed,
            say,
        )
    found = formats.for_stream(fmt)
    default = found.stream_sink()
    out: list[Row] = []
    for sink in found.stream_sinks() if all_sinks else (default,):
        tag = "" if sink == default else "_" + sink.name.replace("-", "_")

        def new_stage(suffix: str, tag: str = tag, sink: str = sink.name) -> Stage:
            return peer_stage(cfg, root, fmt, cores, master, f"{tag}{suffix}", sink)

        label = {"format": fmt, "sink": sink.name}
        out += _cases(new_stage, fmt, label, kills, rows, seed, say)
    return out


def _cases(
    new_stage: Callable[[str], Stage],
    fmt: str,
    label: Row,
    kills: int,
    rows: int,
    seed: int,
    say: Say,
) -> list[Row]:
    stage = new_stage("_boundary")
    first = boundary_trials(stage, fmt, kills, rows, seed, say)
    second = symlink_trial(stage, fmt, first["files_fed"], say)
    new_table = first_commit_trials(new_stage, fmt, kills, rows, say)
    compacted = after_compact_trial(new_stage("_compacted"), fmt, kills, rows, say)
    cases = (first, second, new_table, compacted)
    return [{"kind": "boundary", **label, **r} for r in cases]
