"""Change data through `contest stream run` into the harness's LakeSoul table: the `cdc`
workload's files at a tiny scale (Debezium's kinds, deletes, re-inserts, files of some
of the columns), three to a micro-batch so files of different columns share one,
streamed and read, against the oracle over the same files."""

from __future__ import annotations

import dataclasses
import os
import shutil
import uuid
from pathlib import Path

import pytest

from contest import api
from contest.config import Config, override, to_toml
from contest.data.batches import discover
from contest.data.changes import changes_of
from contest.data.generator import generate
from contest.data.oracle import expected_rows
from contest.data.workload import contract_operators, schema_of_batch, workload_settings
from contest.errors import DataError
from contest.evaluation.jobs import child_env
from contest.stream.changes import stream_shape
from contest.stream.peer import run_peer_stream
from contest.stream.run import present_files, run_stream
from contest.trials.stream.boundary import _kill_at_commit
from contest.trials.stream.peer import peer_stage, read_peer
from contest.trials.stream.stage import (
    Stage,
    batch_lines,
    check_table,
    child_config,
    drain,
)
from contest.write.job import WriteMode, prepare_table
from meta import catalog
from meta.commits import head_snapshot
from meta.stream import batches as recorded_batches
from tests.support.pipeline import stream_config

SCALE = 0.0005


def cdc_config(cfg: Config, root: Path, **stream: object) -> Config:
    return stream_config(cfg, root, workload_settings("cdc"), **stream)


def fed_cdc(cfg: Config, root: Path) -> list:
    """The workload's batch files, copied into the source folder as the feed names
    them, each modified after the one before (Spark's file source takes them in that
    order)."""
    data = root / "data"
    generate(data, SCALE, 11, workload=cfg.workload, progress=False)
    found = discover(data, None, schema_of_batch(cfg.workload))
    incoming = root / "incoming"
    incoming.mkdir(parents=True)
    base = 1_700_000_000
    for b in found:
        target = incoming / f"feed-{b.index:06d}.parquet"
        shutil.copyfile(b.path, target)
        os.utime(target, (base + b.index, base + b.index))
    return found


def keyed(rows) -> list[dict]:
    return sorted((dict(r) for r in rows), key=lambda r: r["uuid"])


@pytest.mark.spark
def test_a_cdc_stream_through_the_lakesoul_sink_equals_the_oracle(spark, pg, cfg, tmp_path):
    name = f"cdc_{uuid.uuid4().hex[:8]}"
    root = tmp_path / name
    scfg = cdc_config(cfg, root, max_files_per_trigger=3)
    found = fed_cdc(scfg, root)
    report = run_stream(spark, pg, scfg, str(root / "table"), name, say=lambda _m: None)
    assert report.files == len(found) and len(report.committed) == 4  # 3+3+3+2 files
    table = catalog.get_table(pg, name)
    assert table.cdc_column == "op"
    recorded = recorded_batches(pg, table)
    assert [len(b.source_files) for b in recorded] == [3, 3, 3, 2]
    want = keyed(expected_rows(found, contract_operators(scfg.workload), changes_of(scfg)))
    got = keyed(api.open_table(name, scfg).read_arrow().to_pylist())
    assert len(got) == len(want) and got == want
    # Files of some of the columns were written as such, not widened with NULLs.
    held = {tuple(f.columns) for b in recorded for f in _files(pg, table, b.version)}
    assert len(held) > 1
    # As of a micro-batch's version: the files of the micro-batches up to it.
    upto = [b for b in found if b.index < 6]
    got1 = api.open_table(name, scfg).read_arrow(1).to_pylist()
    assert keyed(got1) == keyed(
        expected_rows(upto, contract_operators(scfg.workload), changes_of(scfg))
    )


def _files(pg, table, version: int):
    return [f for c in head_snapshot(pg, table)[1] if c.version == version for f in c.files]


def test_a_change_stream_of_another_key_needs_a_first_file(cfg, tmp_path):
    other = override(cfg, {"workload.key": ["tenant", "id"], "workload.op_column": "op"})
    with pytest.raises(DataError, match="takes its key's types from its first source file"):
        stream_shape(other, [])


