"""The files a write leaves that no commit will name, found and deleted: a failed
write's (by its token, once its Spark tasks have stopped), a replaced table's (only those
it owns, never another table's), and a table folder's data files listed for `contest
vacuum`. Deleting only what the project wrote is this module's one rule."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyarrow.fs as pafs

from contest.infra.storage import filesystem
from meta.catalog import Neighbours
from meta.tokens import Ownership

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def is_data_file(name: str) -> bool:
    """A table data file as LakeSoul names them: `part-<id>_<bucket:04>.<ext>`."""
    return name.startswith("part-") and name.endswith((".parquet", ".vortex"))


def inner_path(uri: str) -> str:
    """A URI's path inside its filesystem (what pyarrow lists): `file:///a` -> `/a`,
    `s3://b/k` -> `b/k`."""
    return uri.split("://", 1)[1] if "://" in uri else uri


def table_data_files(table_path: str, others: Neighbours | None = None) -> list:
    """The data files under a table's folder (pyarrow FileInfo), never descending into
    another table's folder nor listing a file another table's commits name."""
    others = others or Neighbours()
    skip = {inner_path(f) for f in others.folders}
    foreign = {inner_path(f) for f in others.files}
    fs, base = filesystem(table_path)
    out, todo = [], [base]
    while todo:
        folder = todo.pop()
        try:
            infos = fs.get_file_info(pafs.FileSelector(folder, recursive=False))
        except FileNotFoundError:
            continue
        for info in infos:
            if info.type == pafs.FileType.Directory and info.path.rstrip("/") not in skip:
                todo.append(info.path)
            elif (
                info.type == pafs.FileType.File
                and is_data_file(info.base_name)
                and info.path not in foreign
            ):
                out.append(info)
    return out


def delete_table_files(
    table_path: str, owned: Ownership, others: Neighbours | None = None
) -> tuple[int, list[str]]:
    """Delete the data files of a replaced table's folder that are the table's (`owned`:
    named by its commits or carrying its write tokens; meta/tokens.py), and the folder
    when it is then empty; never those of `others` (other tables' folders and files) nor
    any file the project did not write. Returns how many were deleted and the files
    that were kept."""
    fs, base = filesystem(table_path)
    removed = 0
    for info in table_data_files(table_path, others):
        if not owned.owns(info.path):
            continue
        try:
            fs.delete_file(info.path)
            removed += 1
        except FileNotFoundError:
            pass
    try:
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=True))
    except FileNotFoundError:
        return removed, []
    kept = [i.path for i in infos if i.type == pafs.FileType.File]
    if not kept and not (others and others.folders):
        try:
            fs.delete_dir(base)
        except (FileNotFoundError, OSError):
            pass
    return removed, kept


def delete_written(table_path: str, token: str) -> int:
    """Delete the files a failed write (its `token`) left in the table's own folder:
    those of its tasks that finished before another failed, or were still running.
    Only names this write generated (`part-<token>...`), never below the folder."""
    if len(token) < 8:
        raise ValueError("a write token has 8 letters")
    fs, base = filesystem(table_path)
    try:
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=False))
    except FileNotFoundError:
        return 0
    removed = 0
    for info in infos:
        if info.type == pafs.FileType.File and info.base_name.startswith(f"part-{token}"):
            try:
                fs.delete_file(info.path)
                removed += 1
            except FileNotFoundError:
                pass
    return removed


def wait_for_tasks(spark: SparkSession, group: str, timeout_s: float = 30.0) -> None:
    """Until no task of the Spark job group runs: when one task fails its job, Spark
    kills the others without waiting for them, and they may still be writing."""
    tracker = spark.sparkContext.statusTracker()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        active = 0
        for job in tracker.getJobIdsForGroup(group):
            info = tracker.getJobInfo(job)
            for stage in info.stageIds if info is not None else ():
                st = tracker.getStageInfo(stage)
                active += st.numActiveTasks if st is not None else 0
        if active == 0:
            return
        time.sleep(0.2)


def delete_files(paths: Sequence[str]) -> None:
    """Remove written files that will never be committed."""
    for path in paths:
        fs, local = filesystem(path)
        try:
            fs.delete_file(local)
        except FileNotFoundError:
            pass
