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

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

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
from contest.infra.noise import BUSY_RULE
from contest.infra.pagecache import read_ahead
from contest.peers import change_check
from contest.peers.registry import available_strategies
from contest.results.disclosure import disclosure_name
from contest.results.intervals import Interval, geometric_mean
from contest.results.runs import RunRecord, other_cpu
from contest.results.sittings import REFERENCE, SittingSummary, groups, newest, summarize
from contest.sitting import (
    CORES,
    DATA,
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


def _num(v: float | None, digits: int = 1) -> str:
    return "-" if v is None else f"{v:,.{digits}f}"


def render_summary(s: SittingSummary) -> list[str]:
    planned = f" of {s.rounds_planned}" if s.rounds_planned else ""
    lines = [
        f"## Scale {s.scale:g}, {s.shape}, codec: {s.codec}"
        if s.scale is not None
        else f"## {s.shape}, codec: {s.codec}",
        "",
        f"Sitting `{s.sitting}`: {s.rounds_run}{planned} round(s), strategies in rotated "
        f"order each round"
        + (f" ({', '.join(s.once)} in the first round only)" if s.once else "")
        + f"; commit {', '.join(s.commits)}"
        + ("; resumed on the same commit and machine" if s.resumed else "")
        + f"; CPU: {s.cpu}"
        + f". Full disclosure: [{disclosure_name(s.sitting)}]({disclosure_name(s.sitting)}).",
        "",
        f"| strategy | n | rows/core/s: median [interval] | write s | read s | peak tree GB "
        f"| {REFERENCE} / this |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in s.rows:
        if row.score is None:
            score = "- (no quiet, correct run)"
        elif row.score.n < 2:
            score = f"{row.score.median:,.0f} (single run)"
        else:
            score = (
                f"{row.score.median:,.0f} [{row.score.low:,.0f}-{row.score.high:,.0f}] "
                f"({row.score.confidence:.0%})"
            )
        n = row.score.n if row.score else 0
        ratio = "-" if row.ratio is None else row.ratio.text()
        gb = None if row.peak_tree_bytes is None else row.peak_tree_bytes / 1e9
        lines.append(
            f"| {row.strategy} | {n} of {row.attempts} | {score} | {_num(row.write_s)} "
            f"| {_num(row.read_s)} | {_num(gb, 2)} | {ratio} |"
        )
    ratios = s.peer_ratios
    lines.append("")
    if ratios:
        lines.append(
            f"Geometric mean of {REFERENCE} / each other strategy ({len(ratios)}"
            + ("; `:defaults` rows apart" if s.two_rows else "")
            + f"): {geometric_mean(ratios):.2f}x."
        )
    lines.append(
        "An interval is distribution-free (order statistics of the per-round ratios) at "
        "the confidence shown; `~` marks one that crosses 1, `single run` one round only."
    )
    lines += render_two_rows(s)
    if s.excluded:
        lines += ["", "Left out of the medians:", ""] + [f"- {e}" for e in s.excluded]
    return [*lines, ""]


def _score(v: Interval | None) -> str:
    if v is None:
        return "-"
    return f"{v.median:,.0f}" + (f" (n={v.n})" if v.n > 1 else " (single run)")


def render_two_rows(s: SittingSummary) -> list[str]:
    """Each peer at its tuned preset and at its format's documented defaults, from the
    same sitting (ClickBench's two rows); nothing when no `:defaults` row ran."""
    if not s.two_rows:
        return []
    lines = [
        "",
        "Two rows per format (ClickBench's): each peer's preset (tuned) and its format's "
        "documented defaults (`<strategy>:defaults`), from this sitting; `tuned / "
        "defaults` in the rounds both ran.",
        "",
        f"| strategy | tuned rows/core/s | defaults rows/core/s | tuned / defaults "
        f"| {REFERENCE} / tuned | {REFERENCE} / defaults |",
        "|---|---|---|---|---|---|",
    ]
    for t in s.two_rows:
        ratio = "-" if t.ratio is None else t.ratio.text()
        ref = ["-" if r.ratio is None else r.ratio.text() for r in (t.tuned, t.defaults)]
        lines.append(
            f"| {t.strategy} | {_score(t.tuned.score)} | {_score(t.defaults.score)} "
            f"| {ratio} | {ref[0]} | {ref[1]} |"
        )
    return lines


def native_line(natives: Sequence[tuple[str, str | None]]) -> list[str]:
    """The native engines' Python libraries as a run recorded them (none before they
    were recorded: no line)."""
    if not natives:
        return []
    return [
        "- native engines' Python libraries: "
        + ", ".join(f"{k} {v or 'absent'}" for k, v in natives)
    ]


def data_lines(files: Sequence[dict[str, Any]] | None) -> list[str]:
    """A sitting on a user's data names its files (name, bytes, SHA-256; never their
    content), so sittings on the same data are told from sittings on other data."""
    if not files:
        return []
    return [
        "",
        "## The data (a user's files)",
        "",
        "| file | bytes | SHA-256 |",
        "|---|---:|---|",
        *(f"| {f['name']} | {f['bytes']:,} | `{f['sha256']}` |" for f in files),
    ]


def render_disclosure(records: Sequence[RunRecord]) -> str:
    """A sitting's full disclosure (TPC's, ClickBench's): everything needed to judge
    and repeat it, from its records alone."""
    first = records[0]
    env = first.environment or {}
    m = first.machine
    commits = sorted({r.git_commit + ("+dirty" if r.git_dirty else "") for r in records})
    packages = sorted((env.get("jvm_packages") or {}).items())
    stamped = first.stamp.environment if first.stamp is not None else None
    libraries = sorted(((stamped or {}).get("libraries") or {}).items())
    natives = sorted((env.get("native_libraries") or {}).items())
    lines = [
        f"# Full disclosure: sitting `{first.sitting}`",
        "",
        "## Machine and software",
        "",
        f"- machine id: `{first.machine_id}`; CPU: {m.cpu_model}, {m.cores} cores; memory: "
        f"{m.memory_bytes / 2**30:.1f} GiB",
        f"- disk of the work folder: {m.disk_device} ({m.disk_fstype}), "
        f"{m.disk_total_bytes / 1e9:.0f} GB, {m.disk_free_bytes / 1e9:.0f} GB free",
        f"- OS: {m.os}, kernel {m.kernel}; JVM: {m.java}",
        f"- Python {env.get('python', '?')}, Spark {env.get('spark', '?')}, pyarrow "
        f"{env.get('pyarrow', '?')}, lakesoul (PyPI) {env.get('lakesoul_python', '?')}",
        "- every Python library: "
        + (
            ", ".join(f"{k} {v}" for k, v in libraries)
            or "not recorded (records from before they carried it)"
        ),
        "- JVM libraries (pinned coordinates): "
        + "; ".join(f"{k}: {', '.join(v)}" for k, v in packages),
        *native_line(natives),
        f"- commits: {', '.join(commits)}",
        *data_lines(first.data_files),
        "",
        "## Each job, in the order run",
        "",
        "Noise is measured during each job: other work's share of all CPUs (mean and "
        "peak over 2 s windows) and the CPU steal; `busy` runs are left out of the "
        f"medians. The one busy rule: {BUSY_RULE}.",
        "",
        "| when (UTC) | round | # | strategy | attempt | write s | read s | write noise "
        "(mean/peak) | read noise (mean/peak) | steal | load1 before | correct | busy |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:

        def noise(stage: str, rec: RunRecord = r) -> str:
            jl = rec.load.get(stage)
            if jl is None or jl.outside_share is None:
                return "-"
            return f"{jl.outside_share:.0%}/{(jl.peak_outside_share or 0):.0%}"

        steal = max(
            (jl.steal_during or 0.0 for jl in r.load.values() if jl.steal_during is not None),
            default=None,
        )
        write = r.load.get("write")
        load1 = write.load1_before if write is not None else None
        lines.append(
            f"| {r.when} | {r.compare_round} | {r.position} | {r.strategy} | {r.attempt} "
            f"| {_num(r.write_s)} | {_num(r.read_s)} | {noise('write')} | {noise('read')} "
            f"| {'-' if steal is None else f'{steal:.1%}'} | {_num(load1, 2)} | {r.correct} "
            f"| {r.busy or ''} |"
        )
    lines += ["", "## Each strategy's configuration", ""]
    seen: set[str] = set()
    for r in records:
        if r.strategy in seen:
            continue
        seen.add(r.strategy)
        settings = preset(r.strategy) if is_strategy(r.strategy) else {}
        lines += [
            f"### {r.strategy}",
            "",
            "Preset over the defaults: `"
            + json.dumps(settings, sort_keys=True, default=str)
            + "`; the sitting's settings: `"
            + json.dumps(r.settings or {}, sort_keys=True, default=str)
            + "`.",
            "",
            "<details><summary>effective configuration</summary>",
            "",
            "```json",
            json.dumps(r.config, sort_keys=True, indent=1, default=str),
            "```",
            "",
            "</details>",
            "",
        ]
    return "\n".join(lines)


SCALES = Option(
    "--scales",
    "scales of generated data",
    float,
    [0.1],
    many=True,
    valid=lambda v: v > 0,
    rule="positive",
)
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
        runs = list(records)
        lines = [
            "# Peers: interleaved sittings",
            "",
            "Each section is one sitting at one scale on one data shape: every strategy "
            "ran the contest's procedure in interleaved rounds (rotated each round), "
            "every run checked by the oracle, its noise measured during each job. Ratios "
            "are taken round by round within the sitting. Newest sitting first; the "
            "sittings a newer one of the same scale, shape and codec replaced follow, "
            "kept whole (another machine's ratios are evidence too, not to be pooled).",
            "",
        ]
        latest = sorted(newest(runs).values(), key=lambda g: g[0].sitting or "", reverse=True)
        for g in latest:
            lines += render_summary(summarize(g))
        shown = {(g[0].sitting, g[0].scale, g[0].data_shape) for g in latest}
        earlier = [
            g for g in groups(runs) if (g[0].sitting, g[0].scale, g[0].data_shape) not in shown
        ]
        if earlier:
            lines += ["# Earlier sittings", ""]
        for g in sorted(earlier, key=lambda g: g[0].sitting or "", reverse=True):
            head, *rest = render_summary(summarize(g))
            lines += ["#" + head, *rest]
        return "\n".join(lines)

    def extras(self, records: Sequence[RunRecord], folder: Path) -> None:
        by_sitting: dict[str, list[RunRecord]] = {}
        for r in records:
            by_sitting.setdefault(r.sitting or "", []).append(r)
        for sitting_id, recs in by_sitting.items():
            path = folder / disclosure_name(sitting_id)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_disclosure(recs))
