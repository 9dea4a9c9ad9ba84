"""The one shape of a benchmark: its options, `run`, `record`, `render`.

A benchmark declares its command-line options (shared ones are declared once, here),
runs, hands each row to `Sitting.record` as soon as it is measured (read into its
typed record, `contest.results.registry`, appended to `<results>/<stem>.jsonl`, then
`<stem>.md` rendered again from every line there, so an interrupted run keeps what it
measured), and renders markdown from typed records of any age: the records' readers
know the old lines' shapes, the renderers read fields, never string keys.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from contest.config import Config
from contest.errors import DataError, UsageError
from contest.evaluation.disclosure import disclosure
from contest.infra.machine import (
    check_local_cores,
    git_state,
    load1,
    machine_id,
)
from contest.infra.noise import BUSY_RULE, Background
from contest.results import registry
from contest.results.disclosure import links
from contest.results.record import NotARecord

Say = Callable[[str], None]
# A row as a benchmark measures it, before it is read into its typed record.
Row = dict[str, Any]
# A part of a benchmark's rows is stamped as it ends (`{"stamp": Sitting.stamp()}`), so
# its noise is its own part's; `Sitting.record` stamps the rest.
Stamper = Callable[[], Row]


def no_stamp() -> Row:
    return {}


R = TypeVar("R")


@dataclass(frozen=True)
class Option:
    """One command-line option of a benchmark, with the rule its value must follow."""

    flag: str
    help: str
    type: Callable[[str], Any] | None = None
    default: Any = None
    action: str | None = None
    valid: Callable[[Any], bool] | None = None  # checked when the value is not None
    rule: str = ""  # what `valid` asks, for the error: "--repeat must be at least 1"
    many: bool = False  # a list: `a,b` or the flag repeated, each item of `type`
    old: tuple[str, ...] = ()  # old spellings, still accepted, left out of the help
    # (contest.cli.bench.add_option puts it on the command line, by its conventions)

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    def but(self, **changes: Any) -> Option:
        """The same option with another default, help, ...: one benchmark's variant."""
        return replace(self, **changes)

    def check(self, value: Any) -> None:
        values = value if isinstance(value, list) else [value]
        for v in values:
            if v is not None and self.valid is not None and not self.valid(v):
                raise UsageError(f"{self.flag} must be {self.rule}, got {v}")


def at_least(n: int) -> dict[str, Any]:
    return {"valid": lambda v: v >= n, "rule": f"at least {n}"}


POSITIVE: dict[str, Any] = {"valid": lambda v: v > 0, "rule": "positive"}

# The options several benchmarks share, declared once; `.but(...)` varies a default.
RESULTS = Option(
    "--results",
    "results folder (default: this machine's own, <work_dir>/results/<machine>; "
    "give results/ to publish)",
    old=("--out",),
)
REPEAT = Option("--repeat", "rounds", int, 3, **at_least(1))
SCALE = Option("--scale", "scale of generated data", float, 1.0, **POSITIVE)
SCALES = Option("--scales", "scales of generated data", float, [0.1], many=True, **POSITIVE)
SEED = Option("--seed", "generator seed", int, 2022)
CORES = Option("--cores", "local[N] of the timed jobs (default: all)", int, **at_least(1))
WORK = Option("--work", "work folder (default: work_dir)")
DATA = Option("--data", "data folder (default: generated at --scale, cached)")
WORKLOAD = Option(
    "--workload",
    "a named workload or a TOML file (your own data's: `contest dataset describe`); "
    "default: the configuration's [workload]",
)


