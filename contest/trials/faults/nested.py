"""Tables side by side: a table folder inside another's (or holding it) is refused, and
`vacuum`, `write --replace` and `compact` of one table leave the other table's files,
a user's files in and beside the table's folder, and the other table's result intact."""

from __future__ import annotations

import json
from pathlib import Path

from contest.infra.proc import spawn, wait_bounded
from contest.trials.breaks import read_text
from contest.trials.faults.checks import (
    changed_files,
    names_all,
    one_line_failure,
    tree_state,
)
from contest.trials.faults.context import (
    Ctx,
    merge_read_check,
    resume,
    table_or_none,
)
from contest.trials.faults.report import Outcome
from contest.write.job import WriteMode, run_write
from meta.commits import committed_versions
from meta.merge import merge_table

SHARE = "0,1,2"  # the batches of the table that is vacuumed, replaced and compacted


def user_files(a: Path, base: Path, b: Path) -> list[Path]:
    """A user's files inside table A's folder (plain, hidden, in a sub-folder), beside
    the tables, and inside table B's folder."""
    files = [
        a / "README.txt",
        a / "notes" / "mine.csv",
        a / ".user-hidden" / "keep.txt",
        base / "user-notes.txt",
        b / "mine.txt",
    ]
    for f in files:
        f.parent.mkdir(parents=True, exist_ok=True)
        if not f.exists():
            f.write_text(f"a user's file: {f.name}\n")
    return files


def vacuumed(stdout: str) -> int:
    """The orphan files `contest vacuum --json` reports deleted (0 when unreadable)."""
    try:
        return int(json.loads(stdout).get("orphan_files", 0))
    except (json.JSONDecodeError, ValueError, AttributeError):
        return 0


