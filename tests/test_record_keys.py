"""No module outside the results package reads a results record by string key: a
function that takes typed records (a parameter annotated with a record type, as every
benchmark's `render`, the report's and the dashboard's readers are) reads no value by a
string key; the records are read from their files only by the results package's
readers (contest/results/registry.py).
"""

from __future__ import annotations

import ast
import dataclasses

from contest.results.benchmarks import (
    CommitPathRecord,
    CompactRecord,
    DuckDBRecord,
    FaultRecord,
    NativeMergeRecord,
    ReadBenchRecord,
    ReadVariant,
    ReplayRecord,
    ScaleRecord,
)
from contest.results.runs import JobLoad, Phase, RunRecord
from contest.results.streaming import StreamFault, StreamFreshness, StreamMetadata
from contest.results.workloads import PhaseRecord
from tests.support.config import REPO

RECORDS = (
    CommitPathRecord, CompactRecord, DuckDBRecord, FaultRecord, NativeMergeRecord,
    ReadBenchRecord, ReadVariant, ReplayRecord, ScaleRecord, RunRecord, Phase, JobLoad,
    StreamFault, StreamFreshness, StreamMetadata, PhaseRecord,
)  # fmt: skip
NAMES = {r.__name__ for r in RECORDS} | {"StreamRecord", "Record"}
FIELDS = {f.name for r in RECORDS for f in dataclasses.fields(r)} - {"extra"}


def keyed_reads(source: str) -> list[tuple[int, str]]:
    """(line, key) of every `x["key"]` read and `x.get("key")` in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                key = node.slice.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            key = node.args[0].value
        if key is not None:
            found.append((node.lineno, key))
    return found


def takes_records(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a parameter of `fn` is annotated with a record type (or a sequence of
    them): `r: ScaleRecord`, `records: Sequence[RunRecord]`."""
    args = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    for a in args:
        if a.annotation is None:
            continue
        text = ast.unparse(a.annotation)
        if any(word in NAMES for word in _words(text)):
            return True
    return False


def _words(text: str) -> list[str]:
    return "".join(c if c.isalnum() or c == "_" else " " for c in text).split()


def offenders(source: str) -> list[tuple[str, int, str]]:
    """(function, line, key) of each read by a record field's name inside a function
    that takes records (a local table keyed by engine or strategy is not a record)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and takes_records(node):
            reads = keyed_reads(ast.unparse(node))
            out += [(node.name, line, key) for line, key in reads if key in FIELDS]
    return out


def test_keyed_reads_are_found():
    src = 'a = r["scale"]\nb = r.get("when", "")\nr["x"] = 1\nc = d["k"]\n'
    assert keyed_reads(src) == [(1, "scale"), (2, "when"), (4, "k")]
    src = (
        "def render(records: Sequence[ScaleRecord]) -> str:\n    return records[0]['when']\n"
        "def other(rows: list[dict]) -> str:\n    return rows[0]['when']\n"
    )
    assert offenders(src) == [("render", 2, "when")]


def test_no_module_outside_results_reads_a_record_by_string_key():
    found = {}
    checked = 0
    for path in sorted((REPO / "contest").rglob("*.py")):
        rel = path.relative_to(REPO)
        if rel.parts[:2] == ("contest", "results"):
            continue
        source = path.read_text()
        tree = ast.parse(source)
        checked += sum(
            isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and takes_records(n)
            for n in ast.walk(tree)
        )
        if hits := offenders(source):
            found[str(rel)] = hits
    assert checked > 20  # the renderers, the report, the dashboard's readers
    assert found == {}
