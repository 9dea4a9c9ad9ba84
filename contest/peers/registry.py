"""The one list of implementations the harness measures: each a table format on a
runtime (LakeSoul on the harness's writer and reader, LakeSoul on its own libraries,
Delta on Spark, Hudi on Spark with the contract's record merger, ...). A format's folder
under `contest/peers/` registers each of its implementations (on Spark, on its native
library) with one `register(...)` call, and everything that lists formats or strategies
asks here, in one order (`listing_order`): the CLI's choices, `contest bench peers` and
`bench stream`, the JVM packages `contest packages fetch` resolves, the strategies'
presets and `:defaults` rows, the sweeps' checks and the merge engines that refuse an
operator, and `contest bench interop`'s families (which engines write and read which
format: each implementation's `family` and each strategy's `interop` part). Adding a
format is its folder plus its line in `contest/peers/__init__.py`, as pyiceberg's
catalogs are one module each behind one registry and ClickBench's systems one folder
each.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contest.data.changes import ChangeSupport
from contest.data.merge_engines import MergeEngine, register_engine, unregister_engine
from contest.errors import ConfigError
from contest.infra import packages
from contest.peers.base import PeerFormat

# A strategy's preset: configuration keys and their values, over the defaults (a config
# file and flags still win).
Preset = Mapping[str, object]


@dataclass(frozen=True)
class FormatFamily:
    """A table format as the lists by format group its implementations (Spark's, its
    native library's; for LakeSoul the harness's own engines and LakeSoul's Python
    engine, none of them a `peer.format` named so): `contest bench interop`'s families.
    `key`: how `--formats` names it; `name`: how a page titles it; `rank`: its place in
    those lists, lower first (equal ranks in listing order)."""

    key: str
    name: str
    rank: int = 0


@dataclass(frozen=True)
class Interop:
    """A part in `contest bench interop`, declared where the strategy (or a reader-only
    implementation) is registered, so a new one is in the matrix with no other edit.
    `writes`: its table (the contest's procedure) is read by its format's readers;
    `reads`: it reads every other writer's table of its format; `compacted`: its table
    is read again after `contest compact` (the format's own compaction)."""

    writes: bool = False
    reads: bool = False
    compacted: bool = False


# No part in the interop matrix (a baseline, a variant the matrix has no cell for).
NO_INTEROP = Interop()


@dataclass(frozen=True)
class AutoMaintenance:
    """What a workload's `auto` maintenance policy leaves to the format (contest/workload/
    maintenance.py): its documented default triggers of compaction and expiry, in words
    (`behaviour`, "none: ..." where it has none; "" = none declared), and the `peer.table`
    keys a strategy's preset sets to turn them off (`off_keys`), dropped on an `auto` lane
    so the defaults apply."""

    behaviour: str = ""
    off_keys: tuple[str, ...] = ()

    def text(self, name: str) -> str:
        """The record's words: the trigger, or that the implementation declares none."""
        return self.behaviour or f"none: {name} declares no automatic compaction or expiry"


# An implementation that declares nothing of its own maintenance.
NO_AUTO = AutoMaintenance()


@dataclass(frozen=True)
class Strategy:
    """One configuration of an implementation that the comparisons name: its preset and,
    for a peer, its row at the format's documented defaults (`<name>:defaults`, what
    makes the strategy the strategy kept, every tuning setting gone)."""

    name: str
    preset: Preset
    defaults: Preset | None = None
    # The change data this strategy takes where it is less than its implementation's
    # (a copy-on-write baseline that keeps no tombstones); None: the implementation's.
    changes: ChangeSupport | None = None
    # Its part in `contest bench interop` (its implementation's `family` the format).
    interop: Interop = NO_INTEROP


@dataclass(frozen=True)
class StreamTable:
    """A streamed table as a kill trial watches it: its folder, and for a LakeSoul table
    its metadata's connection and name."""

    path: Path
    conn: Any = None
    name: str = ""
    namespace: str = "default"


@dataclass(frozen=True)
class Runtime:
    """A runtime (the glossary, docs/architecture/index.md): how an implementation's
    Write and Read jobs run, as a Spark application (spark-submit, a JVM) or as a plain
    Python process of the format's native library (no Spark, no JVM) given the
    evaluation's cores as its threads. Timed alike: the whole process."""

    name: str
    jvm: bool
    label: str
    # What starts its timed jobs, as a run's progress lines name it.
    launcher: str
    # The workload phase kinds its jobs have no form of (recorded as skipped).
    lacks: tuple[str, ...] = ()


SPARK = Runtime("spark", True, "a Spark job (spark-submit)", "spark-submit")
NATIVE = Runtime(
    "native",
    False,
    "a Python process (the format's own library)",
    "python",
    lacks=("compact", "vacuum"),
)
# The runtimes in the order every list shows their implementations: Spark's, then the native.
RUNTIMES = (SPARK, NATIVE)


@dataclass(frozen=True)
class Implementation:
    """A table format on a runtime. `runs_on`: how it runs, in words (the strategies
    page's column). `peer`: the `peer.format` implementation (None for
    LakeSoul's own engines, chosen by write.engine and read.engine). `packages`: the JVM
    package sets it loads, by name (`contest packages fetch --name`), and `excludes` the
    artifacts a set must not pull in. `stream`: the name `contest stream run --format`
    takes ("" = no stream). `commit_records`: the count of the table's own commit
    records, the boundary a kill trial aims at. `merge_engine`: its native merge
    operators' names, registered with the merge engines (contest/data/merge_engines.py)
    so that an operator it cannot express is refused before any work. `runtime`: how its
    jobs run (SPARK or NATIVE); `libraries`: the Python distributions a native one needs, pinned
    (`deltalake==1.6.6`), checked before any work. `rank`: its place among its runtime's
    implementations in every list (`listing_order`)."""

    name: str
    table_format: str
    runs_on: str
    peer: PeerFormat | None = None
    packages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    excludes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    strategies: tuple[Strategy, ...] = ()
    stream: str = ""
    commit_records: Callable[[StreamTable], int] | None = None
    merge_engine: MergeEngine | None = None
    # The change data it takes (deletes, partial columns, key shapes) and by which of its
    # mechanisms; the rest is refused in one line before any work (change_refusal).
    changes: ChangeSupport = ChangeSupport()
    runtime: Runtime = SPARK
    # Why it cannot run on this machine at all ("" = it can: a library that cannot be
    # installed beside the harness's). Its strategies stay named, refused in one line
    # before any work, and are left out of the default lists (compare, bench peers).
    unavailable: str = ""
    libraries: tuple[str, ...] = ()
    # Lower first among the implementations of its runtime; equal ranks (every Spark one's
    # 0) keep the order of registration, the folders' in contest/peers/__init__.py.
    rank: int = 0
    # The table format it is an implementation of (None: in no list by format).
    family: FormatFamily | None = None
    # A reader without a strategy (hudi-rs): its part in `contest bench interop`, under
    # its own name; an implementation with strategies declares theirs on each.
    interop: Interop = NO_INTEROP
    # What the format does by itself under a workload's `auto` maintenance policy.
    auto: AutoMaintenance = NO_AUTO


# By name, in the order of registration: every list asks `implementations()`.
IMPLEMENTATIONS: dict[str, Implementation] = {}


def listing_order(impls: Iterable[Implementation]) -> list[Implementation]:
    """Implementations as every list shows them: by runtime (`RUNTIMES`), then by rank; a
    stable sort, so equal ones keep the order they come in. A format's folder registers
    its Spark and its native implementation together, and the lists still show every
    Spark one before the native ones."""
    return sorted(impls, key=lambda i: (RUNTIMES.index(i.runtime), i.rank))


def implementations() -> list[Implementation]:
    """Every registered implementation, in listing order."""
    return listing_order(IMPLEMENTATIONS.values())


def register(impl: Implementation) -> Implementation:
    """Add an implementation; a name, strategy, stream or package set another one holds
    already is refused (a package set may be shared only with the same coordinates)."""
    if impl.name in IMPLEMENTATIONS:
        raise ConfigError(f"implementation {impl.name!r} is registered already")
    taken = strategies()
    for s in impl.strategies:
        if s.name in taken:
            raise ConfigError(f"strategy {s.name!r} is registered already")
    if impl.stream and impl.stream in stream_names():
        raise ConfigError(f"stream format {impl.stream!r} is registered already")
    sets = package_sets()
    for name, coords in impl.packages.items():
        if name in sets and sets[name] != coords:
            raise ConfigError(f"package set {name!r} is registered with other coordinates")
    check_interop(impl)
    if impl.merge_engine is not None:
        register_engine(impl.merge_engine)
    IMPLEMENTATIONS[impl.name] = impl
    return impl


def check_interop(impl: Implementation) -> None:
    """An interop part names its format (the implementation's family, one key one
    family), a compacted table is a written one, and a part stands on the strategy
    when there is one (on the implementation only for a reader without any)."""
    if impl.strategies and impl.interop != NO_INTEROP:
        raise ConfigError(f"implementation {impl.name!r}: interop parts go on its strategies")
    for name, part in interop_names(impl):
        if part.compacted and not part.writes:
            raise ConfigError(f"interop: {name!r} is compacted but writes no table")
        if part != NO_INTEROP and impl.family is None:
            raise ConfigError(f"interop: {name!r} takes part, but {impl.name!r} has no family")
    fam = impl.family
    if fam is not None and any(f.key == fam.key and f != fam for f in families()):
        raise ConfigError(f"format family {fam.key!r} is registered already, named otherwise")


def unregister(name: str) -> None:
    """Remove an implementation (a test's toy one) and its merge engine."""
    impl = IMPLEMENTATIONS.pop(name)
    if impl.merge_engine is not None and not any(
        i.merge_engine == impl.merge_engine for i in IMPLEMENTATIONS.values()
    ):
        unregister_engine(impl.merge_engine.name)


def strategies() -> dict[str, Strategy]:
    """Every implementation's strategies, in listing order."""
    return {s.name: s for impl in implementations() for s in impl.strategies}


def available_strategies() -> list[str]:
    """The strategies a default comparison runs: every one whose implementation can run
    here (`unavailable` empty), in listing order."""
    return [s.name for i in implementations() if not i.unavailable for s in i.strategies]


def change_support(strategy: str) -> ChangeSupport:
    """The change data a strategy takes: its own declaration, else its implementation's."""
    impl = implementation_of(strategy)
    own = next(s.changes for s in impl.strategies if s.name == strategy)
    return own if own is not None else impl.changes


def implementation_of(strategy: str) -> Implementation:
    for impl in implementations():
        if any(s.name == strategy for s in impl.strategies):
            return impl
    raise KeyError(strategy)


def interop_names(impl: Implementation) -> list[tuple[str, Interop]]:
    """The names an implementation takes part in `contest bench interop` under, with
    their parts: each strategy's, or a reader-only implementation's own."""
    return [(s.name, s.interop) for s in impl.strategies] or [(impl.name, impl.interop)]


def families() -> list[FormatFamily]:
    """The table formats the implementations declare, each once: by rank, equal ranks
    in listing order."""
    found = {i.family.key: i.family for i in implementations() if i.family is not None}
    return sorted(found.values(), key=lambda f: f.rank)


def interop_parts(family: FormatFamily) -> list[tuple[str, Interop]]:
    """Who takes part in `contest bench interop` for a format, in listing order: each
    strategy or reader-only implementation of it (its name) with its part."""
    found = [i for i in implementations() if i.family is not None and i.family.key == family.key]
    return [(n, p) for i in found for n, p in interop_names(i) if p != NO_INTEROP]


def peer_formats() -> dict[str, PeerFormat]:
    """The values `peer.format` takes, and their implementations."""
    return {i.name: i.peer for i in implementations() if i.peer is not None}


def stream_names() -> tuple[str, ...]:
    """The formats `contest stream run --format` takes."""
    return tuple(i.stream for i in implementations() if i.stream)


def by_stream(name: str) -> Implementation:
    for impl in implementations():
        if impl.stream == name:
            return impl
    raise ConfigError(f"--format: {name!r} is not one of {', '.join(stream_names())}")


def package_sets() -> dict[str, tuple[str, ...]]:
    """Every JVM package set by name: the harness's own (contest/infra/packages.py), then
    every implementation's."""
    own = dict(packages.PACKAGES)
    return own | {n: c for impl in implementations() for n, c in impl.packages.items()}


def package_excludes() -> dict[str, tuple[str, ...]]:
    return {n: c for impl in implementations() for n, c in impl.excludes.items()}


def merge_engines() -> list[MergeEngine]:
    """The implementations' own merge engines (each once), in listing order."""
    engines = {i.merge_engine.name: i.merge_engine for i in implementations() if i.merge_engine}
    return list(engines.values())
