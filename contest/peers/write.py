"""The Write job of a peer format: the batches in version order, each applied by the
format's own `apply_batch` (contest/peers/<format>/format.py): collapsed by key with the
contract's rules, then merged the way that format's users upsert (MERGE INTO, an upsert
of merged rows, a primary-key table's merge engine, ...). The first batch creates the
table; with `append`, batches (`--only` names some) are merged into the table the folder
holds already, after the ones it has (a workload's phases, contest/workload/runner.py);
the table's batch ledger (contest/peers/ledger.py) refuses a batch it holds already.
A batch whose schema differs from the table's (a column added, an integer widened: a
workload that evolves its schema) is preceded by the format's own schema change
(`PeerFormat.evolve`); each batch's commit is recorded in the ledger by the format's
own id (`PeerFormat.commit_id`), which a read as of a version looks up.

Every batch reports the format's own numbers for its commit (Delta's operation metrics,
Iceberg's snapshot summary) and what appeared in the table folder (data, delete, deletion
vector and log files, bytes), so the write amplification of each format is measured.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from contest.config import Config
from contest.data.batches import Batch, discover
from contest.data.workload import schema_of_batch
from contest.errors import HarnessError, SchemaEvolutionError, UsageError, unwrap_spark_error
from contest.infra import packages
from contest.infra.spark import granted_cores, spark_session
from contest.peers import change_check, formats, ledger, schema
from contest.peers.files import classify as classify  # where callers found it
from contest.peers.files import data_listing, folder_bytes
from contest.peers.merge import merge_sql as merge_sql  # where callers found it
from contest.peers.schema import Fields
from contest.write.job import select_batches

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger("contest.peers")


@dataclass
class PeerBatch:
    batch: str
    version: int
    rows: int
    seconds: float = 0.0
    operation: str = ""
    # The format's own numbers for this commit (Delta history, Iceberg snapshot summary).
    metrics: dict[str, int] = field(default_factory=dict)
    # What appeared in the table folder (data area, not the log/metadata folders); None
    # for a batch applied together with others (`together`): its files cannot be told
    # from theirs, and 0 would say it added none.
    data_files_added: int | None = 0
    delete_files_added: int | None = 0  # Iceberg position-delete files, Delta deletion vectors
    log_files_added: int | None = 0  # Hudi log files
    bytes_added: int | None = 0
    table_files: int = 0  # files in the data area after this batch (all versions)
    table_bytes: int = 0  # the whole folder after this batch
    error: str | None = None
    together: bool = False  # applied at once with other batches (a concurrent format)
    # The format's schema changes made before it (PeerFormat.evolve), and its commit.
    evolved: list[str] = field(default_factory=list)
    commit: str | None = None
    # The error is the format's refusal of the batch's schema change (nothing of the
    # batch written): the job exits EXIT_USAGE, a workload records it as refused.
    refused: bool = False


@dataclass
class PeerWriteReport:
    format: str
    table: str
    batches: list[PeerBatch] = field(default_factory=list)
    wall_s: float = 0.0
    # The cores the job's Spark application held (what a score divides by).
    spark_cores: int | None = None
    # Batches applied at once after the first (1: one after another).
    threads: int = 1
    # Merged into a table the folder held already (--append), none created.
    appended: bool = False

    @property
    def ok(self) -> bool:
        return all(b.error is None for b in self.batches)

    @property
    def refused(self) -> bool:
        """The first failed batch failed on a schema change the format refuses."""
        failed = [b for b in self.batches if b.error]
        return bool(failed) and failed[0].refused

    @property
    def table_bytes(self) -> int:
        return self.batches[-1].table_bytes if self.batches else 0

    def summary(self) -> str:
        done = sum(1 for b in self.batches if b.error is None)
        verb = "appended to" if self.appended else "wrote"
        line = (
            f"{verb} {self.format} table {self.table}: {done} of {len(self.batches)} batches "
            f"merged in {self.wall_s:.3f} s, {self.table_bytes:,} bytes stored"
        )
        failed = [b for b in self.batches if b.error]
        if failed:
            line += f"; FAILED at {failed[0].batch} (later batches not applied): {failed[0].error}"
        return line

    def to_dict(self) -> dict:
        return {
            "format": self.format,
            "table": self.table,
            "ok": self.ok,
            "wall_s": round(self.wall_s, 3),
            "table_bytes": self.table_bytes,
            "spark_cores": self.spark_cores,
            "threads": self.threads,
            "appended": self.appended,
            "batches": [
                {k: round(v, 3) if isinstance(v, float) else v for k, v in asdict(b).items()}
                for b in self.batches
            ],
        }


def record_files(res: PeerBatch, before: dict, after: dict, root: Path) -> None:
    new = [after[p] for p in after if p not in before]
    res.data_files_added = sum(1 for kind, _ in new if kind == "data")
    res.delete_files_added = sum(1 for kind, _ in new if kind == "delete")
    res.log_files_added = sum(1 for kind, _ in new if kind == "log")
    res.bytes_added = sum(size for _, size in new)
    res.table_files = len(after)
    res.table_bytes = folder_bytes(root)


def prepare_folder(cfg: Config, table: Path, replace: bool) -> None:
    """An empty or absent folder; with `replace`, a table of the same format is removed
    first. Anything else is refused, naming the folder."""
    if not table.exists() or (table.is_dir() and not any(table.iterdir())):
        return
    marker = formats.of(cfg).marker
    if not replace:
        raise UsageError(f"--table {table}: exists and is not empty (--replace to replace it)")
    if not (table / marker).exists():
        raise UsageError(
            f"--table {table}: not a {cfg.peer.format} table (no {marker}): not replaced"
        )
    shutil.rmtree(table)


def holds_table(cfg: Config, table: Path) -> bool:
    """Whether the folder holds a table of the configured format (its marker is there)."""
    return (table / formats.of(cfg).marker).exists()


def table_fields(spark: SparkSession, cfg: Config, table: Path) -> Fields:
    """The table's workload columns as its format reads them (its metadata, no data)."""
    return schema.fields_of(formats.of(cfg).read(spark, cfg, table), cfg)


