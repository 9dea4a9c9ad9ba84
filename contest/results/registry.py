"""Which results file holds which record: the one place that says so. Everything that
reads a results file (the benchmarks' renderers, `contest report`, the dashboard) finds
its reader here; a new kind of file is a line in `FILES`, and the dashboard shows it from
its record's declared fields (contest/results/shown.py) with no edit of its own.

Paths are globs relative to a results folder (`results/`, or a machine's own store under
the work folder, which has the same layout).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from contest.errors import DataError
from contest.results.benchmarks import (
    CommitPathRecord,
    CompactRecord,
    DuckDBRecord,
    FaultRecord,
    NativeMergeRecord,
    ReadBenchRecord,
    ReplayRecord,
    ScaleRecord,
)
from contest.results.costs import CostRecord
from contest.results.interop import InteropRecord
from contest.results.record import NotARecord, conforms, read_lenient, read_lines
from contest.results.runs import RunRecord
from contest.results.streaming import STREAM_KINDS, stream_record
from contest.results.workloads import PhaseRecord


@dataclass(frozen=True)
class ResultsFile:
    """One kind of results file: where it lies, what each line is, how to read one."""

    name: str  # the dashboard's section, the key in `FILES`
    pattern: str  # a glob under the results folder
    title: str
    parse: Callable[[dict[str, Any]], Any]
    what: str = "record"
    # The record types a line is read as; by default the class whose `from_dict` is
    # `parse`.
    records: tuple[type, ...] = ()
    # The dashboard's table the records go to (by default `name`): files of one kind of
    # record shown together share one.
    table: str = ""
    # What the pattern's `*` names (a sweep, a workload): a column of the table.
    part: str = ""

    @property
    def types(self) -> tuple[type, ...]:
        bound = getattr(self.parse, "__self__", None)
        return self.records or ((bound,) if isinstance(bound, type) else ())

    @property
    def shown_in(self) -> str:
        return self.table or self.name

    def part_of(self, rel: str) -> str | None:
        """What the pattern's `*` matched in `rel` (a path relative to the results
        folder), or None when the pattern has none."""
        if "*" not in self.pattern:
            return None
        head, _, tail = self.pattern.partition("*")
        return rel.removeprefix(head).removesuffix(tail)

    def paths(self, root: Path) -> list[Path]:
        return sorted(p for p in root.glob(self.pattern) if p.is_file())

    def matches(self, rel: str) -> bool:
        return fnmatch(rel, self.pattern) and rel.count("/") == self.pattern.count("/")

    def read(self, path: Path) -> list[Any]:
        """Every line of `path` as a record; a line that is not one is a DataError."""
        return read_lines(path, self.parse, self.what)

    def read_lenient(self, path: Path) -> tuple[list[Any], int]:
        return read_lenient(path, self.parse)


def _phase(raw: dict[str, Any]) -> PhaseRecord:
    """A workload phase, each known field checked against its declared type (the
    record itself is mutable: the workload's runner fills it in as the phase runs)."""
    hints = typing.get_type_hints(PhaseRecord)
    for name, value in raw.items():
        if name in hints and not conforms(value, hints[name]):
            raise NotARecord(f"{name!r} is {value!r}, not {hints[name]}")
    return PhaseRecord.from_dict(raw)


FILES: dict[str, ResultsFile] = {
    f.name: f
    for f in (
        ResultsFile("runs", "runs.jsonl", "Evaluations (the score)", RunRecord.from_dict, "run"),
        ResultsFile(
            "cluster",
            "cluster/*/runs.jsonl",
            "Evaluations on a cluster",
            RunRecord.from_dict,
            table="runs",
            part="cluster",
        ),
        ResultsFile(
            "sweeps", "sweeps/*/runs.jsonl", "Sweeps", RunRecord.from_dict, "run", part="sweep"
        ),
        ResultsFile(
            "peer_sittings",
            "peer_sittings.jsonl",
            "Sittings: every strategy, interleaved rounds",
            RunRecord.from_dict,
            "run",
            table="runs",
        ),
        ResultsFile(
            "workloads",
            "workloads/*.jsonl",
            "Workloads (phases)",
            _phase,
            "workload phase",
            records=(PhaseRecord,),
        ),
        ResultsFile(
            "streaming",
            "streaming.jsonl",
            "Streaming",
            stream_record,
            "streaming record",
            records=tuple(STREAM_KINDS.values()),
        ),
        ResultsFile("read_bench", "read_bench.jsonl", "Read variants", ReadBenchRecord.from_dict),
        ResultsFile("compact", "compact.jsonl", "Compaction", CompactRecord.from_dict),
        ResultsFile("duckdb", "duckdb.jsonl", "DuckDB against optimized", DuckDBRecord.from_dict),
        ResultsFile("scale", "scale.jsonl", "Scale", ScaleRecord.from_dict),
        ResultsFile("costs", "costs.jsonl", "Costs: fixed and per row", CostRecord.from_dict),
        ResultsFile(
            "commit_paths", "commit_paths.jsonl", "Commit paths", CommitPathRecord.from_dict
        ),
        ResultsFile("meta_replay", "meta_replay.jsonl", "Metadata replay", ReplayRecord.from_dict),
        ResultsFile(
            "native_merge", "native_merge.jsonl", "Native merge", NativeMergeRecord.from_dict
        ),
        ResultsFile("faults", "faults.jsonl", "Fault experiments", FaultRecord.from_dict),
        ResultsFile(
            "interop",
            "interop.jsonl",
            "Interop: engines reading each other's tables",
            InteropRecord.from_dict,
        ),
    )
}


def file_of(root: Path, path: Path) -> ResultsFile:
    """The kind of results file `path` (under `root`) is; a file no entry names is a
    DataError (add it to `FILES`)."""
    rel = path.relative_to(root).as_posix()
    for f in FILES.values():
        if f.matches(rel):
            return f
    raise DataError(f"{path}: no typed record for this results file (contest/results/registry.py)")


def by_stem(stem: str) -> ResultsFile:
    """A benchmark's file, `<stem>.jsonl` at the top of the results folder."""
    for f in FILES.values():
        if f.pattern == f"{stem}.jsonl":
            return f
    raise DataError(f"no typed record for {stem}.jsonl (contest/results/registry.py)")


def every_file(root: Path) -> Iterator[tuple[ResultsFile, Path]]:
    """Every results file under `root` the registry knows, in the registry's order."""
    for f in FILES.values():
        for path in f.paths(root):
            yield f, path


def read(root: Path, path: Path) -> list[Any]:
    return file_of(root, path).read(path)
