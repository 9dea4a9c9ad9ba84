"""Workload shapes in the generator: the default is byte-for-byte the generator before
workloads existed, and each shape parameter does what it says."""

from __future__ import annotations

import dataclasses
import hashlib
import subprocess
import sys
import types
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from contest.config import WorkloadConfig, load_config
from contest.data.file_writers import FILE_WRITERS
from contest.data.generator import generate
from contest.data.workload import OPERATOR_NAMES, named, workload_settings
from contest.errors import ConfigError

# The last commit whose generator knew no workloads (its module, run as it was).
REFERENCE_COMMIT = "8c95533d54ec179d6ad0b52c68518bcd3c13a24e"
ROOT = Path(__file__).resolve().parents[3]


def reference_generator() -> types.ModuleType:
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{REFERENCE_COMMIT}:contest/data/generator.py"],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("no git history here: the reference generator is in it")
    module = types.ModuleType("reference_generator")
    sys.modules[module.__name__] = module  # its dataclasses look their module up
    try:
        exec(compile(source, "reference_generator.py", "exec"), module.__dict__)
    finally:
        del sys.modules[module.__name__]
    return module


def digests(files: list[Path]) -> list[str]:
    return [hashlib.sha256(p.read_bytes()).hexdigest() for p in files]


@pytest.mark.parametrize("nulls", [False, True])
def test_default_workload_is_the_old_generator_byte_for_byte(tmp_path, nulls):
    old = reference_generator().generate(tmp_path / "old", 0.0007, 9, nulls, progress=False)
    new = generate(tmp_path / "new", 0.0007, 9, nulls, progress=False, workload=WorkloadConfig())
    assert [p.name for p in new.files] == [p.name for p in old.files]
    assert len(new.files) == 11
    assert digests(new.files) == digests(old.files)
    assert (new.rows, new.distinct_keys) == (old.rows, old.distinct_keys)
    # ... and the named `contest` workload is that default.
    cfg = load_config(workload=workload_settings("contest"))
    assert dataclasses.replace(cfg.workload, name="contest") == WorkloadConfig()


def keys_of(files: list[Path]) -> list[list[str]]:
    return [pq.read_table(f, columns=["uuid"]).column(0).to_pylist() for f in files]


def test_batches_sizes_and_update_share(tmp_path):
    w = WorkloadConfig(batches=6, first_rows=1000, batch_rows=200, update_share=0.9)
    report = generate(tmp_path, 1, 3, progress=False, workload=w)
    batches = keys_of(report.files)
    assert [len(b) for b in batches] == [1000] + [200] * 5
    seen: set[str] = set()
    for i, b in enumerate(batches):
        if i:
            assert sum(k in seen for k in b) == 180  # 90% updates, distinct or not
        seen.update(b)
    assert report.distinct_keys == len(seen) == 1000 + 5 * 20


def test_repeat_share_repeats_keys_inside_a_batch(tmp_path):
    w = WorkloadConfig(batches=2, first_rows=1000, batch_rows=1000, repeat_share=0.2)
    base, later = keys_of(generate(tmp_path, 1, 3, progress=False, workload=w).files)
    assert len(base) - len(set(base)) == 200  # base-0: 800 new keys, 200 repeats
    assert len(later) - len(set(later)) >= 200
    none = dataclasses.replace(w, repeat_share=0.0, update_share=0.0)
    base, later = keys_of(generate(tmp_path / "none", 1, 3, progress=False, workload=none).files)
    assert len(set(base)) == len(base) and len(set(later)) == len(later)


def test_zipf_updates_hit_hot_keys_uniform_ones_do_not(tmp_path):
    def top_share(w: WorkloadConfig, where: Path) -> float:
        files = generate(where, 1, 5, progress=False, workload=w).files
        base = set(keys_of(files[:1])[0])
        counts = Counter(k for b in keys_of(files[1:]) for k in b if k in base)
        return sum(n for _, n in counts.most_common(10)) / sum(counts.values())

    w = WorkloadConfig(batches=5, first_rows=5000, batch_rows=1000, update_share=1.0)
    uniform = top_share(w, tmp_path / "u")
    zipf = top_share(dataclasses.replace(w, distribution="zipf", zipf_exponent=1.5), tmp_path / "z")
    assert uniform < 0.02 < 0.5 < zipf


def test_recent_updates_hit_only_the_last_batches(tmp_path):
    w = WorkloadConfig(
        batches=6, first_rows=500, batch_rows=500, distribution="recent", recent_batches=2
    )
    batches = keys_of(generate(tmp_path, 1, 2, progress=False, workload=w).files)
    born = {}
    for i, b in enumerate(batches):
        for k in b:
            born.setdefault(k, i)
    for i, b in enumerate(batches[1:], start=1):
        ages = {i - born[k] for k in b if born[k] < i}
        assert ages and ages <= {1, 2}, (i, ages)


