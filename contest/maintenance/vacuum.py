"""`contest vacuum`: delete data files that no live commit names (Delta's VACUUM,
Iceberg's remove_orphan_files): left by killed writes, failed Spark tasks, rolled-back
or compacted commits, replaced tables.

Only files older than the retention window go, so a write in progress (its files are
written before they are committed) is never touched; a file a compaction replaced or
a rollback took out counts its age from then (Delta counts from a file's removal), so
time travel across a compaction lasts the window; the table's files are listed
before its live commits are read, so a commit that lands meanwhile is seen. Another
table's folder inside this one is never entered, a file another table's commits name
is never touched, and neither is a file no write of this table made (its name carries
none of the table's write tokens and no commit of the table names it: a user's file
called `part-*.parquet` stays; meta/tokens.py; README, "Failures").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from contest.errors import UsageError
from contest.infra.storage import filesystem
from contest.write.cleanup import inner_path, table_data_files
from meta.catalog import TableRef, neighbours
from meta.commits import live_files
from meta.compactions import retired_files
from meta.connection import PgConnection
from meta.tokens import ownership

DEFAULT_RETAIN_HOURS = 168.0  # Delta's default: a week


@dataclass
class VacuumReport:
    table: str
    dry_run: bool
    retain_hours: float
    live_files: int
    orphans: list[str] = field(default_factory=list)
    orphan_bytes: int = 0
    too_young: int = 0  # orphans inside the retention window, kept
    not_ours: int = 0  # data-file names no write of this table made: never deleted

    def to_dict(self) -> dict:
        return {
            "table": self.table,
            "dry_run": self.dry_run,
            "retain_hours": self.retain_hours,
            "live_files": self.live_files,
            "orphan_files": len(self.orphans),
            "orphan_bytes": self.orphan_bytes,
            "kept_too_young": self.too_young,
            "kept_not_written_by_the_table": self.not_ours,
            "deleted": [] if self.dry_run else self.orphans,
        }

    def render(self) -> str:
        verb = "would delete" if self.dry_run else "deleted"
        return (
            f"{self.table}: {verb} {len(self.orphans)} orphan file(s), "
            f"{self.orphan_bytes:,} bytes; {self.live_files} live file(s) kept"
            + (
                f"; {self.too_young} orphan(s) younger than {self.retain_hours:g} h kept"
                if self.too_young
                else ""
            )
            + (
                f"; {self.not_ours} file(s) the table's writes did not make kept"
                if self.not_ours
                else ""
            )
        )


def vacuum(
    conn: PgConnection,
    table: TableRef,
    retain_hours: float = DEFAULT_RETAIN_HOURS,
    dry_run: bool = False,
    now: float | None = None,
) -> VacuumReport:
    if retain_hours < 0:
        raise UsageError(f"--retain must be 0 or more hours, got {retain_hours:g}")
    fs, _ = filesystem(table.path)
    files = table_data_files(table.path, neighbours(conn, table.table_id, table.path))
    # Read again after listing (see above): a table or commit that came meanwhile counts.
    others = neighbours(conn, table.table_id, table.path)
    foreign = {inner_path(f) for f in others.files}
    folders = tuple(inner_path(d) + "/" for d in others.folders)
    files = [i for i in files if i.path not in foreign and not i.path.startswith(folders)]
    live = {inner_path(p) for p in live_files(conn, table)}
    owned = ownership(conn, table.table_id)
    retired = {inner_path(p): ms / 1000 for p, ms in retired_files(conn, table).items()}
    cutoff = (time.time() if now is None else now) - retain_hours * 3600
    report = VacuumReport(f"{table.namespace}.{table.name}", dry_run, retain_hours, 0)
    for info in files:
        if info.path in live:
            report.live_files += 1
            continue
        if not owned.owns(info.path):
            report.not_ours += 1
            continue
        mtime = info.mtime.timestamp() if info.mtime is not None else 0.0
        if max(mtime, retired.get(info.path, 0.0)) > cutoff:
            report.too_young += 1
            continue
        report.orphans.append(info.path)
        report.orphan_bytes += info.size or 0
    if not dry_run:
        for path in report.orphans:
            try:
                fs.delete_file(path)
            except FileNotFoundError:
                pass
    return report