def evolve_for(
    spark: SparkSession, cfg: Config, table: Path, batch: Batch, known: Fields
) -> list[str]:
    """The format's schema change before `batch` when the batch's schema differs from
    the table's (`known`, updated to the table's after it); what the format did."""
    if not schema.changes(known, schema.batch_fields(spark, cfg, batch)):
        return []
    done = formats.of(cfg).evolve(spark, cfg, table, batch)
    known.update(table_fields(spark, cfg, table))
    return done


def commit_of(spark: SparkSession, cfg: Config, table: Path) -> str | None:
    """The table's newest commit by the format's own id; None when the format names
    none (a read as of a version is then refused, naming that)."""
    try:
        return formats.of(cfg).commit_id(spark, table)
    except HarnessError as exc:
        log.info("no commit id recorded: %s", exc)
        return None


def apply_one(
    spark: SparkSession,
    cfg: Config,
    table: Path,
    batch: Batch,
    first: bool,
    alone: bool,
    known: Fields | None = None,
    group: int | None = None,
) -> PeerBatch:
    """One batch applied and measured. `alone`: no other batch is being applied, so the
    files that appeared and the format's latest commit are this batch's. `known`: the
    table's columns, when the batch may need a schema change first (evolved alone).
    `group`: the ledger's mark of batches applied at once (their commits' order unknown)."""
    fmt = formats.of(cfg)
    res = PeerBatch(batch.name, batch.version, batch.rows)
    if not alone:
        res.together = True
        res.data_files_added = res.delete_files_added = res.log_files_added = None
        res.bytes_added = None
    spark.sparkContext.setLocalProperty(
        "spark.job.description", f"{cfg.peer.format} {batch.name} v{batch.version}"
    )
    before = data_listing(table, fmt.metadata_dirs) if alone and table.exists() else {}
    if not first:  # the first creates the table: its folder is not there to hold a ledger
        ledger.mark(table, batch, ledger.PENDING)
    t0 = time.perf_counter()
    try:
        if known is not None and not first:
            res.evolved = evolve_for(spark, cfg, table, batch, known)
        res.operation = fmt.apply_batch(spark, cfg, table, batch, first=first)
        if alone:
            res.metrics = fmt.commit_metrics(spark, table)
            res.commit = commit_of(spark, cfg, table)
        if known is not None and first:
            known.update(table_fields(spark, cfg, table))
    except Exception as exc:
        cause = unwrap_spark_error(exc) or exc
        lines = [ln.strip() for ln in str(cause).splitlines() if ln.strip()]
        res.error = lines[0][:500] if lines else type(cause).__name__
        res.refused = isinstance(cause, SchemaEvolutionError)
    res.seconds = time.perf_counter() - t0
    if res.error is None:
        ledger.mark(table, batch, ledger.DONE, res.commit, group)
    elif res.refused:  # nothing of it written: the ledger says so, and why
        ledger.mark(table, batch, ledger.REFUSED, why=res.error)
    if res.error is None and alone:
        record_files(res, before, data_listing(table, fmt.metadata_dirs), table)
    if res.evolved:
        log.info("%s v%d: schema %s", res.batch, res.version, ", ".join(res.evolved))
    log.info(
        "%s v%d: %s %.2fs, +%s data +%s delete +%s log files, +%s bytes %s%s",
        res.batch,
        res.version,
        res.operation or "-",
        res.seconds,
        *("?" if n is None else n for n in (res.data_files_added, res.delete_files_added)),
        *("?" if n is None else n for n in (res.log_files_added, res.bytes_added)),
        json.dumps(res.metrics) if res.metrics else "",
        f" FAILED: {res.error}" if res.error else "",
    )
    return res


