"""The one shape of a benchmark: its options, `run`, `record`, `render`.

A benchmark declares its command-line options (shared ones are declared once, here),
runs, hands each row to `Sitting.record` as soon as it is measured (appended to
`<results>/<stem>.jsonl`, then `<stem>.md` rendered again from every line there, so
an interrupted run keeps what it measured), and renders markdown from records of any
age: a renderer reads old lines too.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar

from contest.config import Config
from contest.errors import UsageError

Say = Callable[[str], None]
Record = dict[str, Any]


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
RESULTS = Option("--results", "results folder (default: results_dir)", old=("--out",))
REPEAT = Option("--repeat", "rounds", int, 3, **at_least(1))
SCALE = Option("--scale", "scale of generated data", float, 1.0, **POSITIVE)
SEED = Option("--seed", "generator seed", int, 2022)
CORES = Option("--cores", "local[N] of the timed jobs (default: all)", int, **at_least(1))
WORK = Option("--work", "work folder (default: work_dir)")
DATA = Option("--data", "data folder (default: generated at --scale, cached)")


@dataclass(frozen=True)
class Results:
    """`<folder>/<stem>.jsonl`, one record a line, and the markdown rendered from it."""

    folder: Path
    stem: str

    @property
    def jsonl(self) -> Path:
        return self.folder / f"{self.stem}.jsonl"

    @property
    def md(self) -> Path:
        return self.folder / f"{self.stem}.md"

    def append(self, records: Iterable[Record]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with self.jsonl.open("a") as fh:
            for r in records:
                fh.write(json.dumps(r) + "\n")

    def load(self) -> list[Record]:
        if not self.jsonl.exists():
            return []
        return [json.loads(ln) for ln in self.jsonl.read_text().splitlines() if ln.strip()]


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


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

    def config(self, preset: Mapping[str, object] | None = None) -> Config:
        """The run's configuration, under `preset`, in --work when the benchmark has it."""
        cfg = self.cfg if preset is None or self.load is None else self.load(preset)
        work = getattr(self.options, "work", None)
        return replace(cfg, work_dir=work) if work else cfg

    def record(self, *rows: Record) -> Path:
        """Append `rows` (each stamped with this sitting) and render every record."""
        self.results.append({**r, "sitting": r.get("sitting", self.started)} for r in rows)
        return self.benchmark.publish(self.results)


class Benchmark:
    """Subclass, set the class attributes, implement `run` and `render`, and add the
    class to `contest.benchmarks.registry.BENCHMARKS`: the CLI's `contest bench
    <name>` comes from it."""

    name: ClassVar[str]  # `contest bench <name>`
    stem: ClassVar[str]  # results: <results>/<stem>.jsonl and <stem>.md
    summary: ClassVar[str]  # one line for `contest bench --help`
    description: ClassVar[str]
    options: ClassVar[tuple[Option, ...]] = ()

    @classmethod
    def all_options(cls) -> tuple[Option, ...]:
        return (*cls.options, RESULTS)

    def check(self, options: argparse.Namespace) -> None:
        """Refuse impossible option values in one line, before any work."""
        for opt in self.all_options():
            opt.check(getattr(options, opt.dest, None))

    def run(self, sitting: Sitting) -> bool:
        """Measure, `sitting.record(...)` each row as it comes; True when every goal
        (e.g. every result checked exact) is met."""
        raise NotImplementedError

    def render(self, records: Sequence[Record]) -> str:
        """Markdown from every record of `<stem>.jsonl`, old lines included."""
        raise NotImplementedError

    def extras(self, records: Sequence[Record], folder: Path) -> None:
        """Anything besides the markdown rendered from the records (a chart)."""

    def publish(self, results: Results) -> Path:
        records = results.load()
        results.folder.mkdir(parents=True, exist_ok=True)
        results.md.write_text(self.render(records))
        self.extras(records, results.folder)
        return results.md

    def execute(self, sitting: Sitting) -> bool:
        self.check(sitting.options)
        ok = self.run(sitting)
        if not sitting.results.md.exists():
            self.publish(sitting.results)
        return ok


def sittings(
    records: Iterable[Record],
    key: Callable[[Record], Any] = lambda r: r.get("sitting"),
    starts: Callable[[Record], bool] = lambda r: False,
) -> list[list[Record]]:
    """Records grouped by the invocation that recorded them, in order: consecutive
    records with one `key`; a keyless (old) record also starts a group when `starts`."""
    groups: list[list[Record]] = []
    last: Any = object()
    for r in records:
        k = key(r)
        if not groups or k != last or (k is None and starts(r)):
            groups.append([])
        groups[-1].append(r)
        last = k
    return groups


def newest_per(records: Iterable[Record], key: Callable[[Record], Any]) -> list[Record]:
    """The last record of each `key`, in the order of the keys."""
    newest: dict[Any, Record] = {}
    for r in records:
        newest[key(r)] = r
    return [newest[k] for k in sorted(newest)]
