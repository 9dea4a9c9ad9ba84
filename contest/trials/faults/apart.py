"""Two `contest evaluate` in separate work folders, started at the same moment or one
during the other's write: both correct, each on its own table, neither touching the
other's (its commits and files unchanged after the other one ran)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from contest.infra.proc import kill_group, spawn
from contest.trials.breaks import read_text
from contest.trials.faults.checks import (
    changed_files,
    one_line_failure,
    tree_state,
)
from contest.trials.faults.context import PROC_TIMEOUT_S, Ctx, table_or_none
from contest.trials.faults.report import Outcome
from meta.commits import committed_versions

STRATEGY = "optimized"


def table_state(ctx: Ctx, name: str) -> dict[str, Any] | None:
    """A table's live commits (version -> commit id) and the files under its folder."""
    table = table_or_none(ctx, name)
    if table is None:
        return None
    folder = Path(table.path.removeprefix("file://"))
    return {
        "path": table.path,
        "commits": {str(v): c for v, c in committed_versions(ctx.conn, table).items()},
        "files": tree_state(folder),
    }


def table_id(ctx: Ctx, name: str) -> str | None:
    table = table_or_none(ctx, name)
    return None if table is None else table.table_id


def touched(before: dict[str, Any] | None, after: dict[str, Any] | None) -> tuple[int, int]:
    """(commits lost or changed, files changed or gone) between two states of a table."""
    if before is None:
        return 0, 0
    if after is None:
        return len(before["commits"]), len(before["files"])
    commits = sum(1 for v, c in before["commits"].items() if after["commits"].get(v) != c)
    return commits, len(changed_files(before["files"], after["files"]))


def last_record(text: str) -> dict[str, Any]:
    lines = text.strip().splitlines()
    try:
        return json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        return {}


def evaluations_apart(ctx: Ctx, pairs: int) -> Outcome:
    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.evaluation.evaluate import table_name_of

    o = ctx.outcome(
        "evaluations_apart",
        "two `contest evaluate` at once in separate work folders",
        "none needed",
    )
    logs = ctx.root / "logs" / "evaluations_apart"
    works = [ctx.root / "eval-apart" / "w1", ctx.root / "eval-apart" / "w2"]
    names = [table_name_of(STRATEGY, w) for w in works]
    o.notes.append(
        f"Even pairs start both `contest evaluate --strategy {STRATEGY} --cores 1` at the "
        "same moment; odd ones start the second 0.5..3 s after the first's new table appeared "
        f"(during its write). Tables {' and '.join(names)} (one per work folder). When one "
        "evaluation ends, its table's commits and files are taken; after the other ended "
        "they must be the same. Lost = commits gone or changed, destroyed = files changed "
        "or gone; recovered = both exit 0 with a correct result on tables of their own."
    )
    for i in range(pairs):
        o.trials += 1
        offset = i % 2 == 1
        cmds = [
            ctx.contest(
                "evaluate", "--strategy", STRATEGY, "--data", ctx.data, "--work", w,
                "--cores", "1", "--results", "-",
            )
            for w in works
        ]  # fmt: skip
        earlier = table_id(ctx, names[0])  # the last pair's table, until the clean phase
        procs = [spawn(cmds[0], logs / f"pair-{i}-first.log", ctx.env, ctx.root)]
        waited = 0.0
        if offset:
            t0 = time.monotonic()
            while (
                procs[0].poll() is None
                and table_id(ctx, names[0]) in (None, earlier)
                and time.monotonic() - t0 < PROC_TIMEOUT_S
            ):
                time.sleep(0.2)
            time.sleep(ctx.rng.uniform(0.5, 3.0))
            waited = time.monotonic() - t0
        first_running = procs[0].poll() is None
        procs.append(spawn(cmds[1], logs / f"pair-{i}-second.log", ctx.env, ctx.root))
        codes: list[int | None] = [None, None]
        at_end: list[dict[str, Any] | None] = [None, None]
        deadline = time.monotonic() + PROC_TIMEOUT_S
        while None in codes and time.monotonic() < deadline:
            for k, p in enumerate(procs):
                if codes[k] is None and p.poll() is not None:
                    codes[k] = p.returncode
                    at_end[k] = table_state(ctx, names[k])
            time.sleep(0.2)
        for k, p in enumerate(procs):
            if codes[k] is None:
                kill_group(p)
                codes[k] = -9
        finals = [table_state(ctx, n) for n in names]
        lost = destroyed = 0
        for k in range(2):
            c, f = touched(at_end[k], finals[k])
            lost += c
            destroyed += f
        records = [last_record(read_text(logs / f"pair-{i}-{w}.log")) for w in ("first", "second")]
        lines = [
            one_line_failure(read_text(logs / f"pair-{i}-{w}.err")) if c else None
            for w, c in zip(("first", "second"), codes, strict=True)
        ]
        correct = [c == 0 and bool(r.get("correct")) for c, r in zip(codes, records, strict=True)]
        own = [r.get("table") == n for r, n in zip(records, names, strict=True)]
        apart = finals[0] is not None and finals[1] is not None
        apart = apart and finals[0]["path"] != finals[1]["path"]  # type: ignore[index]
        good = all(correct) and all(own) and apart and lost == 0 and destroyed == 0
        o.failures_observed += sum(1 for c in codes if c != 0)
        o.not_one_line += sum(1 for c, ln in zip(codes, lines, strict=True) if c and not ln)
        o.lost += lost
        o.destroyed += destroyed
        o.recovered += good
        o.details.append(
            {
                "pair": i,
                "start": "second during the first's write" if offset else "same moment",
                "second_after_s": round(waited, 1),
                "first_running_at_second_start": first_running,
                "exit_codes": codes,
                "failure_lines": lines,
                "correct": correct,
                "tables": [r.get("table") for r in records],
                "own_tables": own,
                "commits": [len(s["commits"]) if s else 0 for s in finals],
                "files": [len(s["files"]) if s else 0 for s in finals],
                "commits_lost_or_changed": lost,
                "files_changed": destroyed,
                "ok": good,
            }
        )
        ctx.say(
            f"evaluations apart {i + 1}/{pairs} ({'offset' if offset else 'same moment'}): "
            f"exits {codes}, correct {correct}, own tables {own}, lost {lost}, files "
            f"changed {destroyed}"
        )
    return o
