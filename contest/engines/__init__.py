"""The engines that run the Write and Read jobs, registered by name, each in a module of
its own imported when asked for (`EngineRegistry`): the harness's own (harness.py:
contest/write, contest/read), stock LakeSoul's libraries (stock.py: write/stock.py,
read/stock.py) and a peer table format (peer.py: contest/peers). `contest write` and
`contest read` (and so the timed jobs of `contest evaluate`) look the engine up and print
what it returns; none of them holds a code path per engine. This module is their face:
what a job is asked, what it answers, what an engine can do.

Every engine's job reports the cores its Spark application held (`spark_cores`): a
score divides by them.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from contest.config import Config
from contest.config.validation import register_check
from contest.data.merge_engines import refusal
from contest.data.workload import contract_operators
from contest.errors import ConfigError, MergeOperatorError, UsageError
from contest.read.job import versions_of
from contest.write.job import WriteMode


@dataclass(frozen=True)
class WriteJob:
    """What `contest write` was asked to do."""

    data: str
    table: str  # absolute path or URI
    name: str | None = None
    mode: WriteMode = WriteMode.CREATE
    only: list[int] | None = None
    delays: Mapping[int, float] = field(default_factory=dict)

    def refuse_concurrent(self, why: str) -> None:
        """For an engine that applies batches one after another: refuse --resume and
        --delay-commit (the harness's concurrent writes) in one line, `why`."""
        if self.mode is WriteMode.RESUME or self.delays:
            raise UsageError(why)

    @property
    def in_order(self) -> dict[str, Any]:
        """The arguments an in-order write (stock LakeSoul's, a peer's) takes from it."""
        return {
            "replace": self.mode is WriteMode.REPLACE,
            "append": self.mode is WriteMode.APPEND,
            "only": self.only,
        }


@dataclass(frozen=True)
class ReadJob:
    """What `contest read` was asked to do."""

    table: str  # a name, or a path (a peer format's table: its folder)
    out: str  # absolute path or URI
    as_of: int | None = None
    from_version: int | None = None
    to_version: int | None = None
    overwrite: bool = False
    allow_gaps: bool = False
    latest_complete: bool = False

    def refuse_concurrent(self, why: str) -> None:
        """For an engine whose writes commit in version order: refuse --latest-complete
        and --allow-gaps (reads beside the harness's concurrent writes) in one line."""
        if self.latest_complete or self.allow_gaps:
            raise UsageError(why)

    @property
    def versions(self) -> dict[str, int | None]:
        """The version arguments every engine's read takes: as of, from, to."""
        return versions_of(self)

    @property
    def versioned(self) -> bool:
        return (
            self.as_of is not None
            or self.from_version is not None
            or bool(self.to_version)
            or self.latest_complete
        )


@dataclass(frozen=True)
class JobOutcome:
    """A job's report (one JSON line on stdout, `spark_cores` in it), lines for people
    (stderr) and the exit code."""

    report: dict
    messages: tuple[str, ...]
    exit_code: int

    def emit(self, out, err) -> int:
        for line in self.messages[:-1]:
            print(line, file=err)
        print(json.dumps(self.report), file=out)
        if self.messages:
            print(self.messages[-1], file=err)
        return self.exit_code


@dataclass(frozen=True)
class Abilities:
    """What an engine's jobs can be asked (a workload's runner asks, contest/workload/
    runner.py, instead of naming engines). Every engine's read job takes reads as of a
    version and the changes of a range, answering each or refusing it in one line (exit
    code EXIT_USAGE, recorded as refused, never scored). `while_writing`:
    its read names one consistent version while upserts land (`--latest-complete`).
    `lacks`: a workload phase kind it has no form of -> why (recorded as skipped).
    A batch it cannot apply (a schema change its format refuses) is refused by its
    write job in one line, recorded as refused, and the lane goes on."""

    while_writing: bool = False
    lacks: Mapping[str, str] = field(default_factory=dict)


class Engine(Protocol):
    name: str

    def write(self, cfg: Config, job: WriteJob) -> JobOutcome: ...

    def read(self, cfg: Config, job: ReadJob) -> JobOutcome: ...

    def abilities(self, cfg: Config) -> Abilities: ...

    def merges(self, cfg: Config, stage: str) -> tuple[str, ...]:
        """The merge engines (contest/data/merge_engines.py) its `stage` merges with."""
        ...


def read_line(table: str, rows: int, seconds: float, out: str) -> str:
    """A Read job's line for people."""
    return f"read {table}: {rows:,} rows in {seconds:.3f} s -> {out}"


def summary_line(report: Any) -> str:
    """A write report's last line, marked `contest: ` when the write did not succeed."""
    return ("" if report.ok else "contest: ") + report.summary()


# The engine peer.format selects (never named by write.engine or read.engine), and the
# harness's own, the default of both.
PEER, HARNESS = "peer", "harness"


class EngineRegistry(MutableMapping[str, Engine]):
    """The engines by name, each imported the first time it is asked for: a job imports
    its own engine's modules and no other's (a peer format's libraries cost a job
    ~0.45 s to import: results/costs.md). Each module holds its engine as `ENGINE`."""

    def __init__(self, modules: Mapping[str, str]) -> None:
        self._modules = dict(modules)
        self._loaded: dict[str, Engine] = {}

    def __getitem__(self, name: str) -> Engine:
        if name not in self._loaded:
            self._loaded[name] = importlib.import_module(self._modules[name]).ENGINE
        return self._loaded[name]

    def __setitem__(self, name: str, engine: Engine) -> None:
        self._modules.setdefault(name, "")
        self._loaded[name] = engine

    def __delitem__(self, name: str) -> None:
        del self._modules[name]
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)


