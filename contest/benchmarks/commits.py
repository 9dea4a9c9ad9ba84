"""`contest bench commits`: the project's commit path (meta.commits.commit_files) against
LakeSoul's own (DBManager.commitDataCommitInfo, lakesoul-common 2.6.2) under concurrent
writers: commits/s, conflicts and retries, and commits lost (a commit the writer was told
nothing about that is missing from the final snapshot).

Each writer thread commits one small file per commit to one table; nothing but metadata
is written, so this measures PostgreSQL and the clients. DBManager is measured as LakeSoul
ships it (its answer trusted) and as the lakesoul-stock engine drives it (each commit
verified, and re-driven until it landed).
"""

from __future__ import annotations

import statistics
import threading
import time
import uuid as uuidlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data.batches import SCHEMA
from contest.infra.dbmanager import DBManager
from contest.infra.lakesoul_jvm import COORDINATES, session_config
from contest.infra.postgres import resolve_connection
from contest.infra.spark import spark_session
from contest.results.benchmarks import CommitPathRecord
from contest.sitting import (
    REPEAT,
    Benchmark,
    Option,
    Say,
    Sitting,
    at_least,
    sittings,
)
from meta import catalog
from meta.commits import DataFile, commit_files, head_snapshot
from meta.connection import PgConnection

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PATHS = ("project", "dbmanager-verified", "dbmanager-plain")


@dataclass
class PathResult:
    path: str
    writers: int
    commits: int
    seconds: float
    commits_per_s: float
    retries: int  # project: version conflicts rebased; DBManager: commits re-driven
    lost: int  # acknowledged commits missing from the final snapshot
    duplicated: int
    errors: int


def _threads(writers: int, fn: Callable[[int], None]) -> tuple[float, int]:
    errors = [0]
    lock = threading.Lock()

    def run(w: int) -> None:
        try:
            fn(w)
        except Exception:
            with lock:
                errors[0] += 1

    started = time.perf_counter()
    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started, errors[0]


def _table_name(path: str) -> str:
    return f"bench_commits_{path.replace('-', '_')}_{uuidlib.uuid4().hex[:8]}"


def bench_path(
    spark: SparkSession, conn: PgConnection, cfg: Config, path: str, writers: int, per: int
) -> PathResult:
    name = _table_name(path)
    where = str(cfg.work_path.absolute() / "bench-commits" / name)
    ids: list[str] = []
    retries = [0]
    lock = threading.Lock()
    if path == "project":
        table = catalog.create_table(conn, name, where, SCHEMA, ["uuid"], 1)

        def writer(w: int) -> None:
            for i in range(per):
                f = DataFile(f"{table.path}/part-{w:04d}{i:06d}_0000.parquet", 1, (), 0)
                res = commit_files(conn, table, [f], version=w * per + i, batch=f"w{w}")
                with lock:
                    ids.append(res.commit_id)
                    retries[0] += res.retries

    else:
        db = DBManager(spark)
        stock = db.create_table(
            name, cfg.table.namespace, catalog.table_uri(where), SCHEMA, "uuid", 1
        )
        table = catalog.get_table(conn, name, cfg.table.namespace)
        verify = path == "dbmanager-verified"

        def writer(w: int) -> None:
            for i in range(per):
                f = (f"{stock.path}/part-{w:04d}{i:06d}_0000.parquet", 1)
                res = db.commit(stock.table_id, [f], SCHEMA.names, verify=verify)
                with lock:
                    ids.append(res.commit_id)
                    retries[0] += res.redriven

    seconds, errors = _threads(writers, writer)
    _, commits = head_snapshot(conn, table)
    snapshot = [c.commit_id for c in commits]
    catalog.drop_table(conn, name, table.namespace)
    total = writers * per
    return PathResult(
        path,
        writers,
        total,
        round(seconds, 3),
        round(total / seconds, 1),
        retries[0],
        len(set(ids) - set(snapshot)),
        len(snapshot) - len(set(snapshot)),
        errors,
    )


def measure(
    spark: SparkSession,
    conn: PgConnection,
    cfg: Config,
    writers: int = 8,
    per_writer: int = 25,
    repeat: int = 3,
    say: Say = print,
    on_result: Callable[[int, PathResult], None] | None = None,
) -> list[list[PathResult]]:
    """Rounds of every path, interleaved (project, verified, plain, project, ...);
    `on_result(round, result)` gets each as it is measured."""
    rounds = []
    for r in range(repeat):
        results = []
        for path in PATHS:
            res = bench_path(spark, conn, cfg, path, writers, per_writer)
            say(
                f"round {r + 1}/{repeat} {path}: {res.commits_per_s} commits/s, "
                f"retries {res.retries}, lost {res.lost}, errors {res.errors}"
            )
            results.append(res)
            if on_result is not None:
                on_result(r + 1, res)
        rounds.append(results)
    return rounds


