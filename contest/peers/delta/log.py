"""Delta's transaction log of a path table, read: its versions (the `_delta_log` JSON
files, no JVM), the operation metrics of its history, and which of a version's files are
gone. The format's batch and compaction paths and its stream sink both ask it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def versions(table: Path) -> list[int]:
    """The versions of the log's JSON commit files (read without a JVM)."""
    log = Path(table) / "_delta_log"
    return [int(p.name[:20]) for p in log.glob("*.json") if p.name[:20].isdigit()]


def history_metrics(
    spark: Any, table: Path, after_version: int, keys: tuple[str, ...]
) -> dict[str, int]:
    """The named operation metrics of the commits after `after_version`, summed."""
    from delta.tables import DeltaTable  # deferred: slow to import

    out: dict[str, int] = {}
    for row in DeltaTable.forPath(spark, str(table)).history().collect():
        if int(row["version"]) <= after_version:
            continue
        for key, value in (row["operationMetrics"] or {}).items():
            if key in keys and str(value).isdigit():
                out[key] = out.get(key, 0) + int(value)
    return out


def missing(df: DataFrame) -> bool:
    """Whether a file a read would open is gone."""
    return bool(gone(df))


def gone(df: DataFrame) -> list[str]:
    """The files a read would open that are gone (a local table's; a remote one's are
    taken as there)."""
    out = []
    for uri in df.inputFiles():
        parsed = urlparse(uri)
        if parsed.scheme in ("", "file") and not Path(unquote(parsed.path)).exists():
            out.append(uri)
    return out


def oldest_readable(spark: Any, table: Path) -> int:
    """The oldest version whose files all remain (walking back from the newest)."""
    newest = version(spark, table)
    oldest = newest
    for v in range(newest - 1, -1, -1):
        if missing(spark.read.format("delta").option("versionAsOf", v).load(str(table))):
            break
        oldest = v
    return oldest


def version(spark: Any, table: Path) -> int:
    """The table's newest version (its history's head)."""

    from delta.tables import DeltaTable  # deferred: slow to import

    return int(DeltaTable.forPath(spark, str(table)).history(1).collect()[0]["version"])