@dataclass(frozen=True)
class Results:
    """`<folder>/<stem>.jsonl`, one record a line, and the markdown rendered from it."""

    folder: Path
    stem: str
    # Which record its lines are: the registry's entry for `<stem>.jsonl` by default.
    of: registry.ResultsFile | None = None

    @property
    def jsonl(self) -> Path:
        return self.folder / f"{self.stem}.jsonl"

    @property
    def md(self) -> Path:
        return self.folder / f"{self.stem}.md"

    @property
    def kind(self) -> registry.ResultsFile:
        return self.of or registry.by_stem(self.stem)

    def append(self, rows: Iterable[Row]) -> list[Any]:
        """Each row read into its typed record first (a row its record refuses is a
        bug, named here, not a line no reader takes), then appended as it was; the
        typed records back."""
        lines, records = [], []
        for row in rows:
            try:
                records.append(self.kind.parse(row))
            except (NotARecord, TypeError) as exc:
                raise DataError(
                    f"{self.stem}: a row that is not a {self.kind.what}: {exc}"
                ) from None
            lines.append(json.dumps(row) + "\n")
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.jsonl.open("a") as fh:
            fh.writelines(lines)
        return records

    def load(self) -> list[Any]:
        """Every line as its typed record (`contest.results.registry`)."""
        if not self.jsonl.exists():
            return []
        return self.kind.read(self.jsonl)


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def where_run() -> tuple[str, str, bool | None]:
    """(machine id, commit, dirty tree) of this process."""
    commit, dirty = git_state(Path(__file__).parent)
    return machine_id(), commit, dirty


def stamp_of(
    where: tuple[str, str, bool | None], disclosed: dict[str, Any], noise: Background | None
) -> dict[str, Any]:
    """A record's stamp (contest/results/stamp.py): the machine, the commit, the full
    disclosure, the load, and the noise since the previous stamp when measured."""
    mid, commit, dirty = where
    out: dict[str, Any] = {"machine_id": mid, "git_commit": commit, "dirty": dirty}
    out |= disclosed
    out["load1"] = load1()
    interval = noise.interval() if noise else None
    if interval is not None:
        out |= {
            "interval_s": interval.wall_s,
            "outside_share": interval.outside_share,
            "peak_outside_share": interval.peak_outside_share,
            "steal_share": interval.steal_share,
        }
    return out


@dataclass
class Sitting:
    """What one invocation of a benchmark runs with, and where its records go."""

    benchmark: Benchmark
    options: argparse.Namespace
    cfg: Config
    results: Results
    say: Say = print
    # The configuration under a preset (the user's file, environment, flags on top).
    load: Callable[[Mapping[str, object] | None], Config] | None = None
    started: str = field(default_factory=utc_now)  # stamped on every record: `sitting`
    # The noise measured while the benchmark runs (Benchmark.execute starts it).
    noise: Background | None = None
    _where: tuple[str, str, bool | None] | None = field(default=None, init=False, repr=False)
    # The configuration last handed out (`config`): the one the next rows ran under.
    _config: Config | None = field(default=None, init=False, repr=False)
    _disclosed: dict[Any, dict[str, Any]] = field(default_factory=dict, init=False, repr=False)

    def config(self, preset: Mapping[str, object] | None = None) -> Config:
        """The run's configuration, under `preset`, in --work when the benchmark has it."""
        cfg = self.cfg if preset is None or self.load is None else self.load(preset)
        work = getattr(self.options, "work", None)
        self._config = replace(cfg, work_dir=work) if work else cfg
        return self._config

    def disclosed(self) -> dict[str, Any]:
        """The full disclosure of the rows being recorded (`disclosure`), taken once per
        configuration the sitting ran under."""
        cfg = self._config or self.config()
        key = repr(cfg)
        if key not in self._disclosed:
            self._disclosed[key] = disclosure(cfg)
        return self._disclosed[key]

    def stamp(self) -> dict[str, Any]:
        """Where and how quietly the rows being recorded were measured: the machine, the
        commit, the load, the noise since the previous record, and the full disclosure
        (contest/results/stamp.py)."""
        if self._where is None:
            self._where = where_run()
        return stamp_of(self._where, self.disclosed(), self.noise)

    def record(self, *rows: Row) -> list[Any]:
        """Append `rows` (each stamped with this sitting, the machine, commit and the
        noise it was measured in), render every record, and hand back the rows as
        their typed records."""
        stamped = [dict(r) for r in rows]
        stamp = self.stamp()
        for row in stamped:
            row.setdefault("sitting", self.started)
            if row.get("stamp") is None:  # a typed record's own None is no stamp
                row["stamp"] = stamp
            if row.get("environment") and isinstance(row["stamp"], dict):
                # A run's own record discloses its environment and config (RunRecord):
                # the stamp adds only what that lacks, every Python library's version.
                own = dict(row["stamp"])
                libraries = (own.pop("environment", None) or {}).get("libraries")
                own.pop("config", None)
                row["stamp"] = own | (
                    {"environment": {"libraries": libraries}} if libraries else {}
                )
        records = self.results.append(stamped)
        self.benchmark.publish(self.results)
        return records