def path_result(r: CommitPathRecord) -> PathResult:
    """A recorded line back as a PathResult (its round, note and sitting dropped)."""
    return PathResult(
        r.path,
        r.writers,
        r.commits,
        r.seconds,
        r.commits_per_s,
        r.retries,
        r.lost,
        r.duplicated,
        r.errors,
    )


ANSWER = (
    "**Can LakeSoul's commit path carry the user-defined version atomically?** Only in "
    "one of LakeSoul's own columns: `DataCommitInfo.timestamp` is set by the client and "
    "stored with the data_commit_info row before `commitData` makes the commit live, so "
    "no commit is ever in a snapshot without it. But that column is LakeSoul's commit "
    "time (its time travel and incremental reads go by it), and a row in a table of the "
    "project's (`contest_commit_version`) cannot join the commit's transaction: "
    "DBManager's Rust client opens and ends its own transactions. The project's path "
    "keeps LakeSoul's columns' meaning, puts data_commit_info, the new partition_info "
    "version and the commit's version in one transaction (a version at most once per "
    "partition), loses nothing, and is the faster of the two here; so it stays the "
    "harness's path. DBManager is what the lakesoul-stock strategy commits with, each "
    "commit verified and re-driven, because as shipped it loses commits under "
    "concurrent writers (its `commitData` result is dropped by `commitDataCommitInfo`)."
)


class CommitsBench(Benchmark):
    name = "commits"
    stem = "commit_paths"
    summary = "the project's commit path against LakeSoul's DBManager, concurrent writers"
    description = (
        "Commit MergeCommits from concurrent writers through the project's commit path "
        "and through LakeSoul 2.6.2's DBManager (as shipped, and verified/re-driven); "
        "commits/s, retries, lost commits; commit_paths.md shows the newest sitting."
    )
    options = (
        Option("--writers", "concurrent writers", int, 8, **at_least(1)),
        Option("--commits", "commits per writer", int, 25, **at_least(1)),
        REPEAT,
    )

    def run(self, sitting: Sitting) -> bool:
        cfg, opts = sitting.cfg, sitting.options
        note = (
            f"PostgreSQL: {'external' if cfg.pg.external else 'embedded'}"
            f"{', fsync off' if cfg.pg.unsafe_no_fsync else ''}; measured on a shared "
            "machine: the rates are rough, the lost/retry counts are not."
        )

        def record(rnd: int, res: PathResult) -> None:
            sitting.record({**asdict(res), "round": rnd, "note": note})

        conn = resolve_connection(cfg)
        with spark_session(session_config(cfg), "contest-bench-commits", COORDINATES) as spark:
            rounds = measure(
                spark, conn, cfg, opts.writers, opts.commits, opts.repeat, sitting.say, record
            )
        return all(x.lost == 0 for r in rounds for x in r if x.path != "dbmanager-plain")

    def render(self, records: Sequence[CommitPathRecord]) -> str:
        groups = sittings(records)
        newest = groups[-1] if groups else []
        runs = [path_result(r) for r in newest]
        rounds = len({r.round for r in newest})
        first = runs[0] if runs else PathResult("", 0, 0, 0, 0, 0, 0, 0, 0)
        per = first.commits // first.writers if first.writers else 0
        lines = [
            "# Commit paths: the project's against LakeSoul's DBManager",
            "",
            "`contest bench commits`: "
            f"{first.writers} concurrent writers x {per} MergeCommits "
            f"each on one table, {rounds} rounds interleaved; one file per commit, so only "
            "metadata is written. `project`: meta.commits.commit_files (one transaction: "
            "data_commit_info, partition_info n+1, the commit's version). `dbmanager-plain`: "
            "LakeSoul 2.6.2's DBManager.commitDataCommitInfo as shipped (its result trusted). "
            "`dbmanager-verified`: the same, each commit checked and re-driven until it landed "
            "(as the lakesoul-stock engine commits). Retries: project = version conflicts "
            "rebased; DBManager = commits re-driven. Lost = commits missing from the final "
            "snapshot.",
            "",
            newest[0].note if newest else "",
            "",
            "| path | median commits/s | min–max | retries (sum) | lost (sum) | duplicated "
            "| errors |",
            "|---|---|---|---|---|---|---|",
        ]
        for path in PATHS:
            of = [x for x in runs if x.path == path]
            if not of:
                continue
            rates = [x.commits_per_s for x in of]
            lines.append(
                f"| {path} | {statistics.median(rates)} | {min(rates)}–{max(rates)} "
                f"| {sum(x.retries for x in of)} | {sum(x.lost for x in of)} "
                f"| {sum(x.duplicated for x in of)} | {sum(x.errors for x in of)} |"
            )
        lines += ["", ANSWER, "", "Raw rounds:", ""]
        lines += [f"- {asdict(x)}" for x in runs]
        return "\n".join(lines) + "\n"
