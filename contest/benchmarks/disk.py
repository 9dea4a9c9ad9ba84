"""What a scale holds on the work folder's disk, for the benchmarks that go to scale 10
on one machine (`contest bench scale`, `contest bench duckdb`): estimated before any work,
so a sitting that cannot fit is refused (or planned leaner) up front, not found out by a
full disk twenty minutes into a write."""

from __future__ import annotations

import shutil

from contest.config import Config
from contest.errors import UsageError
from contest.infra.storage import is_object_store

# Bytes per unit of scale, measured at scale 1: the batches, the oracle's result, the
# table and the merged result; and what the check may spill (DuckDB's temporary files,
# a key range's join at a time: at scale 10 the check without the table's 23 GB beside
# it still filled the disk once, so this is an upper bound, not a measurement).
DATA_BYTES, ORACLE_BYTES, TABLE_BYTES, RESULT_BYTES = 2.4e9, 1.2e9, 2.35e9, 1.6e9
CHECK_SPILL_BYTES = 1.0e9


def free_bytes(cfg: Config) -> float | None:
    """Free bytes under the work folder (its nearest existing parent); None when the
    table or result lives in an object store (the local estimate does not apply)."""
    if any(is_object_store(p) for p in (cfg.tables_dir, cfg.result_dir)):
        return None
    where = cfg.work_path.absolute()
    while not where.exists():
        where = where.parent
    return float(shutil.disk_usage(where).free)


def refuse(scale: float, need: float, free: float, what: str, hint: str = "") -> UsageError:
    return UsageError(
        f"scale {scale:g} needs about {need / 1e9:.0f} GB free ({what}); "
        f"{free / 1e9:.0f} GB free{hint}"
    )


def disk_needed(scale: float, cached: bool, keep_data: bool, keep_table: bool = False) -> float:
    """Bytes a scale adds to the disk at its peak: batches, oracle's result and table side
    by side while the write runs (the batches then go, unless kept, before the read
    writes its result; the table's files then go, unless `keep_table`, before the
    check spills)."""
    data = 0.0 if cached else DATA_BYTES
    kept = data if keep_data else 0.0
    during_write = data + ORACLE_BYTES + TABLE_BYTES
    during_read = kept + ORACLE_BYTES + TABLE_BYTES + RESULT_BYTES
    during_check = kept + ORACLE_BYTES + RESULT_BYTES + CHECK_SPILL_BYTES
    if keep_table:
        during_check += TABLE_BYTES
    return scale * max(during_write, during_read, during_check)


def check_disk(cfg: Config, scale: float, cached: bool, keep_data: bool) -> None:
    """A scale that cannot fit is refused before it generates anything (scale 10 needs
    about 60 GB)."""
    need, free = disk_needed(scale, cached, keep_data, keep_table=keep_data), free_bytes(cfg)
    if free is not None and free < need:
        raise refuse(
            scale,
            need,
            free,
            f"under {cfg.work_path}: batches, oracle's result and table side by side",
        )
