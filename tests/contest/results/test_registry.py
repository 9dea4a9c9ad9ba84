"""Every committed line of every results file reads through its typed record."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from contest.errors import DataError
from contest.results import registry
from contest.results.benchmarks import DuckDBRecord, ReadBenchRecord, ReadVariant, ScaleRecord
from contest.results.record import Record
from contest.results.streaming import StreamFault, StreamFreshness, stream_record
from tests.support.config import REPO

RESULTS = REPO / "results"
COMMITTED = sorted(RESULTS.rglob("*.jsonl"))


def known_keys(record: object) -> set[str]:
    return {f.name for f in dataclasses.fields(record)} - {"extra"}  # type: ignore[arg-type]


def test_every_results_file_has_its_record():
    assert COMMITTED, "no results files found"
    kinds = {registry.file_of(RESULTS, p).name for p in COMMITTED}
    # Each kind the registry names is committed at least once (a stale entry shows).
    assert kinds == set(registry.FILES)


@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_every_committed_line_reads_through_its_record(path: Path):
    kind = registry.file_of(RESULTS, path)
    raws = [json.loads(ln) for ln in path.read_text().splitlines() if ln.strip()]
    records = kind.read(path)
    assert len(records) == len(raws) > 0
    for raw, rec in zip(raws, records, strict=True):
        # Every key of every committed line is a field of its record: nothing left over.
        assert set(raw) <= known_keys(rec), set(raw) - known_keys(rec)
        if isinstance(rec, Record):
            assert not rec.extra
            # Written back, the record holds the same values as the line.
            back = rec.to_dict()
            assert {k: back[k] for k in raw} == raw


def test_a_wrong_type_or_a_missing_field_names_the_file_and_line(tmp_path: Path):
    good = {"scale": 0.1, "rows": 10, "cores": 2, "correct": True}
    path = tmp_path / "scale.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "cores": "two"}) + "\n")
    with pytest.raises(DataError, match=r"scale.jsonl:2: not a record: 'cores' is 'two'"):
        registry.read(tmp_path, path)
    path.write_text(json.dumps({"rows": 10}) + "\n")
    with pytest.raises(DataError, match=r":1: .*no 'scale'"):
        registry.read(tmp_path, path)
    # The dashboard's reading counts the bad line and goes on.
    path.write_text(json.dumps(good) + "\n" + '{"scale": 0.1, "ro' + "\n")
    records, bad = registry.file_of(tmp_path, path).read_lenient(path)
    assert (len(records), bad) == (1, 1)
    assert isinstance(records[0], ScaleRecord) and records[0].rows == 10


def test_an_unknown_file_is_named(tmp_path: Path):
    (tmp_path / "mystery.jsonl").write_text("{}\n")
    with pytest.raises(DataError, match="no typed record"):
        registry.file_of(tmp_path, tmp_path / "mystery.jsonl")


def test_nested_records_and_kinds_are_typed():
    rec = ReadBenchRecord.from_dict(
        {
            "rows": 3,
            "cores": 1,
            "repeat": 1,
            "variants": {
                "a": {"median_s": 1, "min_s": 1, "max_s": 2, "rows_per_core_s": 3, "vs_default": 1}
            },
        }
    )
    assert isinstance(rec.variants["a"], ReadVariant) and rec.variants["a"].max_s == 2
    fault = stream_record(
        {
            "kind": "fault",
            "format": "delta",
            "exact": True,
            "case": "c",
            "trials": 2,
            "files_consumed": 3,
            "double_commits": 0,
            "batches_replayed": 1,
            "rows": 9,
        }
    )
    assert isinstance(fault, StreamFault) and fault.trials == 2
    with pytest.raises(ValueError, match="unknown streaming kind 'nope'"):
        stream_record({"kind": "nope"})
    assert StreamFreshness.what != StreamFault.what


def test_a_newer_writers_key_is_kept_not_lost():
    raw = {"contender": "duckdb", "round": 1, "seconds": 2.0, "correct": True, "new_figure": 7}
    rec = DuckDBRecord.from_dict(raw)
    assert rec.extra == {"new_figure": 7}
    assert rec.to_dict()["new_figure"] == 7


def test_a_workload_phase_of_the_wrong_type_is_not_a_record(tmp_path: Path):
    path = tmp_path / "workloads" / "w.jsonl"
    path.parent.mkdir()
    good = {"workload": "w", "run_id": "r", "strategy": "s", "step": 1, "phase": "read"}
    path.write_text(json.dumps({**good, "label": "x"}) + "\n" + json.dumps({**good, "step": "1"}))
    with pytest.raises(DataError, match=r"w.jsonl:2: not a workload phase: 'step' is '1'"):
        registry.read(tmp_path, path)
