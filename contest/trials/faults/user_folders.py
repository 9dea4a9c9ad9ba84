"""kill -9 of `contest read` beside a user's hidden folders named like the tool's
(`.result.backup-2024`, `.result.old-mine`, `.result.staging-deadbeef` without the
tool's marker), then the read again: the user's folders survive, the result is exact."""

from __future__ import annotations

import os
import time
from pathlib import Path

from contest.data.checker import compare
from contest.infra.proc import spawn, wait_bounded
from contest.read import output
from contest.trials.breaks import broken, read_text
from contest.trials.faults.checks import one_line_failure, tree_state
from contest.trials.faults.context import Ctx, check_refuses, resume, table_or_none
from contest.trials.faults.report import Outcome
from meta.merge import merge_table

USER_FOLDERS = ("backup-2024", "old-mine", "staging-deadbeef", "old-0badc0de")
AGED_S = 2 * 86400.0  # the user's folders look two days old: past any age rule


def make_user_folders(target: Path) -> list[Path]:
    """A user's folders beside `target`, named `.<name>.<suffix>` (two of them exactly
    as the tool names its own, but without its marker), each with files, two days old."""
    folders = [target.parent / f".{target.name}.{s}" for s in USER_FOLDERS]
    old = time.time() - AGED_S
    for d in folders:
        files = [d / "notes.txt", d / "sub" / "data.csv", d / "result" / "part-00000.parquet"]
        for f in files:
            f.parent.mkdir(parents=True, exist_ok=True)
            if not f.exists():
                f.write_text(f"a user's file: {f.relative_to(target.parent)}\n")
        for p in [*files, *{f.parent for f in files}, d]:
            os.utime(p, (old, old))
    return folders


def age_tool_leftovers(folders: list[Path], by_s: float = 1200.0) -> None:
    """Make the tool's own leftovers (and their markers) look `by_s` old, so that the
    next read's clean-up takes them (it spares younger ones: a read may be writing)."""
    old = time.time() - by_s
    for d in folders:
        for p in (d / output.STAGING_MARKER, d):
            if p.exists():
                os.utime(p, (old, old))


def user_folders(ctx: Ctx, trials: int) -> Outcome:
    o = ctx.outcome(
        "user_folders",
        "kill -9 of `contest read` beside a user's `.result.*` folders",
        "contest read (again)",
    )
    name = "faults_user_folders"
    report = resume(ctx, name, ctx.root / "tables" / name)
    if not report.ok:
        o.not_run = f"table {name} could not be written: {report.summary()}"
        return o
    merge_table(ctx.conn, table_or_none(ctx, name))
    base = ctx.root / "user-folders"
    target = base / "result"
    logs = ctx.root / "logs" / "user_folders"
    cmd = ctx.contest("read", "--table", name, "--out", target)
    folders = make_user_folders(target)
    ref = ctx.reference(cmd, logs)
    span = ref.seconds
    if ref.code != 0:
        o.not_run = f"the first read failed: see {ref.err}"
        return o
    user_state = {d: tree_state(d) for d in folders}
    o.notes.append(
        "A user's folders beside the result folder `result`: "
        + ", ".join(f"`.result.{s}`" for s in USER_FOLDERS)
        + " (two named exactly as the tool names its own, none with its marker), each "
        "with files, their times set two days back. Per trial `contest read` is killed "
        f"(uniform in 0.5 s .. 1.05 x the read's {span:.1f} s), the tool's own leftovers "
        "are aged 20 minutes (so the next read's clean-up takes them) and `contest read` "
        "runs again, a separate process. Destroyed = a user's file changed or gone; "
        "orphans = the tool's leftovers still there after the read again / taken by it; "
        "recovered = the read again exits 0, its result equals the oracle's, and a "
        "leftover without _SUCCESS is refused by `contest check`."
    )
    for i in range(trials):
        o.trials += 1
        before = {p.name for p in base.iterdir()}
        delay = ctx.rng.uniform(0.5, span * 1.05)
        log = logs / f"trial-{i:02d}.log"
        finished = broken(cmd, log, ctx.env, ctx.root, within_s=delay).finished
        leftovers = [p for p in base.iterdir() if p.name not in before]
        incomplete = [p for p in leftovers if not (p / output.SUCCESS_MARKER).exists()]
        refused = all(check_refuses(ctx, p) for p in incomplete[:1])
        age_tool_leftovers(leftovers)
        rlog = logs / f"trial-{i:02d}-again.log"
        code = wait_bounded(spawn(cmd, rlog, ctx.env, ctx.root))
        line = one_line_failure(read_text(rlog.with_suffix(".err"))) if code else None
        exact = code == 0 and compare(target, ctx.expected).ok
        changed = [
            f"{d.name}/{f}"
            for d, state in user_state.items()
            for f, v in state.items()
            if tree_state(d).get(f) != v
        ]
        left = [p for p in leftovers if p.exists()]
        o.failures_observed += not finished
        o.not_one_line += code != 0 and not line
        o.destroyed += len(changed)
        o.orphans_left += len(left)
        o.orphans_removed += len(leftovers) - len(left)
        o.recovered += exact and refused
        o.details.append(
            {
                "trial": i,
                "killed_at_s": round(delay, 2),
                "finished_before_kill": finished,
                "leftover_folders": [p.name for p in leftovers],
                "check_refused_incomplete": refused,
                "again_exit": code,
                "again_line": line,
                "user_files_changed": changed,
                "leftovers_after_again": [p.name for p in left],
                "exact": exact,
            }
        )
        ctx.say(
            f"user folders {i + 1}/{trials}: killed at {delay:.1f}s, {len(leftovers)} "
            f"leftover(s), read again exit {code} exact {exact}, user files changed "
            f"{len(changed)}, leftovers kept {len(left)}"
        )
    return o
