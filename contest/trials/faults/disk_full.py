"""A write into a full disk (a small tmpfs), then space freed and the write resumed."""

from __future__ import annotations

import subprocess

from contest.errors import HarnessError
from contest.infra.proc import spawn, wait_bounded
from contest.read.job import ReadRequest, plan_read
from contest.trials.breaks import read_text
from contest.trials.faults.checks import one_line_failure
from contest.trials.faults.context import (
    Ctx,
    half_commits,
    merge_read_check,
    resume,
    sweep_orphans,
    table_or_none,
)
from contest.trials.faults.report import Outcome
from meta import catalog
from meta.errors import MetaError
from meta.merge import merge_table


def disk_full(ctx: Ctx, runs: int, size: str = "15m", grown: str = "96m") -> Outcome:
    o = ctx.outcome(
        "disk_full",
        f"disk full (tmpfs of {size})",
        f"free space (here: remount the tmpfs at {grown}), then contest write --resume",
    )
    mount = ctx.root / "tmpfs"
    for i in range(runs):
        mount.mkdir(parents=True, exist_ok=True)
        res = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        if res.returncode != 0:
            o.not_run = f"mount refused: {(res.stderr or res.stdout).strip()}"
            return o
        try:
            o.trials += 1
            name = "faults_disk_full"
            path = mount / name
            log = ctx.root / "logs" / name / f"run-{i}.log"
            proc = spawn(
                ctx.contest("write", "--data", ctx.data, "--table", path, "--replace"),
                log,
                ctx.env,
                ctx.root,
            )
            code = wait_bounded(proc)
            err = read_text(log.with_suffix(".err"))
            line = one_line_failure(err) or ""
            named = "FAILED" in line and (
                "No space left on device" in line or "ENOSPC" in line or "Errno 28" in line
            )
            if code != 0:
                o.failures_observed += 1
            o.not_one_line += code == 0 or not named
            table = table_or_none(ctx, name)
            bad = half_commits(ctx, table) if table else ["no table"]
            o.half_commits += len(bad)
            refusal = ""
            if table is not None:
                merge_table(ctx.conn, table)
                try:
                    plan = plan_read(
                        ctx.conn,
                        ctx.cfg,
                        table,
                        ReadRequest(out_dir=str(ctx.root / "results" / f"{name}-gappy")),
                    )
                    refusal = "NOT refused" + (
                        f" (warned: {plan.warnings[0]})" if plan.warnings else ""
                    )
                except (HarnessError, MetaError) as exc:
                    refusal = f"refused: {exc}"
            subprocess.run(
                ["mount", "-o", f"remount,size={grown}", str(mount)],
                check=True,
                capture_output=True,
                timeout=30,
            )
            removed, left = sweep_orphans(ctx, table) if table else (0, 0)
            o.orphans_removed += removed
            o.orphans_left += left
            report = resume(ctx, name, path)
            table = table_or_none(ctx, name)
            ok, check = merge_read_check(ctx, table, ctx.root / "results" / name)
            ok = ok and report.ok and refusal.startswith("refused")
            o.recovered += ok
            o.details.append(
                {
                    "run": i,
                    "exit_code": code,
                    "failure_line": line,
                    "names_batches_and_enospc": named,
                    "stderr_lines": len(err.splitlines()),
                    "spark_error_records": sum(" ERROR " in ln for ln in err.splitlines()),
                    "half_commits": bad,
                    "read_after_failure": refusal,
                    "resumed_batches": sum(1 for b in report.batches if not b.skipped),
                    "check": check,
                    "recovered": ok,
                }
            )
            ctx.say(f"disk full {i + 1}/{runs}: exit {code}; {line}; read {refusal[:120]}")
            catalog.drop_table(ctx.conn, name, ctx.cfg.table.namespace)
        finally:
            subprocess.run(["umount", str(mount)], capture_output=True, timeout=60)
    o.notes.append(
        f"The table is written into a tmpfs of {size} (scale data larger than that), as a "
        "separate `contest write` process; after the failure the tmpfs is grown to "
        f"{grown} (the stand-in for freeing space) and the write resumed. The command's "
        "failure is its one `contest:` line; above it Spark's executor logs each failed "
        "task (ERROR records with the task's traceback), which is Spark's own log."
    )
    return o
