"""kill -9 of `contest write`, `contest meta merge` and `contest read`: each killed
at a random moment, then what it left is checked and the documented command recovers."""

from __future__ import annotations

import shutil
from collections.abc import Callable

from contest.errors import RunError
from contest.read import output
from contest.trials.breaks import broken, broken_when_logged
from contest.trials.faults.checks import (
    classify_result,
    committed_in_log,
    is_permutation,
    is_sorted,
)
from contest.trials.faults.context import (
    PROC_TIMEOUT_S,
    Ctx,
    check_refuses,
    half_commits,
    merge_read_check,
    resume,
    sweep_orphans,
    table_or_none,
)
from contest.trials.faults.report import Outcome
from meta.commits import committed_versions
from meta.merge import merge_table
from meta.synthetic import generate_history, head_commit_ids, unmerge


def logged_commits(commits: int) -> Callable[[str], bool]:
    """The moment a write's log reports `commits` batches committed."""
    return lambda text: len(committed_in_log(text)) >= commits


# -- 1. kill -9 of `contest write` -----------------------------------------------


def kill_write(ctx: Ctx, trials: int) -> Outcome:
    o = ctx.outcome(
        "kill_write",
        "kill -9 of `contest write`",
        "contest write --resume; contest meta merge; contest read",
    )
    name = "faults_kill_write"
    path = ctx.root / "tables" / name
    cmd = ctx.contest("write", "--data", ctx.data, "--table", path, "--replace")
    logs = ctx.root / "logs" / name
    ref = ctx.reference(cmd, logs, logged_commits(1))
    if ref.code != 0:
        raise RunError(f"reference write failed: see {ref.err}")
    first = ref.moment_s or ref.seconds
    o.notes.append(
        "Kill moments: after k = 0..10 logged commits (random; k = 0 means a random moment "
        "before the first commit) plus up to 0.3 s. `logged` = batches the killed write "
        "logged as committed (its log line is written after the commit returns)."
    )
    ctx.say(f"kill write: reference write {ref.seconds:.1f}s, first commit {first:.1f}s")
    for i in range(trials):
        o.trials += 1
        after = ctx.rng.randint(0, 10)  # commits to wait for before the kill
        log = logs / f"trial-{i:02d}.log"
        # after = 0: a random moment before the first commit; else after `after` logged.
        then = ctx.rng.uniform(0.5, first) if after == 0 else ctx.rng.uniform(0.0, 0.3)
        kill, text = broken_when_logged(
            cmd, log, ctx.env, ctx.root, logged_commits(after), within_s=PROC_TIMEOUT_S, then_s=then
        )
        finished, at = kill.finished, kill.at_s
        logged = committed_in_log(text)
        table = table_or_none(ctx, name)
        kept = set(committed_versions(ctx.conn, table)) if table else set()
        lost = sorted(set(logged) - kept)
        bad = half_commits(ctx, table) if table else []
        removed, left = sweep_orphans(ctx, table) if table else (0, 0)
        report = resume(ctx, name, path)
        table = table_or_none(ctx, name)
        ok, line = merge_read_check(ctx, table, ctx.root / "results" / name)
        ok = ok and report.ok
        o.failures_observed += not finished and len(kept) < 11
        o.lost += len(lost)
        o.half_commits += len(bad)
        o.orphans_removed += removed
        o.orphans_left += left
        o.recovered += ok
        o.details.append(
            {
                "trial": i,
                "kill_after_commits": after,
                "killed_at_s": round(at, 2),
                "finished_before_kill": finished,
                "logged_committed": sorted(logged),
                "committed": sorted(kept),
                "lost": lost,
                "half_commits": bad,
                "orphans_removed": removed,
                "orphans_left": left,
                "resumed_batches": sum(1 for b in report.batches if not b.skipped),
                "check": line,
                "recovered": ok,
            }
        )
        ctx.say(
            f"kill write {i + 1}/{trials}: killed at {at:.1f}s, {len(logged)} logged / "
            f"{len(kept)} committed, lost {len(lost)}, half {len(bad)}, orphans {removed}, "
            f"recovered {ok}"
        )
    return o


# -- 2. kill -9 of `contest meta merge` on a long history ------------------------------


