"""The Write and Read jobs of a native implementation (a format's own Python library, no
Spark, no JVM): the batches in version order, each applied by the library's upsert or
merge (`NativeFormat.write_batch`), the table read by its own reader and written as the
contest's result parquet through the project's safe result folder. Timed by the caller as
a whole process, like a spark-submit job; the cores it is given (`--cores`, as the
master local[N] every job gets) are its threads, and the process is held to that many
CPUs, so a library that sizes its own pools from the machine gets no more.

Batches may be appended to the table the folder holds (a workload's phases), the
table's batch ledger (contest/peers/ledger.py) refusing one it holds already. Change data
(row kinds, batches of some of the payload columns, another key) is checked as the
harness's write checks it, every file before any is written, and each batch that needs it
reaches the library collapsed by key with the delete rule (`NativeFormat.write_changes`);
a library that declares no such change data refuses it in one line first. What the
runner has no form of (a read as of a version or of a range, a workload that evolves its
schema, an object store, compaction) is refused in one line.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ParamSpec, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from contest.config import Config
from contest.data import operators
from contest.data.batches import Batch, discover
from contest.data.changes import changes_of, declares_changes
from contest.data.workload import (
    BatchColumns,
    batch_schema,
    contract_operators,
    schema_of_batch,
    workload_schema,
)
from contest.errors import ReadError, SchemaEvolutionError, UsageError
from contest.infra import timeline
from contest.infra.storage import is_object_store
from contest.peers import change_check, change_merge, formats, ledger
from contest.peers.base import codec_name, error_line
from contest.peers.files import data_listing
from contest.peers.native import libraries
from contest.peers.native.base import NativeFormat
from contest.peers.native.collapse import collapsed_changes
from contest.peers.write import PeerBatch, PeerWriteReport, record_files
from contest.read import output
from contest.write.changes import change_shape
from contest.write.job import select_batches

# One line a batch as it is applied (the Spark peers' write logs the same): a job stopped
# at a run's time cap still shows how far it got and what each batch took.
log = logging.getLogger("contest.peers.native")

_LOCAL = re.compile(r"local\[(\d+|\*)\]")


def threads_of(master: str) -> int | None:
    """The threads of a native job: the N of the master `local[N]` its cores came as
    (`local[*]`: None, every CPU it may run on); a cluster master has no meaning for a
    process on this machine: refused."""
    found = _LOCAL.fullmatch(master.strip())
    if found is None or found.group(1) == "0":
        raise UsageError(
            f"spark.master {master!r}: a native library runs as one process on this machine; "
            "give it local[N] (N cores as threads)"
        )
    return None if found.group(1) == "*" else int(found.group(1))


def hold_cpus(threads: int | None) -> int:
    """Hold this process to `threads` of the CPUs it may run on (all of them when it
    has fewer, or for None), and pyarrow's pool to as many; the CPUs held."""
    allowed = sorted(os.sched_getaffinity(0))
    held = allowed if threads is None else allowed[:threads]
    os.sched_setaffinity(0, held)
    pa.set_cpu_count(len(held))
    return len(held)


P = ParamSpec("P")
R = TypeVar("R")


def gives_cpus_back(job: Callable[P, R]) -> Callable[P, R]:
    """A job that holds its process to its cores (`hold_cpus`) gives them back when it
    returns: run in the CLI's own process (`contest write` by hand, a test), it must not
    leave that process, and every child it starts later, on fewer CPUs."""

    @functools.wraps(job)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        cpus, threads = os.sched_getaffinity(0), pa.cpu_count()
        timeline.mark(timeline.FIRST_TASK)  # a native job's work: its library's calls
        try:
            return job(*args, **kwargs)
        finally:
            timeline.mark(timeline.LAST_TASK)
            os.sched_setaffinity(0, cpus)
            pa.set_cpu_count(threads)

    return run