def test_null_shares_and_extra_columns(tmp_path):
    w = WorkloadConfig(
        batches=2,
        first_rows=2000,
        batch_rows=2000,
        null_share=0.1,
        null_string_share=0.5,
        columns={"m": "SumAll", "t": "UseLastNotNull", "l": "UseLastNotNullNorNullString"},
    )
    t = pq.read_table(generate(tmp_path, 1, 2, progress=False, workload=w).files[1])
    assert t.column_names[8:] == ["m", "t", "l"]
    assert str(t.schema.field("m").type) == "int64" and str(t.schema.field("t").type) == "string"
    for c in t.column_names[1:]:
        assert 100 < t.column(c).null_count < 300, c  # about 10% of 2000
    names = [n for n in t.column("name").to_pylist() if n is not None]
    assert 0.4 < names.count("null") / len(names) < 0.6
    assert t.column("uuid").null_count == 0


def test_named_workloads_load_and_are_valid():
    assert {"contest", "cdc-trickle", "hot-keys", "append-mostly", "wide"} <= set(named())
    for name in named():
        cfg = load_config(workload=workload_settings(name))
        assert cfg.workload.name == name
    assert load_config(workload=workload_settings("cdc-trickle")).workload.batches >= 101
    assert load_config(workload=workload_settings("hot-keys")).workload.distribution == "zipf"
    assert load_config(workload=workload_settings("append-mostly")).workload.update_share < 0.2
    wide = load_config(workload=workload_settings("wide")).workload
    # every operator of the registry
    assert len(wide.columns) >= 8 and set(wide.columns.values()) == set(OPERATOR_NAMES)


def test_pyarrow_defaults_writes_the_same_rows_in_another_layout(tmp_path: Path) -> None:
    """workload.file_writer: the same rows, in pyarrow's own layout (snappy, statistics,
    dictionary on every column where it pays), so no figure is fitted to the contest's."""
    # The writers' registry is the only list: the setting takes what it holds, nothing else.
    assert set(FILE_WRITERS) == {"contest", "pyarrow-defaults", "zstd-128ki"}
    with pytest.raises(ConfigError, match="workload.file_writer: 'toy' is not one of contest"):
        load_config(overrides={"workload.file_writer": "toy"})
    w = dataclasses.replace(WorkloadConfig(), first_rows=3_000_000, batch_rows=600_000)
    ours = generate(tmp_path / "contest", 0.001, 5, workload=w)
    theirs = generate(
        tmp_path / "pyarrow",
        0.001,
        5,
        workload=dataclasses.replace(w, file_writer="pyarrow-defaults"),
    )
    for a, b in zip(ours.files, theirs.files, strict=True):
        assert pq.read_table(a).equals(pq.read_table(b))
        ma, mb = pq.ParquetFile(a).metadata, pq.ParquetFile(b).metadata
        assert ma.row_group(0).column(0).compression == "UNCOMPRESSED"
        assert mb.row_group(0).column(0).compression == "SNAPPY"
        assert not ma.row_group(0).column(0).is_stats_set
        assert mb.row_group(0).column(0).is_stats_set
        # Dictionary tried on the key column too (pyarrow's default), never in ours.
        assert "RLE_DICTIONARY" not in ma.row_group(0).column(0).encodings
        assert "RLE_DICTIONARY" in mb.row_group(0).column(0).encodings
    with pytest.raises(ConfigError, match="workload.file_writer: 'parquet-mr' is not one of"):
        load_config(env={}, overrides={"workload.file_writer": "parquet-mr"})


def test_zstd_128ki_writes_the_same_rows_in_many_compressed_row_groups(tmp_path: Path) -> None:
    """The third data shape: zstd, 128Ki rows a row group (as Spark and most writers leave
    them), dictionary tried on every column, statistics; the same rows as the contest's."""
    w = dataclasses.replace(WorkloadConfig(), first_rows=300_000_000, batch_rows=600_000)
    ours = generate(tmp_path / "contest", 0.001, 5, workload=w)
    theirs = generate(
        tmp_path / "zstd", 0.001, 5, workload=dataclasses.replace(w, file_writer="zstd-128ki")
    )
    for a, b in zip(ours.files, theirs.files, strict=True):
        assert pq.read_table(a).equals(pq.read_table(b))
    base = pq.ParquetFile(theirs.files[0]).metadata
    assert base.num_rows == 300_000
    assert [base.row_group(g).num_rows for g in range(base.num_row_groups)] == [
        131072,
        131072,
        300_000 - 2 * 131072,
    ]
    first = base.row_group(0).column(0)
    assert first.compression == "ZSTD" and first.is_stats_set
    assert "RLE_DICTIONARY" in first.encodings
    assert pq.ParquetFile(ours.files[0]).metadata.num_row_groups == 1
    assert load_config(env={}, overrides={"workload.file_writer": "zstd-128ki"})
