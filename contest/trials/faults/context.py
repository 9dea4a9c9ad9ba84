"""What the fault experiments share: the data, the oracle's result, the child
processes' configuration, a seeded random source; and the recovery steps each runs
after breaking something (the functions the documented commands call)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contest.config import Config, absolute_paths, override, to_toml
from contest.data.checker import compare
from contest.errors import HarnessError
from contest.evaluation.jobs import child_env, cli_command
from contest.infra.proc import spawn, wait_bounded
from contest.maintenance.vacuum import vacuum
from contest.read.job import ReadRequest, plan_read, run_read
from contest.sitting import Say
from contest.trials.breaks import read_text
from contest.trials.faults.report import Outcome
from contest.write.job import WriteMode, run_write
from meta import catalog
from meta.commits import head_snapshot
from meta.errors import MetaError, TableError
from meta.merge import merge_table

PROC_TIMEOUT_S = 600.0  # no child process of an experiment runs longer


@dataclass(frozen=True)
class Reference:
    """A command's whole run before its trials, nothing broken: its exit code, its
    seconds (the span a trial's kill moment is drawn in), its stderr file, and the
    seconds until its stderr first showed the moment asked for (None: never)."""

    code: int
    seconds: float
    err: Path
    moment_s: float | None = None


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
        return cli_command(self.config_file, *args)

    def reference(
        self, cmd: Sequence[str], logs: Path, moment: Callable[[str], bool] | None = None
    ) -> Reference:
        """`cmd` run once whole (`logs`/reference.log) before the kills: whether it runs
        here at all and how long it takes, which the kill moments are drawn from; with
        `moment`, also when its stderr first showed it (a write's first commit)."""
        log = logs / "reference.log"
        err = log.with_suffix(".err")
        start = time.monotonic()
        proc = spawn(cmd, log, self.env, self.root)
        seen = None
        while moment is not None and seen is None and proc.poll() is None:
            if moment(read_text(err)):
                seen = time.monotonic() - start
            elif time.monotonic() - start > PROC_TIMEOUT_S:
                break  # wait_bounded kills it and says so
            time.sleep(0.05)
        code = wait_bounded(proc, PROC_TIMEOUT_S)
        return Reference(code, time.monotonic() - start, err, seen)


def make_context(cfg: Config, spark, conn, scale: float, seed: int, say: Say) -> Ctx:
    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.evaluation.data_cache import cached_data, cached_expected

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
    try:
        return catalog.get_table(ctx.conn, name, ctx.cfg.table.namespace)
    except (MetaError, TableError):  # no such table: a TableError (a usage error)
        return None


def half_commits(ctx: Ctx, table) -> list[str]:
    """Live commits missing a file or a version: what a half-done commit would leave."""
    bad = []
    for c in head_snapshot(ctx.conn, table)[1]:
        missing = [f.path for f in c.files if not Path(f.path.removeprefix("file://")).exists()]
        if missing or c.version is None:
            bad.append(f"commit {c.commit_id} v{c.version}: missing {missing[:2]}")
    return bad


def sweep_orphans(ctx: Ctx, table) -> tuple[int, int]:
    """`contest vacuum --retain 0`: (orphan files removed, orphans still there after)."""
    removed = len(vacuum(ctx.conn, table, retain_hours=0).orphans)
    left = len(vacuum(ctx.conn, table, retain_hours=0, dry_run=True).orphans)
    return removed, left


def merge_read_check(ctx: Ctx, table, out: Path) -> tuple[bool, str]:
    """`contest meta merge`, `contest read`, `contest check` against the oracle."""
    merge_table(ctx.conn, table)
    plan = plan_read(ctx.conn, ctx.cfg, table, ReadRequest(out_dir=str(out)))
    run_read(ctx.spark, ctx.cfg, plan)
    report = compare(out, ctx.expected)
    return report.ok, report.render().splitlines()[0]


def resume(ctx: Ctx, name: str, path: Path):
    return run_write(ctx.spark, ctx.conn, ctx.cfg, ctx.data, str(path), name, mode=WriteMode.RESUME)


def check_refuses(ctx: Ctx, folder: Path) -> bool:
    """What `contest check --result FOLDER --data DATA` answers: refused (a missing or
    incomplete folder before any work, a wrong result by the comparison) or not."""
    try:
        return not compare(folder, ctx.expected).ok
    except HarnessError:
        return True
