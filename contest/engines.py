"""The engines that run the Write and Read jobs, registered by name: the harness's own
(contest/write, contest/read), stock LakeSoul's libraries (write/stock.py, read/stock.py)
and a peer table format (contest/peers). `contest write` and `contest read` (and so the
timed jobs of `contest evaluate`) look the engine up and print what it returns; none of
them holds a code path per engine.

Every engine's job reports the cores its Spark application held (`spark_cores`): a
score divides by them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from contest.config import Config
from contest.config.validation import register_check
from contest.data.batches import discover
from contest.data.merge_engines import refusal
from contest.data.workload import contract_operators
from contest.errors import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    ConfigError,
    MergeOperatorError,
    UsageError,
)
from contest.infra.lakesoul_jvm import COORDINATES, session_config
from contest.infra.packages import for_paths
from contest.infra.postgres import resolve_connection
from contest.infra.spark import granted_cores, log_note, spark_session
from contest.peers import formats
from contest.peers.native.job import run_native_read, run_native_write
from contest.peers.read import run_peer_read
from contest.peers.registry import NATIVE, SPARK
from contest.peers.write import run_peer_write
from contest.read.job import ReadRequest, plan_read, run_read, versions_of
from contest.read.stock import run_stock_read
from contest.write.job import WriteMode, run_write, select_batches
from contest.write.report import timeline
from contest.write.stock import run_stock_write
from meta import catalog

if TYPE_CHECKING:
    from meta.connection import PgConnection


@dataclass(frozen=True)
class WriteJob:
    """What `contest write` was asked to do."""

    data: str
    table: str  # absolute path or URI
    name: str | None = None
    mode: WriteMode = WriteMode.CREATE
    only: list[int] | None = None
    delays: Mapping[int, float] = field(default_factory=dict)

    def refuse_concurrent(self, why: str) -> None:
        """For an engine that applies batches one after another: refuse --resume and
        --delay-commit (the harness's concurrent writes) in one line, `why`."""
        if self.mode is WriteMode.RESUME or self.delays:
            raise UsageError(why)

    @property
    def in_order(self) -> dict[str, Any]:
        """The arguments an in-order write (stock LakeSoul's, a peer's) takes from it."""
        return {
            "replace": self.mode is WriteMode.REPLACE,
            "append": self.mode is WriteMode.APPEND,
            "only": self.only,
        }


@dataclass(frozen=True)
class ReadJob:
    """What `contest read` was asked to do."""

    table: str  # a name, or a path (a peer format's table: its folder)
    out: str  # absolute path or URI
    as_of: int | None = None
    from_version: int | None = None
    to_version: int | None = None
    overwrite: bool = False
    allow_gaps: bool = False
    latest_complete: bool = False

    def refuse_concurrent(self, why: str) -> None:
        """For an engine whose writes commit in version order: refuse --latest-complete
        and --allow-gaps (reads beside the harness's concurrent writes) in one line."""
        if self.latest_complete or self.allow_gaps:
            raise UsageError(why)

    @property
    def versions(self) -> dict[str, int | None]:
        """The version arguments every engine's read takes: as of, from, to."""
        return versions_of(self)

    @property
    def versioned(self) -> bool:
        return (
            self.as_of is not None
            or self.from_version is not None
            or bool(self.to_version)
            or self.latest_complete
        )


@dataclass(frozen=True)
class JobOutcome:
    """A job's report (one JSON line on stdout, `spark_cores` in it), lines for people
    (stderr) and the exit code."""

    report: dict
    messages: tuple[str, ...]
    exit_code: int

    def emit(self, out, err) -> int:
        for line in self.messages[:-1]:
            print(line, file=err)
        print(json.dumps(self.report), file=out)
        if self.messages:
            print(self.messages[-1], file=err)
        return self.exit_code


@dataclass(frozen=True)
class Abilities:
    """What an engine's jobs can be asked (a workload's runner asks, contest/workload/
    runner.py, instead of naming engines). Every engine's read job takes reads as of a
    version and the changes of a range, answering each or refusing it in one line (exit
    code EXIT_USAGE, recorded as refused, never scored). `while_writing`:
    its read names one consistent version while upserts land (`--latest-complete`).
    `lacks`: a workload phase kind it has no form of -> why (recorded as skipped).
    A batch it cannot apply (a schema change its format refuses) is refused by its
    write job in one line, recorded as refused, and the lane goes on."""

    while_writing: bool = False
    lacks: Mapping[str, str] = field(default_factory=dict)


class Engine(Protocol):
    name: str

    def write(self, cfg: Config, job: WriteJob) -> JobOutcome: ...

    def read(self, cfg: Config, job: ReadJob) -> JobOutcome: ...

    def abilities(self, cfg: Config) -> Abilities: ...


def _read_line(table: str, rows: int, seconds: float, out: str) -> str:
    return f"read {table}: {rows:,} rows in {seconds:.3f} s -> {out}"


def _connection(cfg: Config) -> PgConnection:
    return resolve_connection(cfg)


def _summary(report: Any) -> str:
    """A write report's last line, marked `contest: ` when the write did not succeed."""
    return ("" if report.ok else "contest: ") + report.summary()


class Harness:
    """This project's jobs: concurrent versioned upserts, merge operators on read."""

    name = "harness"

    def abilities(self, cfg: Config) -> Abilities:
        return Abilities(while_writing=True)

    def write(self, cfg: Config, job: WriteJob) -> JobOutcome:
        # Bad input (a data folder, versions, --only naming no batch): before Spark starts.
        batches = discover(job.data, cfg.write.versions or None, schema=None)
        select_batches(batches, job.only, job.data)
        conn = _connection(cfg)
        with spark_session(cfg, "contest-write", for_paths(job.data)) as spark:
            report = run_write(
                spark,
                conn,
                cfg,
                job.data,
                job.table,
                job.name,
                mode=job.mode,
                delays=dict(job.delays),
                indices=job.only,
            )
            cores = granted_cores(spark)  # what a score divides by (contest evaluate)
        summary = _summary(report)
        warnings = tuple(f"contest: warning: {w}" for w in report.warnings())
        return JobOutcome(
            {**report.to_dict(), "spark_cores": cores},
            (timeline(report), *warnings, summary + ("" if report.ok else log_note())),
            report.exit_code,
        )

    def read(self, cfg: Config, job: ReadJob) -> JobOutcome:
        conn = _connection(cfg)
        table = catalog.find_table(conn, job.table, cfg.table.namespace)
        request = ReadRequest(
            out_dir=job.out,
            **job.versions,
            overwrite=job.overwrite,
            allow_gaps=job.allow_gaps,
            latest_complete=job.latest_complete,
        )
        plan = plan_read(conn, cfg, table, request)  # every check before Spark starts
        for warning in plan.warnings:
            print(f"contest: warning: {warning}", file=sys.stderr)
        with spark_session(cfg, "contest-read", for_paths(job.out)) as spark:
            report = run_read(spark, cfg, plan)
            cores = granted_cores(spark)
        out = {**report.to_dict(), "spark_cores": cores}
        line = _read_line(report.table, report.rows, report.seconds, report.out)
        return JobOutcome(out, (line,), EXIT_OK)


R = TypeVar("R")


def _stock_job(
    cfg: Config, app: str, path: str, run: Callable[..., R], *args: Any, **kwargs: Any
) -> tuple[R, int]:
    """Stock LakeSoul's job, `run(spark, conn, cfg, *args, **kwargs)`, in a session with
    LakeSoul's packages and settings (and those `path`'s scheme needs); its report and
    the cores the session held."""
    conn = _connection(cfg)
    packages = COORDINATES + for_paths(path)
    with spark_session(session_config(cfg), app, packages) as spark:
        report = run(spark, conn, cfg, *args, **kwargs)
        cores = granted_cores(spark)
    return report, cores


class Stock:
    """Stock LakeSoul: tables and commits by LakeSoul's DBManager, rows written and
    merged by its native IO, sequential upserts in version order."""

    name = "lakesoul-stock"

    def abilities(self, cfg: Config) -> Abilities:
        # `contest compact` merges with the harness's operators, which know nothing of
        # the stock table's count columns; LakeSoul's own compaction is its Spark
        # connector's, which the stock engine does not load. `contest vacuum` reads the
        # harness's commits, not the stock table's. A workload that evolves its schema
        # evolves the table by DBManager (contest/write/stock.py), its history read
        # through LakeSoul's partition versions (contest/read/stock.py).
        return Abilities(
            lacks={
                "compact": f"write.engine={self.name}: no compaction for it in this harness",
                "vacuum": f"{self.name}: `contest vacuum` is LakeSoul's (the harness's "
                "tables) only",
            },
        )

    def write(self, cfg: Config, job: WriteJob) -> JobOutcome:
        job.refuse_concurrent(
            "write.engine=lakesoul-stock: no --resume or --delay-commit (its upserts "
            "run one after another: --append --only writes the batches still to come)"
        )
        # Bad input (a data folder, --only naming no batch): before Spark starts.
        select_batches(discover(job.data, cfg.write.versions or None, None), job.only, job.data)
        report, cores = _stock_job(
            cfg,
            "contest-write-stock",
            job.data,
            run_stock_write,
            job.data,
            job.table,
            job.name,
            **job.in_order,
        )
        summary = _summary(report)
        return JobOutcome({**report.to_dict(), "spark_cores": cores}, (summary,), report.exit_code)

    def read(self, cfg: Config, job: ReadJob) -> JobOutcome:
        job.refuse_concurrent(
            "read.engine=lakesoul-stock: --latest-complete and --allow-gaps are for the "
            "harness's concurrent writes (the stock writer commits in version order)"
        )
        report, cores = _stock_job(
            cfg,
            "contest-read-stock",
            job.out,
            run_stock_read,
            job.table,
            job.out,
            job.overwrite,
            **job.versions,
        )
        out = {**report.to_dict(), "spark_cores": cores}
        line = _read_line(report.table, report.rows, report.seconds, report.out)
        return JobOutcome(out, (line,), EXIT_OK)


# A peer's Write and Read jobs by its implementation's kind (contest/peers/registry.py):
# a Spark application, or a plain Python process of the format's own library.
PEER_JOBS = {
    SPARK.name: (run_peer_write, run_peer_read),
    NATIVE.name: (run_native_write, run_native_read),
}


class Peer:
    """A peer table format (peer.format, contest/peers/registry.py): the batches (all, or
    those --only names; --append: into the table there) merged in version order, read
    by the format's own reader at its head, as of a version or the changes of a range
    (the table's batch ledger maps versions to the format's commits); --table is the
    table's folder. Its jobs by its implementation's kind (PEER_JOBS)."""

    name = "peer"

    def abilities(self, cfg: Config) -> Abilities:
        # History through the format (contest/peers/base.py: read_as_of, read_changes,
        # expire; a format without one refuses in one line). Its vacuum is the format's
        # own expiry (contest/peers/expire.py).
        kind = formats.runtime_of(cfg)
        own = {k: f"peer format {cfg.peer.format} ({kind.label}): no {k} here" for k in kind.lacks}
        return Abilities(
            lacks={
                "merge": f"peer format {cfg.peer.format}: no LakeSoul metadata to merge",
                **own,
            },
        )

    def write(self, cfg: Config, job: WriteJob) -> JobOutcome:
        job.refuse_concurrent(
            f"peer.format={cfg.peer.format}: --resume and --delay-commit are for LakeSoul "
            "tables; a peer write applies its batches in version order"
        )
        write, _ = PEER_JOBS[formats.runtime_of(cfg).name]
        report = write(cfg, job.data, job.table, **job.in_order)
        summary = _summary(report)
        code = EXIT_OK if report.ok else EXIT_USAGE if report.refused else EXIT_FAILED
        return JobOutcome(report.to_dict(), (summary,), code)

    def read(self, cfg: Config, job: ReadJob) -> JobOutcome:
        job.refuse_concurrent(
            f"peer.format={cfg.peer.format}: --latest-complete and --allow-gaps are for "
            "LakeSoul tables (a peer table's versions are its ledger's commits)"
        )
        _, read = PEER_JOBS[formats.runtime_of(cfg).name]
        report = read(cfg, job.table, job.out, job.overwrite, **job.versions)
        line = _read_line(
            f"{report['format']} table {report['table']}",
            report["rows"],
            report["seconds"],
            report["out"],
        )
        return JobOutcome(report, (line,), EXIT_OK)


# write.engine and read.engine name one of them (check_engine_settings); the peer engine
# is chosen by peer.format.
AVAILABLE_ENGINES: dict[str, Engine] = {e.name: e for e in (Harness(), Stock(), Peer())}


def settable_engines() -> list[str]:
    """The engines write.engine and read.engine may name: every registered one but the
    peer's, which peer.format chooses."""
    return [name for name in AVAILABLE_ENGINES if name != Peer.name]


def check_engine_settings(cfg: Config) -> None:
    """write.engine and read.engine each name a registered engine: the registry is the
    only list (the configuration layer, below this one, names none)."""
    known = settable_engines()
    for key, engine in (("write.engine", cfg.write.engine), ("read.engine", cfg.read.engine)):
        if engine not in known:
            raise ConfigError(f"{key}: {engine!r} is not one of {', '.join(known)}")


register_check("engines", check_engine_settings)


def engine_name(cfg: Config, stage: str) -> str:
    """The engine of a stage ("write" or "read"): a peer format when peer.format is set,
    else write.engine / read.engine."""
    if cfg.peer.format:
        return Peer.name
    return cfg.write.engine if stage == "write" else cfg.read.engine


def engine_for(cfg: Config, stage: str) -> Engine:
    """The stage's engine; a workload operator it cannot express is refused now."""
    why = operator_refusal(cfg)
    if why:
        raise MergeOperatorError(why)
    return AVAILABLE_ENGINES[engine_name(cfg, stage)]


def merge_engines(cfg: Config) -> tuple[str, ...]:
    """The engines (contest/data/merge_engines.py ENGINES) the configured write and read
    merge with: a peer format's own; stock LakeSoul's operators; the harness's read
    merge (read.merge), after Spark's collapse and join for copy-on-write."""
    if cfg.peer.format:
        return formats.of(cfg).merge_engines
    out: list[str] = []
    if cfg.write.engine != Harness.name or cfg.read.engine != Harness.name:
        out.append("lakesoul")
    if cfg.write.engine == Harness.name and cfg.write.mode == "cow":
        out.append("spark")
    if cfg.read.engine == Harness.name:
        out.append(cfg.read.merge)
    return tuple(out)


def abilities(cfg: Config) -> Abilities:
    """What a strategy can be asked: its read engine's reads while writing; the phases
    its write engine (whose table it is) or read engine has no form of."""
    read = AVAILABLE_ENGINES[engine_name(cfg, "read")].abilities(cfg)
    write = AVAILABLE_ENGINES[engine_name(cfg, "write")].abilities(cfg)
    return Abilities(read.while_writing, {**read.lacks, **write.lacks})


def who(cfg: Config) -> str:
    """The strategy's engine in a refusal's words."""
    if cfg.peer.format:
        return f"peer format {cfg.peer.format}"
    if cfg.write.engine != Harness.name or cfg.read.engine != Harness.name:
        return "lakesoul-stock"
    return f"LakeSoul (write.mode={cfg.write.mode}, read.merge={cfg.read.merge})"


def operator_refusal(cfg: Config) -> str | None:
    """Why this configuration cannot merge its workload's operators (the contest's and
    the extra columns'), in one line naming the operator and the format, or None."""
    ops = contract_operators(cfg.workload)
    return refusal(ops, merge_engines(cfg), who(cfg))
