"""`contest bench peers`: the comparison as a sitting a skeptic would sign.

Every strategy runs the contest's procedure (`contest evaluate`: timed write, merge,
timed read, the oracle's check) in interleaved rounds in one sitting: round 1 in the
given order, each later round rotated by one, so no strategy always runs first, last or
after the same neighbour. The noise of the machine is measured during every job
(contest/infra/noise.py); a busy run is kept, marked and left out of the medians, and
run again (bounded). Every ratio is taken within the sitting, round by round (the two
runs of a round share the machine's state), with a distribution-free interval
(contest/results/intervals.py); one round or an interval across 1 says so. Each sitting
is disclosed in full beside its page: machine, OS, JVM, every library's version, each
strategy's configuration, the commit, the noise of every job, what was left out and why.

The slow merge-at-write peers may run in the first round only (`--once`, to keep a
sitting at scale 1 within its time: a hudi-mor run takes twenty minutes there); their
rows say `single run`, and the later rounds rotate the others.

A sitting resumes (`--resume SITTING`) on the same commit and machine, in its rotation,
and its page says it was resumed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from contest.benchmarks.peers import page
from contest.benchmarks.peers.disclosure import write_disclosures
from contest.config import Config
from contest.data.batches import discover
from contest.data.workload import schema_of_batch
from contest.errors import UsageError
from contest.evaluation.strategies import (
    is_strategy,
    preset,
    round_order,
    strategy_names,
)
from contest.infra.machine import cpu_model, git_state, machine_id
from contest.infra.pagecache import read_ahead
from contest.peers import change_check
from contest.peers.registry import available_strategies
from contest.results.runs import RunRecord, other_cpu
from contest.results.sittings import REFERENCE
from contest.sitting import (
    CORES,
    DATA,
    SCALES,
    SEED,
    WORK,
    WORKLOAD,
    Benchmark,
    Option,
    Sitting,
    at_least,
)

# --codec: each strategy's own preset, or one codec for every strategy's files.
CODEC_CHOICES = ("preset", "none", "snappy", "zstd")


def codec_overrides(codec: str) -> dict[str, object]:
    """One codec for every strategy's data files and result (the harness's write and
    read, every peer format); `preset` changes nothing. lakesoul-stock's data files are
    written by LakeSoul's native writer, whose codec is fixed (zstd): its result follows."""
    if codec == "preset":
        return {}
    return {"write.codec": codec, "read.codec": codec, "peer.codec": codec}


def refuse_changes(
    config: Callable[..., Config], names: Sequence[str], overrides: dict, data: Path
) -> None:
    """Change data one of the sitting's strategies cannot take: refused in one line
    before any of them writes (contest/peers/change_check.py)."""
    for name in names:
        cfg = config({**preset(name), **overrides})
        found = schema_of_batch(cfg.workload)
        discover(data, cfg.write.versions or None, found)
        change_check.refuse(cfg, found, name)


def sitting_order(names: Sequence[str], once: Sequence[str], rnd: int) -> list[str]:
    """The strategies of round `rnd`: every one in the first round, in the given order;
    later rounds leave out those run `once` and rotate the rest."""
    if rnd == 1:
        return list(names)
    return round_order([n for n in names if n not in once], rnd)


STRATEGY_LIST = Option(
    "--strategies",
    f"strategies to compare (default: all; {REFERENCE} is the reference; "
    "`<strategy>:defaults` a peer at its format's documented defaults)",
    str,
    None,
    many=True,
    valid=is_strategy,
    rule="one of " + ", ".join(strategy_names(variants=True)),
)
ONCE = STRATEGY_LIST.but(
    flag="--once",
    help="strategies run in the first round only, their rows labelled single runs (the "
    "slow merge-at-write peers at scale 1)",
)
ROUNDS = Option("--rounds", "interleaved rounds", int, 5, **at_least(1))
CODEC = Option(
    "--codec",
    "one Parquet codec for every strategy's files, or each strategy's preset",
    str,
    "preset",
    valid=lambda v: v in CODEC_CHOICES,
    rule="one of " + ", ".join(CODEC_CHOICES),
)
BUSY_RETRIES = Option(
    "--busy-retries", "times a busy run is run again within its round", int, 1, **at_least(0)
)
RESUME = Option("--resume", "continue this sitting (its id) on the same commit and machine")