def native_format(cfg: Config) -> NativeFormat:
    fmt = formats.of(cfg)
    if not isinstance(fmt, NativeFormat):
        raise UsageError(f"peer.format={cfg.peer.format}: a Spark format, not a native library")
    return fmt


def _local(path: str | Path, what: str) -> Path:
    if is_object_store(str(path)):
        raise UsageError(f"{what} {path}: a native library reads and writes local folders only")
    return Path(str(path)).absolute()


def result_columns(cfg: Config) -> list[str]:
    """The result's columns in order: the key's (`workload.key`), then every column
    with an operator."""
    return [*changes_of(cfg).key, *contract_operators(cfg.workload)]


def conform(table: pa.Table, cfg: Config) -> pa.Table:
    """The merged rows as the contest's result: its columns in order, a summed integer
    as int64 (the operator registry's result schema)."""
    cols = result_columns(cfg)
    missing = [c for c in cols if c not in table.column_names]
    if missing:
        raise ReadError(f"peer.format={cfg.peer.format}: the table has no column {missing[0]}")
    picked = table.select(cols)
    return picked.cast(operators.result_schema(picked.schema, contract_operators(cfg.workload)))


def check_schemas(cfg: Config, batches: Sequence[Batch]) -> None:
    """Every batch in the workload's newest schema: the native runner has no schema
    evolution (a workload that adds or widens a column at a later batch is refused,
    whichever of its batches a job writes). A file holding some of the payload columns
    is change data, not evolution (`change_schema`)."""
    newest = workload_schema(cfg.workload)
    for batch in batches:
        if not batch_schema(cfg.workload, batch.index).equals(newest):
            raise SchemaEvolutionError(
                f"{batch.name}: the workload adds or widens a column after it: no schema "
                "evolution in the native libraries"
            )


def change_schema(cfg: Config, found: BatchColumns, batches: Sequence[Batch]) -> pa.Schema | None:
    """The schema a table of change data is created with (the key's columns as the files
    type them, a binary key as binary; then every payload column in its merged type),
    after every file's rows are checked as the harness's write checks them (a NULL key
    part, an unknown op value, a binary key not 16 bytes: one line naming the file);
    None for the contest's upserts (every file whole, keyed by uuid, no row kinds)."""
    if not (declares_changes(cfg) or found.partial):
        return None
    shape = change_shape(cfg, batches)
    fields = pa.schema([f for f in shape.schema if f.name != shape.cdc_column])
    return operators.result_schema(fields, contract_operators(cfg.workload))


def apply(
    fmt: NativeFormat,
    cfg: Config,
    table: Path,
    batch: Batch,
    first: bool,
    threads: int,
    schema: pa.Schema | None = None,
) -> PeerBatch:
    """One batch read, applied by the library and measured; a failure is its one line.
    `schema`: the table's of change data (`change_schema`), whose batches that need it
    go to the library collapsed by the delete rule (`write_changes`)."""
    res = PeerBatch(batch.name, batch.version, batch.rows)
    before = data_listing(table, fmt.metadata_dirs) if table.exists() else {}
    if not first:  # the first creates the table: its folder is not there to hold a ledger
        ledger.mark(table, batch, ledger.PENDING)
    t0 = time.perf_counter()
    try:
        rows = pq.read_table(batch.path)
        if schema is not None and change_merge.needed(cfg, batch):
            ops = contract_operators(cfg.workload)
            change = collapsed_changes(rows, changes_of(cfg), ops, str(batch.path))
            done = fmt.write_changes(cfg, table, change, schema, first, threads)
        else:
            done = fmt.write_batch(cfg, table, rows, first, threads)
        res.operation, res.metrics = done
    except Exception as exc:
        res.error = error_line(exc)
        res.refused = isinstance(exc, SchemaEvolutionError)
    res.seconds = time.perf_counter() - t0
    if res.error is None:
        ledger.mark(table, batch, ledger.DONE)
        record_files(res, before, data_listing(table, fmt.metadata_dirs), table)
    return res


