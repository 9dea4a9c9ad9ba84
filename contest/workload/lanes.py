"""A strategy's lane through a workload: its evaluation run and clean table (made as
`contest evaluate` makes them), what it has done so far, what its jobs and its table
report back, and what it cannot run (refused up front, or a step skipped, with why).
The runner (runner.py) steps the lanes; this is the state and the facts of each."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from contest.config import Config
from contest.data.batches import discover
from contest.data.workload import schema_of_batch
from contest.engines import abilities, operator_refusal, who
from contest.evaluation import evaluate as ev
from contest.evaluation.procedure import drop_metadata, drop_outputs, phase_clean, phase_packages
from contest.evaluation.run import Run
from contest.peers import change_check
from contest.results.workloads import PhaseRecord
from contest.workload.application import Application
from contest.workload.maintenance import (
    AUTO,
    NO_MAINTENANCE,
    Policy,
    auto_config,
    auto_note,
    auto_of,
)
from contest.workload.plan import PER_PHASE, Step
from meta import catalog
from meta.commits import head_snapshot

Say = Callable[[str], None]


def unsupported(
    cfg: Config, steps: Sequence[Step] = (), data: Path | None = None, strategy: str = ""
) -> str | None:
    """Why a strategy cannot run these phases, or None: a workload's merge operator its
    format cannot express (contest.engines.operator_refusal), or change data in `data`
    its implementation does not take (deletes, batches of some columns, a key or a type:
    contest/peers/change_check.py, as evaluate refuses it). A history read it cannot
    answer is not this: its read job refuses it in one line, recorded as refused, and
    the lane goes on; a schema change its format refuses is refused by its write job."""
    why = operator_refusal(cfg)
    if why or data is None:
        return why
    found = schema_of_batch(cfg.workload)
    discover(data, cfg.write.versions or None, found)
    return change_check.refusal_of(cfg, found, strategy)


def concurrent_reads_why(cfg: Config) -> str | None:
    """Why a concurrent step's reads do not run for this strategy (its upserts still
    do), or None: a reader that cannot name the one version it saw while upserts land
    (`Abilities.while_writing`) could not be checked against the oracle."""
    if abilities(cfg).while_writing:
        return None
    return f"{who(cfg)}: no read of one known version while upserts land"


def skipped_why(cfg: Config, kind: str) -> str | None:
    """Why a step does not run for this strategy, or None (it runs): a phase it has no
    form of (`Abilities.lacks`: a peer's metadata merge, stock LakeSoul's compaction
    and vacuum). Skipped, not refused: the upserts and reads around it still compare,
    and the record says no such operation ran."""
    return abilities(cfg).lacks.get(kind)


@dataclass
class Lane:
    """One strategy's run of the plan under one maintenance policy (its own table): its
    evaluation folders, its steps, and what it has done. `run.strategy` is the lane's
    name (folders, tables and logs apart per policy); `strategy` the strategy's."""

    run: Run
    data: Path
    strategy: str = ""
    policy: Policy = NO_MAINTENANCE
    steps: list[Step] = field(default_factory=list)
    # The policy said on every record (the file names its policies), and an `auto`
    # lane's format triggers in words (maintenance.auto_note).
    named: bool = False
    note: str | None = None
    applied: int = 0
    failed: bool = False
    records: list[PhaseRecord] = field(default_factory=list)
    # Batch index -> version (the strategy's write.versions), and the newest version
    # upserted so far: what a head-only read holds.
    versions: dict[int, int] = field(default_factory=dict)
    newest: int | None = None
    # The last checked read: its result folder (None once a later read has started) and
    # the version it read (a read after maintenance must read the same).
    last_output: Path | None = None
    last_version: int | None = None
    # How its jobs run (plan.py: ONE_APPLICATION or PER_PHASE); its one application
    # while it runs, or why it could not start (the lane's first step fails with it).
    application: str = PER_PHASE
    app: Application | None = None
    app_failure: str | None = None


def report_line(log: Path) -> dict:
    """The JSON report a job printed last (its one line on stdout)."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return {}
    for line in reversed(lines):
        if line.startswith("{"):
            try:
                return dict(json.loads(line))
            except ValueError:
                continue
    return {}


def layout(lane: Lane) -> tuple[float | None, int | None]:
    """Files per bucket (mean over the buckets that have files) and stored bytes of
    the table's live snapshot."""
    run = lane.run
    table = catalog.get_table(run.conn, run.table_name, run.cfg.table.namespace)
    run.table = table
    _, commits = head_snapshot(run.conn, table)
    files = [f for c in commits for f in c.files]
    buckets = {f.bucket for f in files}
    return (round(len(files) / len(buckets), 2) if buckets else None), sum(f.size for f in files)


def lane_name(strategy: str, policy: Policy, named: bool) -> str:
    """A lane's name, its folders', table's and logs' stem: the strategy's, and its
    policy's folder name when the file names its policies (`delta-rs-every-20`)."""
    return f"{strategy}-{policy.folder}" if named else strategy


def start_lane(
    cfg: Config,
    strategy: str,
    data: Path,
    cores: int,
    say: Say,
    policy: Policy = NO_MAINTENANCE,
    steps: Sequence[Step] = (),
    named: bool = False,
) -> Lane:
    """A clean table and the jobs' config for one strategy and policy (as `contest
    evaluate`); a peer's libraries resolved now, untimed. An `auto` lane's configuration
    has its format's own triggers back (maintenance.auto_config)."""
    note = None
    if policy.kind == AUTO:
        cfg, dropped = auto_config(cfg, auto_of(strategy))
        note = auto_note(strategy, dropped)
        say(f"{strategy} (auto): {note}")
    run = ev.new_run(cfg, lane_name(strategy, policy, named), data, None, 0, cores, None, say)
    run.record.master = f"local[{cores}]"
    run.data = data
    phase_clean(run)
    if run.peer:
        phase_packages(run)
    versions = {b.index: b.version for b in discover(data, cfg.write.versions or None, None)}
    return Lane(run, data, strategy, policy, list(steps), named=named, note=note, versions=versions)


def table_arg(run: Run) -> str:
    """The table a job names: a peer's by its folder, a LakeSoul table by its name."""
    return run.table_dir if run.peer else run.table_name


def drop_tables(lanes: Sequence[Lane], say: Say) -> None:
    """Each lane's table (its metadata and folder) and its reads' folder, all made by
    this run, removed at its end (`--keep-tables` keeps them): a long run's tables grow
    to what the page's last footprint says, and a later run would drop them anyway."""
    for lane in lanes:
        drop_metadata(lane.run)
        drop_outputs(lane.run.cfg, lane.run.table_dir, lane.run.result_dir)
    if lanes:
        say(f"removed the run's {len(lanes)} table(s) (--keep-tables keeps them)")
