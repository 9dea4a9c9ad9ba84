"""The Read job: the table merged by primary key with a merge operator per column,
in version order, written out as parquet.

Reads honour the merged snapshot of `contest meta merge`. A snapshot still in
commit order (writes finished out of version order and no merge ran since) is
refused, because its merge-on-read result would silently be wrong; so is a table
whose committed versions have holes (a batch that never landed), unless asked.
Every check runs in `plan_read`, before Spark starts.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from contest.config import Config
from contest.errors import ReadError
from contest.infra.storage import filesystem
from contest.read import output
from contest.read.changes import ChangeSpan
from contest.read.files import MergeTuning, merged_dataframe, write_merged
from contest.read.operators import CONTEST_OPERATORS, validate_operators
from meta import catalog
from meta.catalog import TableRef
from meta.commits import SnapshotCommit, head_snapshot
from meta.compactions import Compaction, compaction, covers_of
from meta.connection import PgConnection
from meta.merge import describe_versions
from meta.replay import Commit, in_version_order, order_commits
from meta.versions import gaps_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


@dataclass(frozen=True)
class ReadRequest:
    out_dir: str
    as_of: int | None = None
    from_version: int | None = None
    to_version: int | None = None
    overwrite: bool = False
    allow_gaps: bool = False
    # As of the newest version with every version before it committed (a read while a
    # write lands: one consistent version, never a mix).
    latest_complete: bool = False

    @property
    def versions(self) -> dict[str, int | None]:
        return versions_of(self)


def versions_of(request: Any) -> dict[str, int | None]:
    """The versions a read names (as of, from, to), by the keyword names every engine's
    read takes: one place for the harness's request and `contest read`'s job."""
    return {
        "as_of": request.as_of,
        "from_version": request.from_version,
        "to_version": request.to_version,
    }


@dataclass
class ReadPlan:
    table: TableRef
    commits: list[SnapshotCommit]
    partition_version: int
    operators: dict[str, str]
    out: output.Output | output.RemoteOutput
    warnings: list[str] = field(default_factory=list)
    version: int | None = None  # the newest batch version the read applies
    span: ChangeSpan | None = None  # a changes read of change data


@dataclass
class ReadReport:
    table: str
    out: str
    rows: int
    commits: int
    partition_version: int
    seconds: float
    operators: dict[str, str]
    version: int | None = None  # the newest batch version read (oracle: up to it)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["seconds"] = round(self.seconds, 3)
        return d


def operators_for(table: TableRef, cfg: Config) -> dict[str, str]:
    """The configured operators, or the contest's (and a workload's extra columns') for
    the columns the table has."""
    if cfg.read.operators:
        return dict(cfg.read.operators)
    ops = {**CONTEST_OPERATORS, **cfg.workload.columns}
    return {c: op for c, op in ops.items() if c in table.schema.names}


def select_commits(
    commits: list[SnapshotCommit],
    *,
    as_of: int | None = None,
    from_version: int | None = None,
    to_version: int | None = None,
) -> list[SnapshotCommit]:
    """Live commits in merge order, limited to a version range: as of V (<= V), or
    the changes between A and B (A < version <= B)."""
    by_id = {c.commit_id: c for c in commits}
    ordered = [
        by_id[c.commit_id]
        for c in order_commits([Commit(c.commit_id, c.commit_op, c.version) for c in commits])
    ]
    if as_of is None and from_version is None and to_version is None:
        return ordered
    low = from_version
    high = as_of if as_of is not None else to_version
    out = []
    for c in ordered:
        if c.version is None:
            raise ReadError(
                f"commit {c.commit_id} ({c.commit_op}) carries no version: "
                "history by version cannot be read across it"
            )
        if (low is None or c.version > low) and (high is None or c.version <= high):
            out.append(c)
    return out


def known_versions(commits: list[SnapshotCommit], covers: dict[str, tuple]) -> list[int]:
    """The versions the commits stand for: their own, and those a compaction covers."""
    out = [c.version for c in commits if c.version is not None]
    for c in commits:
        out.extend(covers.get(c.commit_id, ()))
    return out


def stands_whole(covers: tuple, low: int | None, high: int | None) -> bool:
    """Whether a compaction of `covers` can stand for its versions in the range
    (low, high]: it lies wholly inside the range, or wholly at or below its start (the
    selection then leaves it out). Otherwise the range cuts it."""
    inside = (low is None or min(covers) > low) and (high is None or max(covers) <= high)
    return inside or (low is not None and max(covers) <= low)


def unfold_compactions(
    conn: PgConnection,
    table: TableRef,
    commits: list[SnapshotCommit],
    low: int | None,
    high: int | None,
) -> list[SnapshotCommit]:
    """The commits a read of the range (low, high] needs, like Delta's time travel
    across OPTIMIZE: a compaction the range cuts is replaced by the commits it merged
    (their files stay until vacuum), the others stand as one commit of their newest
    version."""
    covers = covers_of(conn, table, [c.commit_id for c in commits])
    out: list[SnapshotCommit] = []
    for c in commits:
        cov = covers.get(c.commit_id)
        if cov and c.version is not None:
            # A copy-on-write overwrite covers the versions before it and holds its own
            # batch too: it stands for its own version, never for the newest it covers.
            cov = tuple(sorted({*cov, c.version}))
        if not cov:
            out.append(c)
        elif stands_whole(cov, low, high):
            out.append(dataclasses.replace(c, version=max(cov)))
        else:
            comp = compaction(conn, table, c.commit_id)
            replaced = unfold_compactions(conn, table, list(comp.replaced), low, high)
            check_replaced_files(comp, replaced, low, high)
            out.extend(replaced)
    return out


def check_replaced_files(
    comp: Compaction, replaced: list[SnapshotCommit], low: int | None, high: int | None
) -> None:
    """The files a read needs of the commits a compaction merged still exist; when
    `contest vacuum` removed them, one line saying so and which versions can be read."""
    needed = [
        f.path
        for c in replaced
        if c.version is None
        or ((low is None or c.version > low) and (high is None or c.version <= high))
        for f in c.files
    ]
    gone = []
    for path in needed:
        fs, local = filesystem(path)
        if fs.get_file_info(local).type.name == "NotFound":
            gone.append(path)
    covered = describe_versions(list(comp.covers))
    if not comp.replaced:
        raise ReadError(
            f"versions {covered} were compacted by commit {comp.commit_id}, and the snapshot "
            "it replaced is not in the metadata: versions inside it cannot be read apart"
        )
    if gone:
        when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(comp.timestamp_ms / 1000))
        since = (
            f"read as of version {max(comp.covers)} or later"
            if low is None
            else f"read the changes from version {max(comp.covers)} on"
        )
        raise ReadError(
            f"versions {covered} were compacted by commit {comp.commit_id} ({when}) and "
            "`contest vacuum` has since removed the files of the commits it merged "
            f"({len(gone)} of {len(needed)} needed, e.g. {gone[0].rsplit('/', 1)[-1]}): "
            f"versions inside it can no longer be read apart; {since}"
        )


def check_range(
    newest: int | None,
    *,
    oldest: int | None = None,
    as_of: int | None = None,
    from_version: int | None = None,
    to_version: int | None = None,
) -> None:
    """Version ranges that name versions the table has (Delta refuses a version past
    the latest too): an error naming the newest version otherwise."""
    if as_of is None and from_version is None and to_version is None:
        return
    if newest is None:
        raise ReadError("the table's commits carry no versions: read it without a version range")
    if as_of is not None and as_of > newest:
        raise ReadError(f"--as-of-version {as_of} is past the newest version, {newest}")
    if to_version is not None and to_version > newest:
        raise ReadError(f"--to-version {to_version} is past the newest version, {newest}")
    if oldest is not None:
        for flag, v in (("--as-of-version", as_of), ("--to-version", to_version)):
            if v is not None and v < oldest:
                raise ReadError(
                    f"{flag} {v} is before the oldest version, {oldest}: the table had nothing then"
                )
    if from_version is not None and to_version is not None and from_version >= to_version:
        raise ReadError(
            f"--from-version {from_version} --to-version {to_version} is an empty "
            "or reversed range: changes after A up to B need A < B"
        )
    if from_version is not None and from_version >= newest:
        raise ReadError(
            f"--from-version {from_version}: no changes after it, the newest version is {newest}"
        )


def change_span(cfg: Config, table: TableRef, versions: dict[str, int | None]) -> ChangeSpan | None:
    """A changes read (`--from-version`) of a table with a CDC column names each key's
    change (contest/read/changes.py, `net_changes`); other reads need none."""
    since = versions.get("from_version")
    if since is None or not table.cdc_column:
        return None
    return ChangeSpan(since, table.cdc_column, cfg.workload.op_values)


def chosen_commits(
    conn: PgConnection, cfg: Config, table: TableRef, versions: dict[str, int | None]
) -> tuple[list[SnapshotCommit], int, dict[str, str]]:
    """The commits a read applies, in order, after the checks every read makes (commits
    exist, operators fit, the version range exists, the snapshot is in version order);
    the partition version; the operators."""
    pversion, commits = head_snapshot(conn, table)
    if not commits:
        raise ReadError(
            f"table {table.namespace}.{table.name} has no commits: "
            "write to it first (contest write)"
        )
    ops = operators_for(table, cfg)
    validate_operators(table.schema, list(table.primary_keys), ops)
    ranged = any(v is not None for v in versions.values())
    if ranged:
        known = known_versions(commits, covers_of(conn, table, [c.commit_id for c in commits]))
        check_range(max(known, default=None), oldest=min(known, default=None), **versions)
    if (
        not ranged
        and cfg.read.require_merged
        and not in_version_order([Commit(c.commit_id, c.commit_op, c.version) for c in commits])
    ):
        raise ReadError(
            f"table {table.namespace}.{table.name}: commits finished out of version order and "
            f"the snapshot was not merged since: run `contest meta merge --table {table.name}` "
            "first (or --allow-unmerged to read in commit order)"
        )
    if not ranged:
        return commits, pversion, ops
    as_of, to_version = versions.get("as_of"), versions.get("to_version")
    high = as_of if as_of is not None else to_version
    unfolded = unfold_compactions(conn, table, commits, versions.get("from_version"), high)
    if change_span(cfg, table, versions) is not None:
        # Its files up to A tell which keys existed then: every commit up to B.
        return select_commits(unfolded, to_version=high), pversion, ops
    return select_commits(unfolded, **versions), pversion, ops


def checked_commits(
    conn: PgConnection, cfg: Config, table: TableRef, request: ReadRequest
) -> tuple[list[SnapshotCommit], int, dict[str, str], list[str]]:
    """The commits a read applies, after every check a read makes (`chosen_commits`,
    and the gaps): commits, partition version, operators, warnings. No Spark, no I/O
    beyond PostgreSQL: the Read job and the Python API (`contest.api`) both start here."""
    if request.latest_complete:
        request = dataclasses.replace(
            request, as_of=latest_complete(conn, table), latest_complete=False
        )
    warnings = []
    gaps = gaps_of(conn, table)
    # Versions a write planned that are not committed: holes below the newest, and
    # pending ones above it (a write whose last batches failed). A version range only
    # needs the versions up to its end. Checked before the snapshot's order, so a
    # missing batch is named rather than `contest meta merge` advised (a merge would
    # not bring it back); a table with no commits at all says so first.
    high = request.as_of if request.as_of is not None else request.to_version
    missing = [v for v in (*gaps.holes, *gaps.pending) if high is None or v <= high]
    if missing and not request.allow_gaps and (gaps.holes or head_snapshot(conn, table)[1]):
        raise ReadError(
            f"table {table.namespace}.{table.name}: {gaps.describe()}: the result "
            "would lack those batches; finish the write (contest write --resume) "
            "or read anyway with --allow-gaps"
        )
    chosen, pversion, ops = chosen_commits(conn, cfg, table, request.versions)
    if missing:
        warnings.append(f"table {table.namespace}.{table.name}: {gaps.describe()}")
    return chosen, pversion, ops, warnings


def plan_read(conn: PgConnection, cfg: Config, table: TableRef, request: ReadRequest) -> ReadPlan:
    """Everything a read needs, checked: commits, order, versions, gaps, operators,
    and the result folder. Runs before Spark starts."""
    chosen, pversion, ops, warnings = checked_commits(conn, cfg, table, request)
    out = output.prepare(
        request.out_dir, [t.path for t in catalog.list_tables(conn)], request.overwrite
    )
    covers = covers_of(conn, table, [c.commit_id for c in chosen])
    version = max(known_versions(chosen, covers), default=None)
    span = change_span(cfg, table, request.versions)
    return ReadPlan(table, chosen, pversion, ops, out, warnings, version, span)


def newest_complete(known: list[int]) -> int | None:
    """The newest version with every version from the oldest up to it present."""
    have = set(known)
    if not have:
        return None
    v = min(have)
    while v + 1 in have:
        v += 1
    return v


def latest_complete(conn: PgConnection, table: TableRef) -> int:
    """The version a read while a write lands takes: the newest one whose versions
    below are all committed (committed versions stay, so it reads the same later)."""
    _, commits = head_snapshot(conn, table)
    known = known_versions(commits, covers_of(conn, table, [c.commit_id for c in commits]))
    version = newest_complete(known)
    if version is None:
        raise ReadError(f"table {table.namespace}.{table.name} has no versioned commits yet")
    return version


def merged(
    spark: SparkSession, conn: PgConnection, cfg: Config, table: TableRef, **versions: int | None
) -> tuple[DataFrame, int, int]:
    """The merged table as a DataFrame (for further Spark work: the copy-on-write
    baseline, tests), after the same checks as a read."""
    chosen, pversion, ops = chosen_commits(conn, cfg, table, versions)
    span = change_span(cfg, table, versions)
    df = merged_dataframe(spark, table, chosen, ops, MergeTuning.of(cfg.read), span)
    return df, pversion, len(chosen)


def run_read(spark: SparkSession, cfg: Config, plan: ReadPlan) -> ReadReport:
    """Merge and write the result into the staging folder, then publish it."""
    started = time.perf_counter()
    table, staging = plan.table, str(plan.out.staging)
    try:
        if cfg.read.writer == "spark":
            df = merged_dataframe(
                spark, table, plan.commits, plan.operators, MergeTuning.of(cfg.read), plan.span
            )
            df.write.option("compression", cfg.read.codec).parquet(staging)
            rows = spark.read.parquet(staging).count()
        else:
            rows = write_merged(
                spark,
                table,
                plan.commits,
                plan.operators,
                staging,
                cfg.read.codec,
                MergeTuning.of(cfg.read),
                statistics=cfg.read.statistics,
                span=plan.span,
            )
        name = f"{table.namespace}.{table.name}"
        output.publish(
            plan.out, {"table": name, "rows": rows, "partition_version": plan.partition_version}
        )
    except BaseException:
        output.discard(plan.out)
        raise
    return ReadReport(
        name,
        str(plan.out.target),
        rows,
        len(plan.commits),
        plan.partition_version,
        time.perf_counter() - started,
        plan.operators,
        plan.version,
    )
