"""The fault experiments as a benchmark: options, the run in order, the records."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from contest.config import Config
from contest.errors import UsageError
from contest.infra.postgres import resolve_connection
from contest.infra.proc import stop_spawned
from contest.infra.spark import cores_of, spark_session
from contest.results.benchmarks import FaultRecord
from contest.sitting import (
    SCALE,
    SEED,
    Benchmark,
    Option,
    Say,
    Sitting,
    at_least,
)
from contest.trials.faults.apart import evaluations_apart
from contest.trials.faults.context import make_context
from contest.trials.faults.disk_full import disk_full
from contest.trials.faults.kills import kill_merge, kill_read, kill_write
from contest.trials.faults.nested import nested_tables
from contest.trials.faults.overlap import overlapping_evaluations
from contest.trials.faults.pg_crash import pg_crash
from contest.trials.faults.plan import EXPERIMENTS, FaultPlan
from contest.trials.faults.report import Outcome, latest_outcomes, render_markdown
from contest.trials.faults.user_folders import user_folders
from contest.trials.faults.writers import concurrent_writers


def run_faults(
    cfg: Config,
    spark,
    conn,
    plan: FaultPlan,
    scale: float,
    seed: int,
    say: Say = print,
    on_outcome: Callable[[Outcome], object] | None = None,
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
        ("nested_tables", lambda: nested_tables(ctx, plan.nested_trials)),
        ("user_folders", lambda: user_folders(ctx, plan.user_folder_kills)),
        ("evaluations_apart", lambda: evaluations_apart(ctx, plan.apart_pairs)),
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


def count(flag: str, default: int, help: str) -> Option:
    return Option(flag, help, int, default, **at_least(0))


def experiments(names: list[str] | None) -> tuple[str, ...]:
    """`--only a,b`: known experiment names (default all), or a usage error."""
    only = tuple(EXPERIMENTS if names is None else names)
    unknown = [s for s in only if s not in EXPERIMENTS]
    if unknown or not only:
        raise UsageError(
            f"unknown experiment {', '.join(unknown) or '(none given)'}: choose from "
            f"{', '.join(EXPERIMENTS)}"
        )
    return only


_PLAN = FaultPlan()


class FaultsBench(Benchmark):
    name = "faults"
    stem = "faults"
    summary = (
        "fault-injection experiments: kills, crashes, races, a full disk, nested tables, "
        "a user's folders"
    )
    description = (
        "Break things on purpose on small generated data (kill -9 of write, meta merge "
        "and read; a PostgreSQL crash on a separate cluster; concurrent writers; a full "
        "disk; overlapping evaluations; nested table folders; a user's folders beside a "
        "result; evaluations in separate work folders) and count what was lost, destroyed, "
        "half-committed and recovered; results to <results>/faults.md and faults.jsonl. "
        "Not a test: minutes of work, exit 0 only when every goal is met."
    )
    options = (
        SCALE.but(default=0.01),
        SEED.but(help="generator and kill-moment seed"),
        count("--write-kills", _PLAN.write_kills, "kills of write"),
        count("--merge-kills", _PLAN.merge_kills, "kills of meta merge"),
        count("--merge-commits", _PLAN.merge_commits, "commits of its history"),
        count("--read-kills", _PLAN.read_kills, "kills of read"),
        count("--pg-crashes", _PLAN.pg_crashes, "durable crash runs"),
        count(
            "--pg-unsafe-crashes",
            _PLAN.pg_unsafe_crashes,
            "crash runs with pg.unsafe_no_fsync=true (contrast)",
        ),
        Option("--pg-port", "port of the separate crash cluster", int, _PLAN.pg_port),
        count("--writer-rounds", _PLAN.writer_rounds, "4 writers, existing table"),
        count("--create-rounds", _PLAN.create_rounds, "4 writers racing to create"),
        count("--disk-full-runs", _PLAN.disk_full_runs, "tmpfs runs"),
        count("--evaluate-overlaps", _PLAN.evaluate_overlaps, "overlapping pairs"),
        count(
            "--nested-trials",
            _PLAN.nested_trials,
            "nested tables: refusals, then vacuum/replace/compact beside another table",
        ),
        count(
            "--user-folder-kills",
            _PLAN.user_folder_kills,
            "kills of read beside a user's .NAME.* folders",
        ),
        count("--apart-pairs", _PLAN.apart_pairs, "evaluations in separate work folders"),
        Option(
            "--only",
            f"experiments, comma-separated or repeated (default all): {', '.join(EXPERIMENTS)}",
            many=True,
        ),
    )

    def check(self, options) -> None:
        super().check(options)
        experiments(options.only)

    def run(self, sitting: Sitting) -> bool:
        # deferred: pulls in pandas and tqdm; `contest --help` starts without them
        from contest.evaluation.evaluate import environment

        cfg, opts = sitting.cfg, sitting.options
        fields = FaultPlan.__dataclass_fields__
        counts = {k: v for k, v in vars(opts).items() if k in fields and k != "only"}
        plan = FaultPlan(**counts, only=experiments(opts.only))
        conn = resolve_connection(cfg)
        with spark_session(cfg, "contest-bench-faults") as spark:
            info = {
                "when": sitting.started,
                "git_commit": environment()["git_commit"],
                "scale": opts.scale,
                "seed": opts.seed,
                "cores": cores_of(spark),
            }
            outcomes = run_faults(
                cfg,
                spark,
                conn,
                plan,
                opts.scale,
                opts.seed,
                say=sitting.say,
                on_outcome=lambda o: sitting.record({**info, **o.to_dict()}),
            )
        return all(o.goal_met or o.expected_losses for o in outcomes)

    def render(self, records: Sequence[FaultRecord]) -> str:
        """The newest record of each experiment (runs split with --only add up)."""
        return render_markdown(latest_outcomes(records))
