"""Two overlapping `contest evaluate` in one work folder: the second must refuse."""

from __future__ import annotations

import json
import time
from pathlib import Path

from contest.infra.proc import spawn, wait_bounded
from contest.trials.breaks import read_text
from contest.trials.faults.checks import one_line_failure
from contest.trials.faults.context import Ctx
from contest.trials.faults.report import Outcome


def overlapping_evaluations(ctx: Ctx, runs: int) -> Outcome:
    o = ctx.outcome(
        "overlapping_evaluate",
        "two overlapping `contest evaluate` in one work folder",
        "give the second its own work folder (--work DIR)",
    )
    work = ctx.root / "eval-lock"
    logs = ctx.root / "logs" / "evaluate"
    lock = work / "eval" / ".lock"
    o.notes.append(
        "The second evaluation starts 0.5..5 s after the first took the work folder's lock. "
        "Recovered = the second refused in one line (exit 2) and the first gave a correct "
        "result."
    )
    for i in range(runs):
        o.trials += 1
        base: list[str | Path] = [
            "evaluate",
            "--data",
            ctx.data,
            "--work",
            work,
            "--cores",
            "2",
            "--results",
            "-",
        ]
        lock.unlink(missing_ok=True)
        first = spawn(ctx.contest(*base), logs / f"run-{i}-first.log", ctx.env, ctx.root)
        deadline = time.monotonic() + 120
        while "pid" not in read_text(lock) and first.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        time.sleep(ctx.rng.uniform(0.5, 5.0))  # somewhere inside the first one
        second_running = first.poll() is None
        t0 = time.monotonic()
        second = spawn(ctx.contest(*base), logs / f"run-{i}-second.log", ctx.env, ctx.root)
        code2 = wait_bounded(second, 300)
        refused_s = time.monotonic() - t0
        err2 = read_text(logs / f"run-{i}-second.err")
        line = one_line_failure(err2)
        refused = code2 == 2 and bool(line) and "another evaluation" in (line or "")
        code1 = wait_bounded(first)
        out1 = read_text(logs / f"run-{i}-first.log").strip().splitlines()
        try:
            record = json.loads(out1[-1]) if out1 else {}
        except json.JSONDecodeError:
            record = {}
        correct = code1 == 0 and bool(record.get("correct"))
        o.failures_observed += code2 != 0
        o.not_one_line += code2 != 0 and not line
        o.recovered += refused and correct and second_running
        o.details.append(
            {
                "run": i,
                "second_started_while_first_ran": second_running,
                "second_exit": code2,
                "second_refused_in_s": round(refused_s, 2),
                "second_line": line,
                "first_exit": code1,
                "first_correct": correct,
            }
        )
        ctx.say(
            f"evaluate overlap {i + 1}/{runs}: second exit {code2} ({line}); "
            f"first correct {correct}"
        )
    return o