def kill_merge(ctx: Ctx, trials: int, commits: int) -> Outcome:
    o = ctx.outcome(
        "kill_merge",
        f"kill -9 of `contest meta merge` ({commits:,} commits)",
        "contest meta merge",
    )
    name = "faults_kill_merge"
    hist = generate_history(ctx.conn, name, ctx.root / "tables" / name, commits)
    table = hist.table
    _, arrival = head_commit_ids(ctx.conn, table)
    cmd = ctx.contest("meta", "merge", "--table", name)
    logs = ctx.root / "logs" / name
    ref = ctx.reference(cmd, logs)
    if ref.code != 0:
        raise RunError(f"reference merge failed: see {ref.err}")
    span = ref.seconds
    ctx.say(f"kill merge: history of {commits:,} in {hist.seconds:.1f}s, merge {span:.1f}s")
    o.notes.append(
        f"A synthetic history of {commits:,} commits (meta/synthetic.py); before each trial "
        "its head is put back in arrival order without a checkpoint (`unmerge`), so every "
        f"merge replays everything; kills uniform in 0.2 s .. 1.1 x the merge's "
        f"{span:.1f} s. Half-commit = a head that is not a permutation of the live commits."
    )
    for i in range(trials):
        o.trials += 1
        unmerge(ctx.conn, table, arrival)
        delay = ctx.rng.uniform(0.2, span * 1.1)
        log = logs / f"trial-{i:02d}.log"
        finished = broken(cmd, log, ctx.env, ctx.root, within_s=delay).finished
        pversion, head = head_commit_ids(ctx.conn, table)
        intact = is_permutation(head, arrival)
        merged_before = head != arrival
        rerun = merge_table(ctx.conn, table)
        _, after = head_commit_ids(ctx.conn, table)
        ordered = is_permutation(after, arrival) and is_sorted(rerun.partitions[0].versions)
        o.failures_observed += not finished
        o.half_commits += not intact
        o.recovered += ordered and intact
        o.details.append(
            {
                "trial": i,
                "killed_at_s": round(delay, 2),
                "finished_before_kill": finished,
                "head_after_kill": "merged" if merged_before else "arrival order",
                "permutation": intact,
                "rerun_in_version_order": ordered,
            }
        )
        ctx.say(
            f"kill merge {i + 1}/{trials}: at {delay:.1f}s head "
            f"{'merged' if merged_before else 'unmerged'}, permutation {intact}, "
            f"rerun ordered {ordered}"
        )
    return o


# -- 3. kill -9 of `contest read` ---------------------------------------------------


def kill_read(ctx: Ctx, trials: int) -> Outcome:
    o = ctx.outcome(
        "kill_read",
        "kill -9 of `contest read`",
        "contest read (again); contest check refuses a folder without _SUCCESS",
    )
    name = "faults_kill_read"  # its own table: experiments may run apart (--only)
    path = ctx.root / "tables" / name
    report = resume(ctx, name, path)
    if not report.ok:
        raise RunError(f"kill read: the table could not be written: {report.summary()}")
    table = table_or_none(ctx, name)
    base = ctx.root / "read"
    target = base / "result"
    foreign = base / "foreign"
    foreign.mkdir(parents=True, exist_ok=True)
    keep = [foreign / "notes.txt", base / "unrelated.csv"]
    for f in keep:
        f.write_text(f"a user's file: {f.name}\n")
    ok, _ = merge_read_check(ctx, table, target)
    if not ok:
        raise RunError("kill read: the first read is not the oracle's result")
    cmd = ctx.contest("read", "--table", name, "--out", target)
    logs = ctx.root / "logs" / "kill_read"
    ref = ctx.reference(cmd, logs)
    if ref.code != 0:
        raise RunError(f"reference read failed: see {ref.err}")
    span = ref.seconds
    ctx.say(f"kill read: reference read {span:.1f}s")
    states: dict[str, int] = {}
    for i in range(trials):
        o.trials += 1
        old_inode = target.stat().st_ino
        before = {p.name for p in base.iterdir()}
        delay = ctx.rng.uniform(0.5, span * 1.05)
        log = logs / f"trial-{i:02d}.log"
        finished = broken(cmd, log, ctx.env, ctx.root, within_s=delay).finished
        exists = target.is_dir()
        complete = exists and (target / output.SUCCESS_MARKER).exists()
        complete = complete and output.is_previous_result(target)
        state = classify_result(
            exists, complete, target.stat().st_ino if exists else None, old_inode
        )
        states[state] = states.get(state, 0) + 1
        leftovers = [
            p for p in base.iterdir() if p.name.startswith(".result.") and p.name not in before
        ]
        incomplete = [p for p in leftovers if not (p / output.SUCCESS_MARKER).exists()]
        refused = all(
            check_refuses(ctx, folder) for folder in incomplete[:1] + ([] if exists else [target])
        )
        destroyed = [str(f) for f in keep if not f.exists()]
        recovered, line = merge_read_check(ctx, table, target)
        removed = sum(1 for p in leftovers if not p.exists())
        for p in leftovers:  # a later read removes them after 10 minutes; not wait here
            shutil.rmtree(p, ignore_errors=True)
        o.failures_observed += not finished
        o.half_commits += state == "partial"
        o.orphans_left += len(leftovers)
        o.orphans_removed += removed
        o.destroyed += len(destroyed)
        o.recovered += recovered and refused
        o.details.append(
            {
                "trial": i,
                "killed_at_s": round(delay, 2),
                "finished_before_kill": finished,
                "state": state,
                "leftover_folders": [p.name for p in leftovers],
                "check_refused_incomplete": refused,
                "destroyed": destroyed,
                "rerun_check": line,
                "recovered": recovered,
            }
        )
        ctx.say(
            f"kill read {i + 1}/{trials}: at {delay:.1f}s target {state}, "
            f"{len(leftovers)} leftover(s), check refused incomplete {refused}, "
            f"rerun {recovered}"
        )
    o.notes.append(
        f"Kills uniform in 0.5 s .. 1.05 x the read's {span:.1f} s. Target after the kill: "
        + ", ".join(f"{k} {v}" for k, v in sorted(states.items()))
        + " (partial = a folder without _SUCCESS and the tool's marker: never wanted). "
        "Orphans here are staging/old folders left beside the target; a later read removes "
        "them (put back first when it is the only complete result). User files: one in a "
        "foreign folder next to the target and one beside it."
    )
    return o
