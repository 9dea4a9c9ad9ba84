"""`contest workload run`: a workload's phases for each strategy (its lane: lanes.py),
interleaved step by step (as `contest compare` interleaves runs), through the
evaluation's own pieces: its folders and table (`evaluate.new_run`, `phase_clean`), its
timed spark-submit jobs (`run.run_stage_job`) and its oracle. Upserts and reads are
Write and Read jobs, each its own process as the contest's procedure times them; the
metadata merge runs in this process (as in `contest evaluate`); a compaction is `contest
compact` in a process of its own. Every read is checked against the oracle at the
version it read.

A peer format's and stock LakeSoul's writes take the same `--append --only`; what a
strategy's reads can be asked is its engine's `Abilities` (contest/engines/): a read
as of a version or of a range's changes goes to its read job, which answers it through
the format's own mechanism (a peer's: contest/peers/read.py) or refuses it in one line
(recorded as refused, never scored); a reader that cannot name one version while
upserts land runs a concurrent step's upserts alone, its reads recorded as skipped. A
peer's compaction is the format's own, the way its documentation recommends (`contest
compact` with peer.format set: contest/peers/compact.py), and its vacuum the format's
own expiry of old versions (`contest vacuum`: contest/peers/expire.py), each in a
process of its own as LakeSoul's; a compaction record's files per bucket are the
format's count of the files a read opens afterwards (a peer's upserts and reads have
none: counting them would add to their timed jobs). What a strategy has no form of
(`Abilities.lacks`: a peer's metadata merge, stock LakeSoul's compaction and vacuum) is
recorded as skipped, with why.

Each maintenance policy of a longevity block runs on its own table: a lane per strategy
and policy (its steps from plan.py, the policy's logic in maintenance.py), its records
naming the policy; a read after a policy's maintenance must read the version the read
before it did, checked by the same oracle answer. `keep_outputs` (outputs.py) copies
each lane's last checked read afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from contest.config import Config
from contest.data.batches import discover
from contest.errors import PhaseError
from contest.evaluation import evaluate as ev
from contest.evaluation.strategies import file_stem, round_order
from contest.results.workloads import PhaseRecord
from contest.workload.application import Application, settle
from contest.workload.lanes import Lane, Say, start_lane, unsupported
from contest.workload.phases import Runner
from contest.workload.plan import ONE_APPLICATION, Plan, Step


def start_application(lane: Lane, say: Say) -> None:
    """The lane's one long-lived application (application.py), started before its first
    step; one that cannot start fails the lane, recorded by its first step."""
    run = lane.run
    log = run.eval_dir / "logs" / f"workload-{file_stem(run.strategy)}-application.log"
    lane.app = Application(run, log)
    try:
        lane.app.start()
    except PhaseError as exc:
        say(f"{run.strategy}: {exc}")
        lane.app_failure = str(exc)


def stop_application(runner: Runner, lane: Lane) -> list[PhaseRecord]:
    """Stop the lane's application: its whole process recorded as an `application`
    phase after the lane's last step (the start and stop its first and last phases
    paid, and its peak memory), or nothing when it had none."""
    if lane.app is None:
        return []
    whole = lane.app.stop()
    lane.app = None
    n = len(lane.steps) + 1
    step = Step("application")
    if whole is None:
        return [runner.record(lane, n, step, "application", ok=False, error="killed: no end")]
    ok = whole.ok or lane.failed  # a failed lane's application may have died with it
    # Its whole life is sampled rarely (application.WHOLE_POLL_S), its commands closely.
    peak = max([whole.peak_rss_bytes, *(r.peak_rss_bytes or 0 for r in lane.records)])
    return [runner.record(lane, n, step, "application", job=whole, peak_rss_bytes=peak, ok=ok)]


def run_workload(
    workload: str,
    configs: dict[str, Config],
    plan: Plan,
    data: Path,
    scale: float,
    cores: int,
    say: Say,
    sink: Callable[[list[PhaseRecord]], None] | None = None,
    lanes: list[Lane] | None = None,
) -> list[PhaseRecord]:
    """Every step for every strategy that can run phases and each of the plan's
    policies (a lane each, its own table), interleaved step by step (the lanes' order
    rotated each step); the records of all phases (a lane's failure ends it, not the
    run), each step's also given to `sink` as soon as it ends (a run stopped early keeps
    them). The lanes run are appended to `lanes` (their last reads: `keep_outputs`).
    Holds the work folder's evaluation lock throughout."""
    first = next(iter(configs.values()))
    runner = Runner(workload, scale, plan.policy_steps(0), say)
    runner.batch_rows = {b.index: b.rows for b in discover(data, None, None)}
    ran: list[Lane] = [] if lanes is None else lanes
    refused: list[PhaseRecord] = []
    with ev.work_lock(first.work_path / "eval"):
        for name, cfg in configs.items():
            why = unsupported(cfg, plan.policy_steps(0), data, name)
            if why:
                say(f"{name}: cannot run the workload's phases ({why}): not run")
                refused.append(runner.refused(name, cfg, why))
                if sink is not None:
                    sink(refused[-1:])
                continue
            for policy, steps in plan.steps.items():
                lane = start_lane(cfg, name, data, cores, say, policy, steps, plan.named)
                lane.application = plan.application
                ran.append(lane)
        try:
            if plan.application == ONE_APPLICATION:
                # Started side by side (untimed: Python's imports; Spark starts with
                # each lane's first command).
                with ThreadPoolExecutor(max_workers=len(ran) or 1) as pool:
                    list(pool.map(lambda lane: start_application(lane, say), ran))
            step_lanes(runner, ran, say, sink)
        finally:
            for lane in ran:
                ended = stop_application(runner, lane)
                if sink is not None and ended:
                    sink(ended)
    return refused + [r for lane in ran for r in lane.records]


def step_lanes(
    runner: Runner,
    ran: list[Lane],
    say: Say,
    sink: Callable[[list[PhaseRecord]], None] | None,
) -> None:
    """Every lane's steps, interleaved step by step."""
    started = time.perf_counter()
    most = max((len(lane.steps) for lane in ran), default=0)
    for n in range(1, most + 1):
        # Interleaved, the order rotated each step: every lane sees the same
        # machine, and none always runs first or after the same neighbour.
        for lane in round_order(ran, n):
            if not lane.failed and n <= len(lane.steps):
                if lane.app is not None:
                    others = (o.app.pid for o in ran if o.app is not None and o is not lane)
                    settle(tuple(pid for pid in others if pid is not None))
                runner.step(lane, n, lane.steps[n - 1])
                if sink is not None:
                    sink([r for r in lane.records if r.step == n])
        say(f"[{time.perf_counter() - started:7.1f}s] step {n}/{most} done")