def write_peer(
    spark: SparkSession,
    cfg: Config,
    table: Path,
    batches: Sequence[Batch],
    exists: bool = False,
) -> PeerWriteReport:
    """Apply the batches in version order, stopping at the first failure (later batches
    depend on it); or, for a format whose commits may land in any order
    (`concurrent_batches`), the first batch (it creates the table), then the others
    from a pool of write.threads threads, as the harness's own write does. Concurrent
    batches report their seconds and operation; the files and commit numbers of one
    batch cannot be told apart from its neighbours', so only the table's totals after
    the last of them are recorded. `exists`: the table is there already (an append),
    so no batch creates it."""
    fmt = formats.of(cfg)
    for key, value in fmt.runtime_conf(cfg, table).items():
        spark.conf.set(key, value)
    threads = cfg.write.threads if fmt.concurrent_batches else 1
    report = PeerWriteReport(cfg.peer.format, str(table), threads=threads, appended=exists)
    started = time.perf_counter()
    ordered = sorted(batches, key=lambda b: b.version)
    known: Fields = table_fields(spark, cfg, table) if exists else {}
    if threads > 1 and len(ordered) > 1:
        first = apply_one(spark, cfg, table, ordered[0], first=not exists, alone=True, known=known)
        report.batches.append(first)
        if first.error is None:
            # The schema changes of the batches applied at once, one after another first.
            try:
                for b in ordered[1:]:
                    first.evolved += evolve_for(spark, cfg, table, b, known)
            except Exception as exc:
                cause = unwrap_spark_error(exc) or exc
                first.error = str(cause).strip().splitlines()[0][:500]
                first.refused = isinstance(cause, SchemaEvolutionError)
        if first.error is None:
            group = time.time_ns()  # this job's pool: one group in the ledger
            with ThreadPoolExecutor(threads) as pool:
                rest = pool.map(
                    lambda b: apply_one(
                        spark, cfg, table, b, first=False, alone=False, group=group
                    ),
                    ordered[1:],
                )
                report.batches.extend(rest)
            head = commit_of(spark, cfg, table)
            together = [r.version for r in report.batches[1:] if r.error is None]
            if head is not None and together:
                ledger.set_commit(table, together, head)
            files, stored = len(data_listing(table, fmt.metadata_dirs)), folder_bytes(table)
            for res in report.batches[1:]:
                res.table_files, res.table_bytes = files, stored
                res.commit = head if res.error is None else None
    else:
        for i, batch in enumerate(ordered):
            res = apply_one(
                spark, cfg, table, batch, first=i == 0 and not exists, alone=True, known=known
            )
            report.batches.append(res)
            if res.error:
                break
    report.wall_s = time.perf_counter() - started
    return report


def run_peer_write(
    cfg: Config,
    data_dir: str | Path,
    table_path: str | Path,
    replace: bool = False,
    append: bool = False,
    only: Sequence[int] | None = None,
) -> PeerWriteReport:
    """The whole Write job of a peer format: check the input and the folder, load the
    format's library (one line naming it when it cannot be resolved), write. `only`:
    these batch indices, not the folder's every batch; `append`: into the table the
    folder holds (created by the first batch when there is none)."""
    columns = schema_of_batch(cfg.workload)
    found = discover(data_dir, cfg.write.versions or None, columns)
    change_check.refuse(cfg, columns)  # change data the format cannot take: nothing written
    batches = select_batches(found, only, data_dir)
    table = Path(str(table_path)).absolute()
    exists = append and holds_table(cfg, table)
    if exists:
        ledger.check(table, batches, in_order=not formats.of(cfg).concurrent_batches)
    else:
        prepare_folder(cfg, table, replace)
    coords = formats.coordinates(cfg)
    packages.require(coords)
    with spark_session(session_config(cfg), f"contest-write-{cfg.peer.format}", coords) as spark:
        report = write_peer(spark, cfg, table, batches, exists=exists)
        report.spark_cores = granted_cores(spark)
    return report


def session_config(cfg: Config) -> Config:
    """The config with the format's start settings under the user's spark.conf (they
    reach the session builder when no spark-submit set them on its command line)."""
    conf = formats.start_conf(cfg) | dict(cfg.spark.conf)
    return dataclasses.replace(cfg, spark=dataclasses.replace(cfg.spark, conf=conf))


def report_from_log(log_path: Path) -> dict | None:
    """The write job's JSON report, from its log (the line it prints on stdout)."""
    try:
        lines = log_path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        if line.startswith('{"format"'):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None