@pytest.mark.spark
@pytest.mark.slow  # a child JVM a kill: some 50 s, more on busy cores
def test_kills_at_the_commit_boundary_with_deletes_lose_and_double_nothing(pg, cfg, tmp_path):
    """The bench's boundary kill (contest bench stream --boundary-kills) at a tiny
    scale over the cdc files: each run of `contest stream run` is killed -9 the moment
    its commit lands, restarted from the checkpoint; then drained. Every file once, the
    table equal to the oracle over them (deletes and partial files included)."""
    name = f"cdck_{uuid.uuid4().hex[:8]}"
    scfg = cdc_config(cfg, tmp_path / name)
    found = fed_cdc(scfg, tmp_path / name)
    (tmp_path / name / "logs").mkdir()
    config_file = tmp_path / name / "child.toml"
    config_file.write_text(to_toml(child_config(scfg, 1)))
    stage = Stage(scfg, pg, tmp_path, name, config_file, child_env(scfg))
    shape = stream_shape(scfg, present_files(str(stage.incoming)))
    prepare_table(pg, scfg, str(stage.table_path), name, WriteMode.REPLACE, shape)
    windows = [
        _kill_at_commit(stage, "lakesoul", tmp_path / name / "logs" / f"kill-{i}.log", print)
        for i in range(3)
    ]
    assert all(w is not None for w in windows), windows
    code, text = drain(stage, tmp_path / name / "logs" / "drain.log")
    assert code == 0, text[-2000:]
    check = check_table(stage, [Path(p) for p in present_files(str(stage.incoming))])
    assert check.exact, check.detail
    assert check.consumed == len(found) and check.double == 0
    print("windows:", windows, "replays skipped:", text.count("skipped (a replay)"))


@pytest.mark.parametrize(
    ("fmt", "why"),
    [
        ("delta", "change data goes one source file a micro-batch"),
        ("paimon", "stream sinks take the contest's upserts only"),
        ("hudi", "stream sinks take the contest's upserts only"),
    ],
)
def test_a_peers_stream_sink_refuses_change_data_in_one_line(cfg, tmp_path, fmt, why):
    other = override(cfg, {"peer.format": fmt, "workload.op_column": "op"})
    with pytest.raises(DataError) as err:
        run_peer_stream(None, other, str(tmp_path / "t"))  # type: ignore[arg-type]
    assert why in str(err.value)
    assert "\n" not in str(err.value) and not (tmp_path / "t").exists()


@pytest.mark.spark
@pytest.mark.slow  # a child JVM with Delta's jars, a MERGE a file
def test_a_cdc_stream_through_deltas_foreach_batch_sink_equals_the_oracle(cfg, tmp_path):
    """The first five cdc files (deletes, re-inserts, two files of some columns), one a
    micro-batch, into Delta through the harness's foreachBatch MERGE; read by Delta's
    reader (`contest read`), against the oracle."""
    scfg = override(cdc_config(cfg, tmp_path / "src"), {"stream.max_files_per_trigger": 1})
    scfg = dataclasses.replace(scfg, work_dir=str(tmp_path))
    stage = peer_stage(scfg, tmp_path / "bench", "delta", cores=1)
    found = fed_cdc(scfg, tmp_path / "gen")[:5]
    stage.incoming.mkdir(parents=True, exist_ok=True)
    for b in found:
        target = stage.incoming / f"feed-{b.index:06d}.parquet"
        shutil.copyfile(b.path, target)
        os.utime(target, (1_700_000_000 + b.index,) * 2)
    code, err = drain(stage, stage.root / stage.name / "logs" / "drain.log")
    assert code == 0, err[-3000:]
    assert len(batch_lines(err)) == len(found)
    got = read_peer(stage, "delta", tmp_path / "result")
    want = keyed(expected_rows(found, contract_operators(scfg.workload), changes_of(scfg)))
    assert [r["uuid"] for r in got] == [r["uuid"] for r in want]
    assert [{k: r[k] for k in want[0]} for r in got] == want
