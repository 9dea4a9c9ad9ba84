"""Fault injection, bounded in time and count, on small data: a PostgreSQL crash during
commits loses no acknowledged commit; a killed read leaves the old result or none."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contest.data.generator import generate
from contest.infra.postgres import EmbeddedCluster
from contest.infra.proc import kill_group, run_captured, spawn
from meta import catalog
from meta.commits import committed_versions
from tests.support.config import REPO, cli, make_config
from tests.support.pipeline import merge_and_read, write

pytestmark = [pytest.mark.slow, pytest.mark.pg]

COMMITTER = """
import json, sys
import pyarrow as pa
from meta import catalog
from meta.commits import DataFile, commit_files
from meta.connection import PgConnection
conn = PgConnection(**json.loads(sys.argv[1]))
t = catalog.create_table(conn, "crash_t", sys.argv[2], pa.schema([("uuid", pa.string())]),
                         ["uuid"], 1, reuse=True)
for v in range(int(sys.argv[3])):
    f = DataFile(f"{t.path}/part-c{v:06d}_0000.parquet", 1, ("uuid",), 0)
    try:
        commit_files(conn, t, [f], version=v)
    except Exception as exc:
        print("failed", v, type(exc).__name__, flush=True)
        continue
    print("acked", v, flush=True)
"""


def test_postgres_crash_loses_no_acknowledged_commit(tmp_path):
    state = REPO / ".state" / f"tests-crash-{tmp_path.name}"
    cfg = make_config(tmp_path, state_dir=str(state), **{"pg.url": "", "pg.port": 54390})
    cluster = EmbeddedCluster(cfg)
    conn, _ = cluster.up()
    try:
        catalog.drop_table(conn, "crash_t")  # left by an earlier run of the suite
        args = json.dumps(
            {
                "host": conn.host,
                "port": conn.port,
                "database": conn.database,
                "username": conn.username,
                "password": conn.password,
                "retry_s": 60,
            }
        )
        writer = subprocess.Popen(
            [sys.executable, "-c", COMMITTER, args, str(tmp_path / "crash_t"), "400"],
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        acked: list[int] = []
        failed: list[str] = []
        crashed = False
        assert writer.stdout is not None
        for line in writer.stdout:
            if line.startswith("acked"):
                acked.append(int(line.split()[1]))
            elif line.startswith("failed"):
                failed.append(line.strip())
            if len(acked) == 60 and not crashed:  # one crash (a failed line must not re-crash)
                crashed = True
                cluster.crash()
                time.sleep(2)
                back, _ = cluster.up()  # the writer retries with backoff meanwhile
                # Elsewhere, the writer would spend its 60 s of retries on every version.
                assert back.port == conn.port
        assert writer.wait(timeout=240) == 0
        assert crashed
        table = catalog.get_table(conn, "crash_t")
        kept = committed_versions(conn, table)
        # Commits the crash interrupted may fail (unacknowledged), not the ones after it.
        assert len(acked) >= 300 and len(failed) <= 5, failed[:5]
        assert set(acked) <= set(kept), f"lost {sorted(set(acked) - set(kept))[:5]}"
    finally:
        cluster.down()


@pytest.mark.spark
def test_killed_read_leaves_the_old_result_or_none(spark, pg, cfg, tmp_path):
    data = tmp_path / "data"
    generate(data, 0.0005, seed=21, progress=False)
    _, table = write(spark, pg, cfg, data, tmp_path / "kr")
    merge_and_read(spark, pg, cfg, table)
    out = tmp_path / "result"
    contest = [sys.executable, "-m", "contest.cli.main"]
    read = [*contest, *cli(cfg, "read", "--table", table.name, "--out", str(out))]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    assert run_captured(read, env=env, timeout=300).returncode == 0
    rng = random.Random(7)
    for i in range(3):  # through the harness's runner: no read outlives the test
        proc = spawn(read, tmp_path / f"kill-{i}.log", env, Path.cwd())
        time.sleep(rng.uniform(2.0, 12.0))
        kill_group(proc)
        if out.exists():  # the old result, or the new one: complete either way
            assert (out / "_SUCCESS").exists() and (out / "_CONTEST_RESULT").exists()
            check = run_captured(
                [*contest, "check", "--result", str(out), "--data", str(data)],
                env=env,
                timeout=300,
            )
            assert check.returncode == 0, check.stdout[-500:]
    assert sorted(committed_versions(pg, table)) == list(range(11))
    partial = [p for p in Path(tmp_path).iterdir() if ".staging-" in p.name]
    assert all(not list(p.rglob("_SUCCESS")) for p in partial)
