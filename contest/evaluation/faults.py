"""`contest bench faults`: fault-injection experiments on small generated data.

Each experiment breaks something on purpose (kill -9 of a command's whole process
group, a PostgreSQL crash, writers racing, a full disk, two evaluations in one work
folder) and then checks the promises of README "Failures and recovery": no
acknowledged commit lost, no user file destroyed, no half-commit, every failure one
line, and every case recoverable by a documented command. The killed commands are
real separate processes (`python -m contest.cli.main ...`); recovery runs in this
process through the functions those commands call, on one shared Spark session.

Results: `faults.md` (a table, one row per experiment) and `faults.jsonl` (one
record per experiment, with its trials) in the results folder.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contest.config import Config, absolute_paths, override, to_toml
from contest.errors import RunError

Say = Callable[[str], None]

# A committed batch's log line (contest/write/report.py `log_batch`): name, version, rows.
_COMMITTED = re.compile(r"contest\.write (\S+) v(-?\d+): (\d+) rows, ")
PROC_TIMEOUT_S = 600.0  # no child process of an experiment runs longer


# -- pure helpers (unit-tested) ---------------------------------------------------


def committed_in_log(text: str) -> dict[int, str]:
    """version -> batch of every batch a write's log reports committed. A batch's line
    is logged only after its commit returned, so each one is an acknowledged commit; a
    line cut short by a kill does not match."""
    return {int(m.group(2)): m.group(1) for m in _COMMITTED.finditer(text)}


def one_line_failure(stderr: str) -> str | None:
    """The failure line of a command that failed as promised: exactly one line starting
    `contest: ` and no traceback of its own; None otherwise. (Spark's executor logs a
    failed task's Python traceback inside a Java log record, `PythonException:
    Traceback ...`: that is Spark's log, not the command's failure.)"""
    lines = stderr.splitlines()
    if any(ln.startswith("Traceback (most recent call last)") for ln in lines):
        return None
    lines = [ln for ln in lines if ln.startswith("contest: ")]
    lines = [ln for ln in lines if not ln.startswith("contest: warning:")]
    return lines[0] if len(lines) == 1 else None


def classify_result(exists: bool, complete: bool, inode: int | None, old_inode: int | None) -> str:
    """What a killed read left at its target: the `old` complete result, a `new` complete
    one, `none`, or a `partial` one (a folder without both markers: the broken promise)."""
    if not exists:
        return "none"
    if not complete:
        return "partial"
    return "old" if inode == old_inode else "new"


def is_permutation(a: Sequence[str], b: Sequence[str]) -> bool:
    """Same elements, each once: nothing dropped, nothing duplicated."""
    return len(a) == len(b) == len(set(a)) and set(a) == set(b)


def is_sorted(values: Sequence[int | None]) -> bool:
    known = [v for v in values if v is not None]
    return all(x <= y for x, y in zip(known, known[1:], strict=False))


def disjoint_indices(count: int, writers: int) -> list[list[int]]:
    """Batch indices 0..count-1 dealt round-robin to `writers` writers."""
    return [list(range(w, count, writers)) for w in range(writers)]


@dataclass
class Outcome:
    """One experiment's counts; goal: nothing lost, destroyed or half-committed, every
    failure one line, every case recovered by the documented command."""

    name: str
    title: str
    recovery: str  # the documented command
    trials: int = 0
    failures_observed: int = 0
    lost: int = 0  # acknowledged commits lost
    destroyed: int = 0  # user files destroyed
    half_commits: int = 0
    orphans_left: int = 0
    orphans_removed: int = 0
    recovered: int = 0
    not_one_line: int = 0  # failures that were not one line
    not_run: str | None = None
    expected_losses: bool = False  # the unsafe contrast: losses are the point
    notes: list[str] = field(default_factory=list)
    details: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def goal_met(self) -> bool:
        if self.not_run is not None:
            return False
        safe = self.expected_losses or self.lost == 0
        return (
            safe
            and self.destroyed == 0
            and self.half_commits == 0
            and self.not_one_line == 0
            and self.recovered == self.trials
        )

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["goal_met"] = self.goal_met
        d["seconds"] = round(self.seconds, 1)
        return d


def render_markdown(outcomes: Sequence[Outcome], infos: Sequence[dict[str, Any]]) -> str:
    """The results table; `infos[i]` is the run that measured `outcomes[i]`."""
    runs = sorted({(i.get("when", ""), i.get("git_commit", "?")) for i in infos})
    scales = sorted({str(i.get("scale")) for i in infos})
    cores = sorted({str(i.get("cores")) for i in infos})
    lines = [
        "# Fault injection: nothing lost, nothing silently wrong",
        "",
        "`contest bench faults` (runs "
        + ", ".join(f"{w} at git {c}" for w, c in runs)
        + f"; scale {'/'.join(scales)} data, {'/'.join(cores)} cores, on a shared machine: "
        "correctness counts, not timings). Every killed command is a separate process whose "
        "whole process group gets SIGKILL; recovery runs the documented command's functions.",
        "",
        "| experiment | trials | failures observed | acked commits lost | user files "
        "destroyed | half-commits | orphan files left / removed by `vacuum --retain 0` | "
        "recovered | by | goal |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        if o.not_run is not None:
            lines.append(f"| {o.title} | not run | | | | | | | | {o.not_run.replace('|', '/')} |")
            continue
        goal = "met" if o.goal_met else "NOT MET"
        if o.expected_losses:
            goal += " (losses expected: unsafe mode)"
        lines.append(
            f"| {o.title} | {o.trials} | {o.failures_observed} | {o.lost} | {o.destroyed} "
            f"| {o.half_commits} | {o.orphans_left} / {o.orphans_removed} "
            f"| {o.recovered}/{o.trials} | `{o.recovery}` | {goal} |"
        )
    lines.append("")
    for o in outcomes:
        if o.notes:
            lines += [f"**{o.title}.**", ""]
            lines += [f"- {n}" for n in o.notes]
            lines.append("")
    return "\n".join(lines)


# -- processes --------------------------------------------------------------------


_SPAWNED: list[subprocess.Popen] = []  # every child, so an interrupted run stops them


def spawn(cmd: Sequence[str], log: Path, env: dict[str, str], cwd: Path) -> subprocess.Popen:
    """A command in its own process group (its JVM and Python workers with it), stdout
    and stderr to `log` and `log`.err."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out, log.with_suffix(".err").open("wb") as err:
        proc = subprocess.Popen(
            list(cmd), stdout=out, stderr=err, env=env, cwd=cwd, start_new_session=True
        )
    _SPAWNED.append(proc)
    return proc


def stop_spawned() -> None:
    """Kill every child still running (an interrupted experiment)."""
    while _SPAWNED:
        proc = _SPAWNED.pop()
        if proc.poll() is None:
            kill_group(proc)


def kill_group(proc: subprocess.Popen, timeout: float = 30.0) -> None:
    """SIGKILL the whole process group and wait until none of it is left."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise RunError(f"process group {proc.pid} still alive {timeout:g} s after SIGKILL")


def wait_bounded(proc: subprocess.Popen, timeout: float = PROC_TIMEOUT_S) -> int:
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        raise RunError(f"{proc.args!r} ran over {timeout:g} s: killed") from None


def read_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


# -- the experiments' shared context ------------------------------------------------


@dataclass
class Ctx:
    cfg: Config
    conn: Any
    spark: Any
    data: Path
    expected: Path
    root: Path
    config_file: Path
    env: dict[str, str]
    rng: random.Random
    say: Say
    current: Outcome | None = None  # the experiment running (kept if interrupted)

    def outcome(self, *args: Any, **kw: Any) -> Outcome:
        self.current = Outcome(*args, **kw)
        return self.current

    def contest(self, *args: str | Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "contest.cli.main",
            "--config",
            str(self.config_file),
            *map(str, args),
        ]


def make_context(cfg: Config, spark, conn, scale: float, seed: int, say: Say) -> Ctx:
    from contest.evaluation.evaluate import cached_data, cached_expected, child_env

    root = (cfg.work_path / "faults").absolute()
    root.mkdir(parents=True, exist_ok=True)
    data = cached_data(cfg, scale, seed, say).absolute()
    expected = cached_expected(cfg, data, "", say)
    child = override(
        absolute_paths(cfg),
        {"spark.ui": False, "spark.driver_memory": "1g", "write.versions": ""},
    )
    config_file = root / "child.toml"
    config_file.write_text(to_toml(child))
    return Ctx(
        cfg,
        conn,
        spark,
        data,
        expected,
        root,
        config_file,
        child_env(cfg),
        random.Random(seed),
        say,
    )


def table_or_none(ctx: Ctx, name: str):
    from meta import catalog
    from meta.errors import MetaError

    try:
        return catalog.get_table(ctx.conn, name, ctx.cfg.table.namespace)
    except MetaError:
        return None


def half_commits(ctx: Ctx, table) -> list[str]:
    """Live commits missing a file or a version: what a half-done commit would leave."""
    from meta.commits import head_snapshot

    bad = []
    for c in head_snapshot(ctx.conn, table)[1]:
        missing = [f.path for f in c.files if not Path(f.path.removeprefix("file://")).exists()]
        if missing or c.version is None:
            bad.append(f"commit {c.commit_id} v{c.version}: missing {missing[:2]}")
    return bad


def sweep_orphans(ctx: Ctx, table) -> tuple[int, int]:
    """`contest vacuum --retain 0`: (orphan files removed, orphans still there after)."""
    from contest.maintenance.vacuum import vacuum

    removed = len(vacuum(ctx.conn, table, retain_hours=0).orphans)
    left = len(vacuum(ctx.conn, table, retain_hours=0, dry_run=True).orphans)
    return removed, left


def merge_read_check(ctx: Ctx, table, out: Path) -> tuple[bool, str]:
    """`contest meta merge`, `contest read`, `contest check` against the oracle."""
    from contest.data.checker import compare
    from contest.read.job import ReadRequest, plan_read, run_read
    from meta.merge import merge_table

    merge_table(ctx.conn, table)
    plan = plan_read(ctx.conn, ctx.cfg, table, ReadRequest(out_dir=str(out)))
    run_read(ctx.spark, ctx.cfg, plan)
    report = compare(out, ctx.expected)
    return report.ok, report.render().splitlines()[0]


def resume(ctx: Ctx, name: str, path: Path):
    from contest.write.job import WriteMode, run_write

    return run_write(ctx.spark, ctx.conn, ctx.cfg, ctx.data, str(path), name, mode=WriteMode.RESUME)


# -- 1. kill -9 of `contest write` -----------------------------------------------


def kill_write(ctx: Ctx, trials: int) -> Outcome:
    from meta.commits import committed_versions

    o = ctx.outcome(
        "kill_write",
        "kill -9 of `contest write`",
        "contest write --resume; contest meta merge; contest read",
    )
    name = "faults_kill_write"
    path = ctx.root / "tables" / name
    cmd = ctx.contest("write", "--data", ctx.data, "--table", path, "--replace")
    logs = ctx.root / "logs" / name
    t0 = time.monotonic()
    ref = spawn(cmd, logs / "reference.log", ctx.env, ctx.root)
    first = None
    while ref.poll() is None and time.monotonic() - t0 < PROC_TIMEOUT_S:
        if first is None and committed_in_log(read_text(logs / "reference.err")):
            first = time.monotonic() - t0
        time.sleep(0.05)
    if wait_bounded(ref) != 0:
        raise RunError(f"reference write failed: see {logs / 'reference.err'}")
    first = first or (time.monotonic() - t0)
    o.notes.append(
        "Kill moments: after k = 0..10 logged commits (random; k = 0 means a random moment "
        "before the first commit) plus up to 0.3 s. `logged` = batches the killed write "
        "logged as committed (its log line is written after the commit returns)."
    )
    ctx.say(f"kill write: reference write {time.monotonic() - t0:.1f}s, first commit {first:.1f}s")
    for i in range(trials):
        o.trials += 1
        after = ctx.rng.randint(0, 10)  # commits to wait for before the kill
        log = logs / f"trial-{i:02d}.log"
        proc = spawn(cmd, log, ctx.env, ctx.root)
        start = time.monotonic()
        if after == 0:
            time.sleep(ctx.rng.uniform(0.5, first))
        else:
            while (
                proc.poll() is None
                and len(committed_in_log(read_text(log.with_suffix(".err")))) < after
                and time.monotonic() - start < PROC_TIMEOUT_S
            ):
                time.sleep(0.02)
            time.sleep(ctx.rng.uniform(0.0, 0.3))
        finished = proc.poll() is not None
        kill_group(proc)
        at = time.monotonic() - start
        logged = committed_in_log(read_text(log.with_suffix(".err")))
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
    from meta.merge import merge_table
    from meta.synthetic import generate_history, head_commit_ids, unmerge

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
    t0 = time.monotonic()
    ref = spawn(cmd, logs / "reference.log", ctx.env, ctx.root)
    if wait_bounded(ref) != 0:
        raise RunError(f"reference merge failed: see {logs / 'reference.err'}")
    span = time.monotonic() - t0
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
        log = logs / f"trial-{i:02d}.log"
        proc = spawn(cmd, log, ctx.env, ctx.root)
        delay = ctx.rng.uniform(0.2, span * 1.1)
        deadline = time.monotonic() + delay
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        finished = proc.poll() is not None
        kill_group(proc)
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
    from contest.cli.main import main as contest_main
    from contest.read import output

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
    t0 = time.monotonic()
    if wait_bounded(spawn(cmd, logs / "reference.log", ctx.env, ctx.root)) != 0:
        raise RunError(f"reference read failed: see {logs / 'reference.err'}")
    span = time.monotonic() - t0
    ctx.say(f"kill read: reference read {span:.1f}s")
    states: dict[str, int] = {}
    for i in range(trials):
        o.trials += 1
        old_inode = target.stat().st_ino
        before = {p.name for p in base.iterdir()}
        log = logs / f"trial-{i:02d}.log"
        proc = spawn(cmd, log, ctx.env, ctx.root)
        delay = ctx.rng.uniform(0.5, span * 1.05)
        deadline = time.monotonic() + delay
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        finished = proc.poll() is not None
        kill_group(proc)
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
        refused = True
        for folder in incomplete[:1] + ([] if exists else [target]):
            code = contest_main(
                ["--config", str(ctx.config_file), "check", "--result", str(folder)]
                + ["--data", str(ctx.data)]
            )
            refused = refused and code != 0
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


# -- 4. PostgreSQL crash mid-write ------------------------------------------------------

COMMITTER = """
import json, sys
import pyarrow as pa
from meta import catalog
from meta.commits import DataFile, commit_files
from meta.connection import PgConnection
args = json.loads(sys.stdin.readline())
conn = PgConnection(**args["conn"])
t = catalog.create_table(conn, "crash_t", args["path"], pa.schema([("uuid", pa.string())]),
                         ["uuid"], 1, reuse=True)
for v in range(args["count"]):
    f = DataFile(f"{t.path}/part-c{v:06d}_0000.parquet", 1, ("uuid",), 0)
    try:
        commit_files(conn, t, [f], version=v)
    except Exception as exc:
        print("failed", v, type(exc).__name__, str(exc).splitlines()[0][:200], flush=True)
        continue
    print("acked", v, flush=True)
"""


def pg_crash(ctx: Ctx, runs: int, unsafe: bool, port: int, commits: int = 400) -> Outcome:
    from contest.infra.postgres import EmbeddedCluster
    from meta import catalog
    from meta.commits import committed_versions

    mode = "pg.unsafe_no_fsync=true" if unsafe else "durable (default)"
    o = ctx.outcome(
        "pg_crash_unsafe" if unsafe else "pg_crash",
        f"PostgreSQL crash mid-write, {mode}",
        "contest db up (commits retry with backoff)",
        expected_losses=unsafe,
    )
    for i in range(runs):
        o.trials += 1
        state = ctx.root / f"pg-crash-{'unsafe' if unsafe else 'durable'}-{i}"
        shutil.rmtree(state, ignore_errors=True)
        cfg = override(
            ctx.cfg,
            {
                "state_dir": str(state),
                "pg.url": "",
                "pg.port": port,
                "pg.unsafe_no_fsync": unsafe,
                "pg.retry_seconds": 60.0,
            },
        )
        cluster = EmbeddedCluster(cfg)
        try:
            conn, _ = cluster.up()
            proc = subprocess.Popen(
                [sys.executable, "-c", COMMITTER],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env=ctx.env,
                cwd=ctx.root,
                start_new_session=True,
            )
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(
                json.dumps(
                    {
                        "conn": dataclasses.asdict(conn),
                        "path": str(state / "crash_t"),
                        "count": commits,
                    }
                )
                + "\n"
            )
            proc.stdin.close()
            crash_at = ctx.rng.randint(40, 120)
            acked: list[int] = []
            failed: list[str] = []
            crashed_after = None
            start = time.monotonic()
            for line in proc.stdout:
                if line.startswith("acked"):
                    acked.append(int(line.split()[1]))
                elif line.startswith("failed"):
                    failed.append(line.strip())
                if crashed_after is None and len(acked) >= crash_at:
                    cluster.crash()
                    crashed_after = len(acked)
                    time.sleep(2)
                    cluster.up()  # the writer retries with backoff meanwhile
                if time.monotonic() - start > PROC_TIMEOUT_S:
                    kill_group(proc)
                    raise RunError("the committer ran over its time")
            code = wait_bounded(proc)
            table = catalog.get_table(conn, "crash_t")
            kept = set(committed_versions(conn, table))
            lost = sorted(set(acked) - kept)
            o.failures_observed += 1
            o.lost += len(lost)
            o.recovered += code == 0 and (unsafe or not lost)
            o.details.append(
                {
                    "run": i,
                    "crash_after_acks": crashed_after,
                    "acked": len(acked),
                    "kept": len(kept),
                    "lost": lost,
                    "writer_gave_up": failed[:3],
                    "writer_exit": code,
                }
            )
            ctx.say(
                f"pg crash ({mode}) {i + 1}/{runs}: crash after {crashed_after} acks; "
                f"{len(acked)} acked, {len(kept)} kept, lost {len(lost)}"
            )
        finally:
            try:
                cluster.down()
            finally:
                shutil.rmtree(state, ignore_errors=True)
    o.notes.append(
        f"A separate embedded cluster per run (its own state folder, port {port} or the "
        f"next free one); a writer process commits {commits} one-file commits through "
        "`commit_files` (what `contest write` calls per batch), printing `acked v` when a "
        "commit returned; after a random 40..120 acks `pg_ctl stop -m immediate`, 2 s, "
        "restart; the writer retries with backoff. Lost = acked but not live afterwards."
    )
    if unsafe:
        o.notes.append(
            "pg.unsafe_no_fsync sets fsync=off, synchronous_commit=off, "
            "full_page_writes=off: a commit is acknowledged before its WAL record is "
            "written, so an immediate stop discards the WAL still in the server's buffers "
            "(up to about 3 x wal_writer_delay, 200 ms, of commits); a machine crash would "
            "also lose what sat in the OS cache, or corrupt the cluster. Losses here are the "
            "documented price of the option, not a bug."
        )
    return o


# -- 5. concurrent writer processes -----------------------------------------------------


def concurrent_writers(ctx: Ctx, rounds: int, create_rounds: int, writers: int = 4) -> Outcome:
    from contest.write.job import WriteMode, prepare_table
    from meta import catalog
    from meta.commits import committed_versions

    o = ctx.outcome(
        "concurrent_writers",
        f"{writers} concurrent `contest write --append --only` processes",
        "none needed",
    )
    name = "faults_concurrent"
    path = ctx.root / "tables" / name
    logs = ctx.root / "logs" / name
    shares = disjoint_indices(11, writers)
    o.notes.append(
        f"Per round {writers} separate `contest write --append --only` processes over "
        f"disjoint batches ({' / '.join(','.join(map(str, s)) for s in shares)}), started "
        f"together: {rounds} rounds on an existing empty table, {create_rounds} racing to "
        "create it. Correct = every writer exits 0, one table, versions 0..10 committed, "
        "merged read equal to the oracle's. Lost counts batches not committed."
    )
    for r in range(rounds + create_rounds):
        creating = r >= rounds
        o.trials += 1
        if creating:
            catalog.drop_table(ctx.conn, name, ctx.cfg.table.namespace)
            shutil.rmtree(path, ignore_errors=True)
        else:
            prepare_table(ctx.conn, ctx.cfg, path, name, WriteMode.REPLACE)
        procs = [
            spawn(
                ctx.contest(
                    "write",
                    "--data",
                    ctx.data,
                    "--table",
                    path,
                    "--append",
                    "--only",
                    ",".join(map(str, share)),
                ),
                logs / f"round-{r:02d}-writer-{w}.log",
                ctx.env,
                ctx.root,
            )
            for w, share in enumerate(shares)
        ]
        codes = [wait_bounded(p) for p in procs]
        errors = [
            one_line_failure(read_text(logs / f"round-{r:02d}-writer-{w}.err")) or "?"
            for w, c in enumerate(codes)
            if c != 0
        ]
        tables = [
            t
            for t in catalog.list_tables(ctx.conn)
            if t.name == name or t.path.removeprefix("file://") == str(path)
        ]
        table = tables[0] if tables else None
        kept = sorted(committed_versions(ctx.conn, table)) if table else []
        bad = half_commits(ctx, table) if table else []
        ok, line = (
            merge_read_check(ctx, table, ctx.root / "results" / name) if table else (False, "")
        )
        good = codes == [0] * writers and len(tables) == 1 and kept == list(range(11)) and ok
        o.failures_observed += any(codes)
        o.lost += 11 - len(kept)
        o.half_commits += len(bad)
        o.recovered += good
        o.details.append(
            {
                "round": r,
                "kind": "create race" if creating else "existing table",
                "exit_codes": codes,
                "errors": errors,
                "tables": len(tables),
                "committed": kept,
                "check": line,
                "ok": good,
            }
        )
        ctx.say(
            f"writers round {r + 1} ({'create race' if creating else 'existing'}): exits "
            f"{codes}, {len(tables)} table(s), {len(kept)} versions, check {ok}"
        )
    return o


# -- 6. disk full ---------------------------------------------------------------------


def disk_full(ctx: Ctx, runs: int, size: str = "15m", grown: str = "96m") -> Outcome:
    from contest.errors import HarnessError
    from contest.read.job import ReadRequest, plan_read
    from meta.errors import MetaError
    from meta.merge import merge_table

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
            from meta import catalog

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


# -- 7. two evaluations in one work folder ------------------------------------------------


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


# -- the whole run ------------------------------------------------------------------------

EXPERIMENTS = (
    "kill_write",
    "kill_merge",
    "kill_read",
    "pg_crash",
    "concurrent_writers",
    "disk_full",
    "overlapping_evaluate",
)


@dataclass(frozen=True)
class FaultPlan:
    write_kills: int = 20
    merge_kills: int = 20
    merge_commits: int = 500_000
    read_kills: int = 20
    pg_crashes: int = 2
    pg_unsafe_crashes: int = 1
    pg_port: int = 54390
    writer_rounds: int = 5
    create_rounds: int = 5
    disk_full_runs: int = 1
    evaluate_overlaps: int = 2
    only: tuple[str, ...] = EXPERIMENTS


def run_faults(
    cfg: Config,
    spark,
    conn,
    plan: FaultPlan,
    scale: float,
    seed: int,
    say: Say = print,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> list[Outcome]:
    """Run the planned experiments in order; `on_outcome` gets each as it ends (so an
    interrupted run keeps what it measured)."""
    ctx = make_context(cfg, spark, conn, scale, seed, say)
    runs: list[tuple[str, Callable[[], Outcome]]] = [
        ("kill_write", lambda: kill_write(ctx, plan.write_kills)),
        ("kill_merge", lambda: kill_merge(ctx, plan.merge_kills, plan.merge_commits)),
        ("kill_read", lambda: kill_read(ctx, plan.read_kills)),
        ("pg_crash", lambda: pg_crash(ctx, plan.pg_crashes, False, plan.pg_port)),
        ("pg_crash", lambda: pg_crash(ctx, plan.pg_unsafe_crashes, True, plan.pg_port)),
        (
            "concurrent_writers",
            lambda: concurrent_writers(ctx, plan.writer_rounds, plan.create_rounds),
        ),
        ("disk_full", lambda: disk_full(ctx, plan.disk_full_runs)),
        ("overlapping_evaluate", lambda: overlapping_evaluations(ctx, plan.evaluate_overlaps)),
    ]
    outcomes = []
    for key, run in runs:
        if key not in plan.only:
            continue
        say(f"== {key}")
        started = time.monotonic()
        ctx.current = None
        try:
            outcome = run()
        except KeyboardInterrupt:
            stop_spawned()
            if ctx.current is None:
                raise
            outcome = ctx.current
            done = len(outcome.details)
            outcome.notes.append(
                f"Interrupted (Ctrl-C) during trial {outcome.trials}: {done} trial(s) done "
                "and counted."
            )
            outcome.trials = done
            outcome.seconds = time.monotonic() - started
            outcomes.append(outcome)
            if on_outcome:
                on_outcome(outcome)
            say(f"interrupted: {key} recorded with {done} trial(s); later experiments not run")
            break
        outcome.seconds = time.monotonic() - started
        outcomes.append(outcome)
        if on_outcome:
            on_outcome(outcome)
    return outcomes


def latest_outcomes(records: Sequence[dict[str, Any]]) -> list[tuple[Outcome, dict[str, Any]]]:
    """The newest record of each experiment (runs split with --only add up), in the
    order experiments first appear, as (outcome, the run's info)."""
    names = {f.name for f in dataclasses.fields(Outcome)}
    latest: dict[str, tuple[Outcome, dict[str, Any]]] = {}
    for r in records:
        outcome = Outcome(**{k: v for k, v in r.items() if k in names})
        info = {k: v for k, v in r.items() if k not in names and k != "goal_met"}
        latest.pop(outcome.name, None)
        latest[outcome.name] = (outcome, info)
    order = {name: i for i, name in enumerate(EXPERIMENTS)}
    return sorted(latest.values(), key=lambda p: order.get(p[0].name.removesuffix("_unsafe"), 99))


def write_fault_results(outcomes: Sequence[Outcome], info: dict[str, Any], out_dir: Path) -> Path:
    """Append the outcomes to faults.jsonl; rewrite faults.md from the newest record of
    each experiment there."""
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = out_dir / "faults.jsonl"
    with runs.open("a") as fh:
        for o in outcomes:
            fh.write(json.dumps({**info, **o.to_dict()}, sort_keys=True) + "\n")
    records = [json.loads(line) for line in runs.read_text().splitlines() if line.strip()]
    latest = latest_outcomes(records)
    md = out_dir / "faults.md"
    md.write_text(render_markdown([o for o, _ in latest], [i for _, i in latest]))
    return md
