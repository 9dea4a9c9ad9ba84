"""A PostgreSQL crash (immediate stop) while a writer commits, durable and unsafe."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import time

from contest.config import override
from contest.errors import RunError
from contest.infra.postgres import EmbeddedCluster
from contest.infra.proc import kill_group, spawn_piped, wait_bounded
from contest.trials.faults.context import PROC_TIMEOUT_S, Ctx
from contest.trials.faults.report import Outcome
from meta import catalog
from meta.commits import committed_versions

COMMITTER = """
import json, sys
import pyarrow as pa
from meta import catalog
from meta.commits import DataFile, commit_files
from meta.connection import PgConnection
args = json.loads(sys.stdin.readline())
conn = PgConnection(**args["conn"])
t = catalog.create_table(conn, "crash_t", args["path"], pa.schema([("uuid", pa.string())]),
                         ["uuid"], 1, reuse=True)
for v in range(args["count"]):
    f = DataFile(f"{t.path}/part-c{v:06d}_0000.parquet", 1, ("uuid",), 0)
    try:
        commit_files(conn, t, [f], version=v)
    except Exception as exc:
        print("failed", v, type(exc).__name__, str(exc).splitlines()[0][:200], flush=True)
        continue
    print("acked", v, flush=True)
"""


def pg_crash(ctx: Ctx, runs: int, unsafe: bool, port: int, commits: int = 400) -> Outcome:
    mode = "pg.unsafe_no_fsync=true" if unsafe else "durable (default)"
    o = ctx.outcome(
        "pg_crash_unsafe" if unsafe else "pg_crash",
        f"PostgreSQL crash mid-write, {mode}",
        "contest db up (commits retry with backoff)",
        expected_losses=unsafe,
    )
    for i in range(runs):
        o.trials += 1
        state = ctx.root / f"pg-crash-{'unsafe' if unsafe else 'durable'}-{i}"
        shutil.rmtree(state, ignore_errors=True)
        cfg = override(
            ctx.cfg,
            {
                "state_dir": str(state),
                "pg.url": "",
                "pg.port": port,
                "pg.unsafe_no_fsync": unsafe,
                "pg.retry_seconds": 60.0,
            },
        )
        cluster = EmbeddedCluster(cfg)
        try:
            conn, _ = cluster.up()
            proc = spawn_piped([sys.executable, "-c", COMMITTER], ctx.env, ctx.root)
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(
                json.dumps(
                    {
                        "conn": dataclasses.asdict(conn),
                        "path": str(state / "crash_t"),
                        "count": commits,
                    }
                )
                + "\n"
            )
            proc.stdin.close()
            crash_at = ctx.rng.randint(40, 120)
            acked: list[int] = []
            failed: list[str] = []
            crashed_after = None
            start = time.monotonic()
            for line in proc.stdout:
                if line.startswith("acked"):
                    acked.append(int(line.split()[1]))
                elif line.startswith("failed"):
                    failed.append(line.strip())
                if crashed_after is None and len(acked) >= crash_at:
                    cluster.crash()
                    crashed_after = len(acked)
                    time.sleep(2)
                    cluster.up()  # the writer retries with backoff meanwhile
                if time.monotonic() - start > PROC_TIMEOUT_S:
                    kill_group(proc)
                    raise RunError("the committer ran over its time")
            code = wait_bounded(proc)
            table = catalog.get_table(conn, "crash_t")
            kept = set(committed_versions(conn, table))
            lost = sorted(set(acked) - kept)
            o.failures_observed += 1
            o.lost += len(lost)
            o.recovered += code == 0 and (unsafe or not lost)
            o.details.append(
                {
                    "run": i,
                    "crash_after_acks": crashed_after,
                    "acked": len(acked),
                    "kept": len(kept),
                    "lost": lost,
                    "writer_gave_up": failed[:3],
                    "writer_exit": code,
                }
            )
            ctx.say(
                f"pg crash ({mode}) {i + 1}/{runs}: crash after {crashed_after} acks; "
                f"{len(acked)} acked, {len(kept)} kept, lost {len(lost)}"
            )
        finally:
            try:
                cluster.down()
            finally:
                shutil.rmtree(state, ignore_errors=True)
    o.notes.append(
        f"A separate embedded cluster per run (its own state folder, port {port} or the "
        f"next free one); a writer process commits {commits} one-file commits through "
        "`commit_files` (what `contest write` calls per batch), printing `acked v` when a "
        "commit returned; after a random 40..120 acks `pg_ctl stop -m immediate`, 2 s, "
        "restart; the writer retries with backoff. Lost = acked but not live afterwards."
    )
    if unsafe:
        o.notes.append(
            "pg.unsafe_no_fsync sets fsync=off, synchronous_commit=off, "
            "full_page_writes=off: a commit is acknowledged before its WAL record is "
            "written, so an immediate stop discards the WAL still in the server's buffers "
            "(up to about 3 x wal_writer_delay, 200 ms, of commits); a machine crash would "
            "also lose what sat in the OS cache, or corrupt the cluster. Losses here are the "
            "documented price of the option, not a bug."
        )
    return o
