"""`contest stream run` on the test session's standalone cluster (2 workers x 1 core):
the LakeSoul sink and Hudi's (hudi-merger through the harness's `foreachBatch`), each
in a child process whose session runs on the cluster, a micro-batch a file; the table
ends equal to the oracle over every fed file. Hudi's micro-batches need its packages'
classes on the executors (its Kryo registrator, the record merger): a session started
from Python lost them there before (contest.infra.spark.launched_jars)."""

from __future__ import annotations

import dataclasses

import pytest

from contest.data.batches import Batch
from contest.data.oracle import expected_rows
from contest.infra.cluster import Standalone
from contest.infra.proc import kill_group, spawn, wait_bounded
from contest.stream.feed import write_feed_file
from contest.trials.stream.peer import peer_stage, read_peer
from contest.trials.stream.stage import (
    CHILD_TIMEOUT_S,
    Stage,
    batch_lines,
    check_table,
    make_stage,
    read_text,
)

pytestmark = pytest.mark.slow

ROWS = 40
FILES = 2


def run_on_cluster(stage: Stage) -> str:
    """An available-now stream of one file a micro-batch; its stderr."""
    cmd = stage.command("--trigger", "available-now", "--max-files-per-trigger", "1")
    log = stage.root / stage.name / "logs" / "stream.log"
    proc = spawn(cmd, log, stage.env, stage.root)
    try:
        code = wait_bounded(proc, CHILD_TIMEOUT_S)
    finally:
        kill_group(proc)
    err = read_text(log.with_suffix(".err"))
    assert code == 0, err[-3000:]
    return err


def ran_on(cfg, app: str) -> bool:
    """The cluster's master lists a finished application called `app`."""
    cluster = Standalone.of(cfg)
    state = cluster.state()
    assert state is not None
    return app in [a.get("name") for a in cluster.master_json(state).get("completedapps", [])]


def test_lakesoul_stream_on_the_cluster(cfg, pg, standalone, tmp_path):
    scfg = dataclasses.replace(cfg, work_dir=str(tmp_path))
    stage = make_stage(scfg, pg, tmp_path / "bench", "stream_cluster", 2, standalone["master_url"])
    files = [write_feed_file(stage.incoming, i, ROWS) for i in range(FILES)]
    err = run_on_cluster(stage)
    assert [b["status"] for b in batch_lines(err)] == ["committed"] * FILES
    check = check_table(stage, files)
    assert check.exact and check.consumed == FILES, check.detail
    assert ran_on(cfg, "contest-stream")


def test_hudi_stream_on_the_cluster(cfg, standalone, tmp_path):
    scfg = dataclasses.replace(cfg, work_dir=str(tmp_path))
    stage = peer_stage(scfg, tmp_path / "bench", "hudi", 2, standalone["master_url"])
    files = [write_feed_file(stage.incoming, i, ROWS) for i in range(FILES)]
    err = run_on_cluster(stage)
    assert [b["status"] for b in batch_lines(err)] == ["committed"] * FILES
    assert ran_on(cfg, "contest-stream-hudi-merger")
    # Read merged on the cluster too: the merger runs in the executors' tasks.
    after = read_peer(stage, "hudi", tmp_path / "after")
    expected = expected_rows([Batch(i, str(p), 0, 0, i) for i, p in enumerate(files)])
    assert after == expected