def nested_tables(ctx: Ctx, trials: int) -> Outcome:
    ns = ctx.cfg.table.namespace
    o = ctx.outcome(
        "nested_tables",
        "nested table folders; vacuum, replace, compact beside another table and a user's files",
        "none needed (a nested table is refused: choose a folder outside every table)",
    )
    base = ctx.root / "nested" / "sib"
    name_a, name_b = "faults_nest_a", "faults_nest_b"
    path_a, path_b = base / "nt_a", base / "nt_a2"  # siblings, one name a prefix of the other
    logs = ctx.root / "logs" / "nested_tables"
    report = resume(ctx, name_b, path_b)
    if not report.ok:
        o.not_run = f"table {name_b} could not be written: {report.summary()}"
        return o
    table_b = table_or_none(ctx, name_b)
    ok_b, line_b = merge_read_check(ctx, table_b, ctx.root / "results" / name_b)
    if not ok_b:
        o.not_run = f"table {name_b} is not the oracle's result: {line_b}"
        return o
    attempts = {
        "inside": (path_a / "inner", "faults_nest_inner", (name_a,)),
        "holding": (base, "faults_nest_outer", (name_a, name_b)),
    }
    o.notes.append(
        f"Per trial: table {name_a} (batches {SHARE}) is rewritten next to {name_b} (all "
        f"batches, folders `nt_a` and `nt_a2`: one name a prefix of the other); a user's "
        "files sit inside `nt_a` (plain, hidden, in sub-folders), beside both and inside "
        f"`nt_a2`. Two writes that would nest a table are started (`nt_a/inner`, and the "
        "folder holding both): each must fail in one line naming itself and the table it "
        "would nest with, creating no table. Then `compact` (after `meta merge`), "
        f"`vacuum --retain 0` and `write --replace --only {SHARE}` of {name_a} in random "
        "order, each a separate process. Destroyed = a file of "
        f"{name_b} or of the user's changed or gone; lost = "
        f"a commit of {name_b} gone; recovered = refusals as promised, every command exit "
        f"0, nothing destroyed and {name_b}'s merged read equal to the oracle's."
    )
    ops = {
        "compact": ctx.contest("compact", "--table", name_a),
        "vacuum": ctx.contest("vacuum", "--table", name_a, "--retain", "0", "--json"),
        "replace": ctx.contest(
            "write", "--data", ctx.data, "--table", path_a, "--name", name_a, "--replace",
            "--only", SHARE,
        ),
    }  # fmt: skip
    for i in range(trials):
        o.trials += 1
        run_write(
            ctx.spark,
            ctx.conn,
            ctx.cfg,
            ctx.data,
            str(path_a),
            name_a,
            mode=WriteMode.REPLACE,
            indices=[int(x) for x in SHARE.split(",")],
        )
        mine = user_files(path_a, base, path_b)
        users = {f: f.read_text() for f in mine}
        before_b = tree_state(path_b)
        commits_b = committed_versions(ctx.conn, table_b)
        refusals = {}
        procs = {}  # both attempts at once: each is refused on its own
        for kind, (where, new, _) in attempts.items():
            cmd = ctx.contest(
                "write", "--data", ctx.data, "--table", where, "--name", new, "--only", "0"
            )
            procs[kind] = spawn(cmd, logs / f"trial-{i:02d}-{kind}.log", ctx.env, ctx.root)
        for kind, (_, new, others) in attempts.items():
            code = wait_bounded(procs[kind])
            err = read_text(logs / f"trial-{i:02d}-{kind}.err")
            line = one_line_failure(err)
            named = names_all(line, f"{ns}.{new}") and any(names_all(line, n) for n in others)
            created = table_or_none(ctx, new) is not None
            refusals[kind] = {"exit": code, "line": line, "names_both": named, "created": created}
            o.failures_observed += code != 0
            o.not_one_line += code != 0 and not line
        order = list(ops)
        ctx.rng.shuffle(order)
        codes, removed = {}, 0
        for op in order:
            log = logs / f"trial-{i:02d}-{op}.log"
            if op == "compact":  # `contest compact` wants the snapshot in version order
                merge_table(ctx.conn, table_or_none(ctx, name_a))
            codes[op] = wait_bounded(spawn(ops[op], log, ctx.env, ctx.root))
            if op == "vacuum" and codes[op] == 0:
                removed = vacuumed(read_text(log))
            o.failures_observed += codes[op] != 0
            o.not_one_line += codes[op] != 0 and not one_line_failure(
                read_text(log.with_suffix(".err"))
            )
        gone_b = changed_files(before_b, tree_state(path_b))
        gone_user = [str(f) for f, text in users.items() if read_text(f) != text]
        lost = sorted(set(commits_b.items()) - set(committed_versions(ctx.conn, table_b).items()))
        ok_b, line_b = merge_read_check(ctx, table_b, ctx.root / "results" / name_b)
        table_a = table_or_none(ctx, name_a)
        versions_a = sorted(committed_versions(ctx.conn, table_a)) if table_a else []
        refused = all(
            r["exit"] != 0 and r["line"] and r["names_both"] and not r["created"]
            for r in refusals.values()
        )
        good = (
            refused
            and all(c == 0 for c in codes.values())
            and not gone_b
            and not gone_user
            and not lost
            and ok_b
            and versions_a == [0, 1, 2]
        )
        o.destroyed += len(gone_b) + len(gone_user)
        o.lost += len(lost)
        o.orphans_removed += removed
        o.recovered += good
        o.details.append(
            {
                "trial": i,
                "refusals": refusals,
                "order": order,
                "exit_codes": codes,
                "vacuum_removed": removed,
                "other_table_files": len(before_b),
                "other_table_files_changed": gone_b,
                "user_files_changed": gone_user,
                "other_table_commits_lost": [v for v, _ in lost],
                "other_table_check": line_b,
                "replaced_table_versions": versions_a,
                "ok": good,
            }
        )
        ctx.say(
            f"nested tables {i + 1}/{trials}: refused {refused}, {' '.join(order)} exits "
            f"{list(codes.values())}, {name_b} files changed {len(gone_b)}, user files "
            f"changed {len(gone_user)}, {name_b} check {ok_b}"
        )
    return o
