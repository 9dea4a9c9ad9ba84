"""Generated batches and the oracle's results, cached in the work folder: what every
evaluation, bench and workload run reuses instead of generating or merging again."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

from contest.config import Config
from contest.data.batches import discover
from contest.data.changes import Changes, changes_of
from contest.data.generator import generate
from contest.data.oracle import config_budget, expected_result
from contest.data.workload import cache_label, contract_operators, schema_of_batch
from contest.infra.storage import is_object_store


def data_folder(cfg: Config, scale: float, seed: int) -> Path:
    """Where generated data of the configured workload is cached (the contest's shape keeps
    the folder names it had before workloads)."""
    label = cache_label(cfg.workload)
    return cfg.work_path / "data" / f"{label + '-' if label else ''}scale-{scale:g}-seed-{seed}"


def cached_data(cfg: Config, scale: float, seed: int, say: Callable[[str], None]) -> Path:
    """Generated data of the configured workload, kept per workload, scale and seed (the
    contest's shape keeps the folder names it had before workloads)."""
    folder = data_folder(cfg, scale, seed)
    marker = folder / ".complete"
    if not marker.exists():
        say(f"generating scale {scale:g} data of workload {cfg.workload.name} into {folder}")
        generate(folder, scale, seed, workload=cfg.workload)
        marker.write_text("ok\n")
    return folder


def change_ident(rules: Changes) -> str:
    """The change rules' part of an oracle cache key: '' for upserts of `uuid` (the
    results cached before change data keep their keys)."""
    if rules == Changes():
        return ""
    return json.dumps(dataclasses.asdict(rules), sort_keys=True)


def cached_expected(
    cfg: Config, data: Path | str, versions: str, say: Callable[[str], None]
) -> Path:
    """The oracle's result for a data folder, kept per folder, files, versions and merge
    operators (a workload's extra columns have theirs)."""
    batches = discover(data, versions or None, schema_of_batch(cfg.workload))
    ops = contract_operators(cfg.workload)
    where = str(data) if is_object_store(data) else str(Path(data).resolve())
    ident = json.dumps([where, versions] + [[b.name, b.bytes, b.mtime_ns] for b in batches])
    if cfg.workload.columns:  # the contest's columns keep the keys they had
        ident += json.dumps(ops)
    ident += change_ident(changes_of(cfg))
    key = hashlib.sha256(ident.encode()).hexdigest()[:16]
    out = cfg.work_path / "oracle" / f"{key}.parquet"
    if not out.exists():
        say("computing the expected result (oracle)")
        expected_result(
            batches, out, budget=config_budget(cfg.oracle), operators=ops, changes=changes_of(cfg)
        )
    return out