class PeersBench(Benchmark):
    name = "peers"
    stem = "peer_sittings"
    discloses = False  # its own pages, each job's write and read apart
    summary = "every strategy in interleaved, rotated rounds in one sitting, with intervals"
    description = (
        "Run the contest's procedure for every strategy in interleaved rounds (the order "
        "rotated each round) in one sitting, every run checked by the oracle and its noise "
        "measured during each job; busy runs left out and run again; ratios to optimized "
        "round by round with distribution-free intervals; a full disclosure per sitting. "
        "Records to <results>/peer_sittings.jsonl, the page to peer_sittings.md."
    )
    options = (
        SCALES,
        STRATEGY_LIST,
        ROUNDS,
        ONCE,
        CODEC,
        BUSY_RETRIES,
        RESUME,
        SEED,
        CORES,
        WORK,
        DATA.but(help="your own data folder instead of generated scales (with --workload)"),
        WORKLOAD,
    )

    def run(self, sitting: Sitting) -> bool:
        # deferred: pulls in pandas and tqdm; `contest --help` starts without them
        from contest.evaluation.data_cache import cached_data
        from contest.evaluation.evaluate import drop_run, evaluate

        opts, say = sitting.options, sitting.say
        names = list(opts.strategies or available_strategies())
        once = list(opts.once or [])
        if stray := [n for n in once if n not in names or n == REFERENCE]:
            raise UsageError(
                f"--once: {', '.join(stray)} is not one of the sitting's peers "
                f"({', '.join(n for n in names if n != REFERENCE)})"
            )
        overrides = codec_overrides(opts.codec)
        sitting_id, done = sitting.started, set[tuple[float, int, str]]()
        if opts.resume:
            sitting_id, done = self.resumable(sitting, opts.resume, names, once)
        settings = {
            "codec": opts.codec,
            "rounds": opts.rounds,
            "strategies": names,
            "once": once,
            "busy_retries": opts.busy_retries,
            "resumed": bool(opts.resume),
            # Each run starts with the batches in the page cache (contest/infra/pagecache.py).
            "read_ahead": True,
        }
        cores = opts.cores or os.cpu_count() or 1
        ok = True
        # Your own data (--data): one pass over it instead of the generated scales.
        sources: list[tuple[float, Path | None]] = [(s, None) for s in opts.scales]
        if opts.data:
            sources = [(0.0, Path(opts.data).absolute())]
        for scale, given in sources:
            data = given or cached_data(sitting.config(), scale, opts.seed, say)
            refuse_changes(sitting.config, names, overrides, data)
            for rnd in range(1, opts.rounds + 1):
                for pos, name in enumerate(sitting_order(names, once, rnd), 1):
                    if (scale, rnd, name) in done:
                        continue
                    for attempt in range(1, opts.busy_retries + 2):
                        again = f", attempt {attempt}" if attempt > 1 else ""
                        where = f"scale {scale:g}" if given is None else str(given)
                        say(f"== {where}, round {rnd}/{opts.rounds} (#{pos}): {name}{again}")
                        cfg = sitting.config({**preset(name), **overrides})
                        read_ahead(data, say)
                        rec = evaluate(cfg, name, data=data, cores=cores, say=say)
                        rec.sitting, rec.compare_round = sitting_id, rnd
                        rec.position, rec.attempt, rec.settings = pos, attempt, settings
                        sitting.record(rec.to_dict())
                        ok = ok and rec.correct
                        # A checked run's table and result go (eleven scale-1 tables do
                        # not fit beside the next scale's); a wrong one's stay to inspect.
                        if rec.correct:
                            drop_run(cfg, rec)
                        if (rec.correct and not rec.busy) or rec.timed_out:
                            break  # a run stopped at its cap would be stopped again
                        if rec.busy:
                            say(f"{name}: busy ({rec.busy}): left out of the medians")
        return ok

    def resumable(
        self, sitting: Sitting, sitting_id: str, names: list[str], once: list[str]
    ) -> tuple[str, set[tuple[float, int, str]]]:
        """The resumed sitting's id and what it has done; refused on another commit or
        machine, or with other strategies (the rotation would change)."""
        mine = [r for r in sitting.results.load() if r.sitting == sitting_id]
        if not mine:
            raise UsageError(f"--resume: no sitting {sitting_id!r} in {sitting.results.jsonl}")
        commit, dirty = git_state(Path(__file__).resolve().parent)
        if {r.git_commit for r in mine} != {commit} or dirty:
            raise UsageError(
                f"--resume: sitting {sitting_id} ran on commit "
                f"{', '.join(sorted({r.git_commit for r in mine}))}, this is {commit}"
                + (" with uncommitted changes" if dirty else "")
                + ": start a new sitting"
            )
        if {r.machine_id for r in mine} != {machine_id()}:
            raise UsageError(f"--resume: sitting {sitting_id} ran on another machine")
        # A VM keeps its id when it moves to other hardware (this one did, AMD to Intel,
        # between two sittings): the CPU must be the one the sitting ran on too.
        if where := other_cpu(mine, cpu_model()):
            raise UsageError(f"--resume: sitting {sitting_id} {where}: start a new sitting")
        plan = mine[0].sitting_settings
        if list(plan.strategies) != names or sorted(plan.once) != sorted(once):
            raise UsageError(
                f"--resume: sitting {sitting_id} ran --strategies {','.join(plan.strategies)}"
                + (f" --once {','.join(plan.once)}" if plan.once else "")
            )
        retries = (mine[0].settings or {}).get("busy_retries", 1)
        done: set[tuple[float, int, str]] = set()
        for r in mine:
            final = (r.correct and not r.busy) or (r.attempt or 1) > retries
            if final and r.scale is not None and r.compare_round is not None:
                done.add((r.scale, r.compare_round, r.strategy))
        return sitting_id, done

    def render(self, records: Sequence[RunRecord]) -> str:
        return page.render(records)

    def extras(self, records: Sequence[RunRecord], folder: Path) -> None:
        write_disclosures(records, folder)