class Benchmark:
    """Subclass, set the class attributes, implement `run` and `render`, and add the
    class to `contest.benchmarks.registry.BENCHMARKS`: the CLI's `contest bench
    <name>` comes from it."""

    name: ClassVar[str]  # `contest bench <name>`
    stem: ClassVar[str]  # results: <results>/<stem>.jsonl and <stem>.md
    summary: ClassVar[str]  # one line for `contest bench --help`
    description: ClassVar[str]
    options: ClassVar[tuple[Option, ...]] = ()
    # Whether the page links each sitting's generic disclosure (contest/results/
    # disclosure.py); a benchmark that writes its own pages links them itself.
    discloses: ClassVar[bool] = True

    @classmethod
    def all_options(cls) -> tuple[Option, ...]:
        return (*cls.options, RESULTS)

    def check(self, options: argparse.Namespace) -> None:
        """Refuse impossible option values in one line, before any work."""
        for opt in self.all_options():
            opt.check(getattr(options, opt.dest, None))
        # local[N] above the machine's cores divides the score by cores it has not got.
        check_local_cores(
            getattr(options, "cores", None), getattr(options, "master", None), os.cpu_count()
        )

    def run(self, sitting: Sitting) -> bool:
        """Measure, `sitting.record(...)` each row as it comes; True when every goal
        (e.g. every result checked exact) is met."""
        raise NotImplementedError

    def render(self, records: Sequence[Any]) -> str:
        """Markdown from every typed record of `<stem>.jsonl`, old lines included."""
        raise NotImplementedError

    def extras(self, records: Sequence[Any], folder: Path) -> None:
        """Anything besides the markdown rendered from the records (a chart)."""

    def page(self, results: Results) -> str:
        """The page: the records rendered, each sitting's full disclosure linked, then
        the findings written by hand in `<results>/notes/<stem>.md` (kept apart, so a
        run renders the page again)."""
        records = results.load()
        text = self.render(records)
        if self.discloses:
            text = text.rstrip("\n") + "\n\n" + "\n".join(disclosure_section(self.stem, records))
        notes = results.folder / "notes" / f"{self.stem}.md"
        if notes.is_file():
            text = text.rstrip("\n") + "\n\n" + notes.read_text()
        return text

    def publish(self, results: Results) -> Path:
        results.folder.mkdir(parents=True, exist_ok=True)
        results.md.write_text(self.page(results))
        self.extras(results.load(), results.folder)
        return results.md

    def execute(self, sitting: Sitting) -> bool:
        self.check(sitting.options)
        with Background() as noise:
            sitting.noise = noise
            try:
                ok = self.run(sitting)
            finally:
                sitting.noise = None
        if not sitting.results.md.exists():
            self.publish(sitting.results)
        return ok


def disclosure_section(stem: str, records: Sequence[Any]) -> list[str]:
    """The links to each sitting's full disclosure, and the busy rule the pages apply."""
    return [
        "## Full disclosure of each sitting",
        "",
        f"Machine, CPU, commits, libraries, configuration and each row's noise "
        f"(`contest report`); the one busy rule: {BUSY_RULE}.",
        "",
        *links(stem, records),
        "",
    ]


class Sat(Protocol):
    @property
    def sitting(self) -> str | None: ...


S = TypeVar("S", bound=Sat)


def _sitting(r: Sat) -> Any:
    return r.sitting


def sittings(
    records: Iterable[S],
    key: Callable[[S], Any] = _sitting,
    starts: Callable[[S], bool] = lambda r: False,
) -> list[list[S]]:
    """Records grouped by the invocation that recorded them, in order: consecutive
    records with one `key`; a keyless (old) record also starts a group when `starts`."""
    groups: list[list[S]] = []
    last: Any = object()
    for r in records:
        k = key(r)
        if not groups or k != last or (k is None and starts(r)):
            groups.append([])
        groups[-1].append(r)
        last = k
    return groups


def newest_per(records: Iterable[R], key: Callable[[R], Any]) -> list[R]:
    """The last record of each `key`, in the order of the keys."""
    newest: dict[Any, R] = {}
    for r in records:
        newest[key(r)] = r
    return [newest[k] for k in sorted(newest)]