@gives_cpus_back
def run_native_write(
    cfg: Config,
    data_dir: str | Path,
    table_path: str | Path,
    replace: bool = False,
    append: bool = False,
    only: Sequence[int] | None = None,
) -> PeerWriteReport:
    """The whole Write job: check the library, the input and the folder, then apply the
    batches in version order, stopping at the first failure (later batches depend on it).
    `only`: these batch indices; `append`: into the table the folder holds (its batch
    ledger, contest/peers/ledger.py, refuses a batch it holds or one out of order),
    created by the first batch when there is none."""
    fmt = native_format(cfg)
    libraries.require_for(cfg)
    threads = hold_cpus(threads_of(cfg.spark.master))
    columns = schema_of_batch(cfg.workload)
    found = discover(str(_local(data_dir, "--data")), cfg.write.versions or None, columns)
    change_check.refuse(cfg, columns)  # change data the library cannot take: nothing written
    check_schemas(cfg, found)
    schema = change_schema(cfg, columns, found)
    batches = sorted(select_batches(found, only, data_dir), key=lambda b: b.version)
    table = _local(table_path, "--table")
    exists = append and fmt.holds(cfg, table)
    if exists:
        ledger.check(table, batches, in_order=True)
    else:
        fmt.prepare(cfg, table, replace)
    report = PeerWriteReport(cfg.peer.format, str(table), spark_cores=threads, appended=exists)
    started = time.perf_counter()
    for i, batch in enumerate(batches):
        res = apply(fmt, cfg, table, batch, i == 0 and not exists, threads, schema)
        report.batches.append(res)
        log.info(
            "%s v%d: %s %.2fs (%s rows)%s",
            res.batch,
            res.version,
            res.operation or "failed",
            res.seconds,
            f"{res.rows:,}",
            f": {res.error}" if res.error else "",
        )
        if res.error:
            break
    report.wall_s = time.perf_counter() - started
    return report


@gives_cpus_back
def run_native_read(
    cfg: Config,
    table_path: str | Path,
    out_dir: str,
    overwrite: bool,
    as_of: int | None = None,
    from_version: int | None = None,
    to_version: int | None = None,
) -> dict:
    """The whole Read job: the table's head merged by the library's reader, written as
    one parquet file of the result folder (staged, then published)."""
    fmt = native_format(cfg)
    libraries.require_for(cfg)
    if as_of is not None or from_version is not None or to_version is not None:
        raise ReadError(f"peer.format={fmt.name}: the native libraries read the table's head only")
    threads = hold_cpus(threads_of(cfg.spark.master))
    table = _local(table_path, "--table")
    if not fmt.holds(cfg, table):
        raise ReadError(
            f"--table {table}: no {fmt.name} table there (no {fmt.marker}): write it first "
            "(contest write with the same peer.format)"
        )
    out = output.prepare(str(_local(out_dir, "--out")), [str(table)], overwrite)
    started = time.perf_counter()
    try:
        result = conform(fmt.read_table(cfg, table, threads), cfg)
        staging = Path(out.staging)
        staging.mkdir(parents=True, exist_ok=True)
        pq.write_table(result, staging / "part-00000.parquet", compression=_codec(cfg))
        output.publish(out, {"table": str(table), "format": fmt.name, "rows": result.num_rows})
    except BaseException:
        output.discard(out)
        raise
    return {
        "table": str(table),
        "format": fmt.name,
        "out": str(out.target),
        "rows": result.num_rows,
        "seconds": round(time.perf_counter() - started, 3),
        "spark_cores": threads,
        "version": _newest(table),
    }


def _newest(table: Path) -> int | None:
    """The newest batch version the table's ledger holds (None without a ledger)."""
    held = ledger.load(table)
    return None if held is None else ledger.newest(held)


def _codec(cfg: Config) -> str:
    """read.codec as pyarrow names it."""
    name = codec_name(cfg.read.codec)
    return "none" if name == "uncompressed" else name