# write.engine and read.engine name one of them (check_engine_settings); the peer engine
# is chosen by peer.format.
AVAILABLE_ENGINES = EngineRegistry(
    {
        HARNESS: "contest.engines.harness",
        "lakesoul-stock": "contest.engines.stock",
        PEER: "contest.engines.peer",
    }
)


def settable_engines() -> list[str]:
    """The engines write.engine and read.engine may name: every registered one but the
    peer's, which peer.format chooses."""
    return [name for name in AVAILABLE_ENGINES if name != PEER]


def check_engine_settings(cfg: Config) -> None:
    """write.engine and read.engine each name a registered engine: the registry is the
    only list (the configuration layer, below this one, names none)."""
    known = settable_engines()
    for key, engine in (("write.engine", cfg.write.engine), ("read.engine", cfg.read.engine)):
        if engine not in known:
            raise ConfigError(f"{key}: {engine!r} is not one of {', '.join(known)}")


register_check("engines", check_engine_settings)


def engine_name(cfg: Config, stage: str) -> str:
    """The engine of a stage ("write" or "read"): a peer format when peer.format is set,
    else write.engine / read.engine."""
    if cfg.peer.format:
        return PEER
    return cfg.write.engine if stage == "write" else cfg.read.engine


def engine_for(cfg: Config, stage: str) -> Engine:
    """The stage's engine; a workload operator it cannot express is refused now."""
    why = operator_refusal(cfg)
    if why:
        raise MergeOperatorError(why)
    return AVAILABLE_ENGINES[engine_name(cfg, stage)]


def merge_engines(cfg: Config) -> tuple[str, ...]:
    """The engines (contest/data/merge_engines.py ENGINES) the configured write and read
    merge with, each stage's engine's own (`Engine.merges`), the write's first."""
    out: list[str] = []
    for stage in ("write", "read"):
        for merge in AVAILABLE_ENGINES[engine_name(cfg, stage)].merges(cfg, stage):
            if merge not in out:
                out.append(merge)
    return tuple(out)


def abilities(cfg: Config) -> Abilities:
    """What a strategy can be asked: its read engine's reads while writing; the phases
    its write engine (whose table it is) or read engine has no form of."""
    read = AVAILABLE_ENGINES[engine_name(cfg, "read")].abilities(cfg)
    write = AVAILABLE_ENGINES[engine_name(cfg, "write")].abilities(cfg)
    return Abilities(read.while_writing, {**read.lacks, **write.lacks})


def who(cfg: Config) -> str:
    """The strategy's engine in a refusal's words."""
    if cfg.peer.format:
        return f"peer format {cfg.peer.format}"
    if cfg.write.engine != HARNESS or cfg.read.engine != HARNESS:
        return "lakesoul-stock"
    return f"LakeSoul (write.mode={cfg.write.mode}, read.merge={cfg.read.merge})"


def operator_refusal(cfg: Config) -> str | None:
    """Why this configuration cannot merge its workload's operators (the contest's and
    the extra columns'), in one line naming the operator and the format, or None."""
    ops = contract_operators(cfg.workload)
    return refusal(ops, merge_engines(cfg), who(cfg))
