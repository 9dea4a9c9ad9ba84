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
# table and the merged result.
DATA_BYTES, ORACLE_BYTES, TABLE_BYTES, RESULT_BYTES = 2.4e9, 1.2e9, 2.35e9, 1.6e9


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
