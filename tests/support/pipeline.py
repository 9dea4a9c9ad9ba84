"""Helpers for pipeline tests: write, merge and read for real, compare with the oracle."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from contest.config import Config, override
from contest.data.batches import discover
from contest.data.generator import generate
from contest.data.oracle import expected_rows
from contest.read.job import merged
from contest.write.job import WriteMode, run_write
from meta import catalog
from meta.merge import merge_table


def generated(factory, name: str, scale: float, seed: int) -> Path:
    """A module's data folder (`factory`: pytest's tmp_path_factory): the contest's
    batches at `scale`, generated once, the same for a seed."""
    out = factory.mktemp(name)
    generate(out, scale, seed=seed, progress=False)
    return out


def stream_config(cfg: Config, root: Path, settings: dict | None = None, **stream) -> Config:
    """A stream test's configuration: its source and checkpoint under `root`, drained
    (available-now), 2 buckets; `settings` (a workload's) beneath them, `stream` (the
    `stream.*` keys by their last part) over them."""
    return override(
        cfg,
        {
            **(settings or {}),
            "stream.source": str(root / "incoming"),
            "stream.checkpoint": str(root / "checkpoint"),
            "stream.trigger": "available-now",
            "table.hash_buckets": 2,
            **{f"stream.{k}": v for k, v in stream.items()},
        },
    )


def with_write(cfg: Config, **write) -> Config:
    return dataclasses.replace(cfg, write=dataclasses.replace(cfg.write, **write))


def write(spark, pg, cfg: Config, data: Path, table_dir: Path, **kw):
    """Write a table for a test (replacing one a previous run left under its name)."""
    kw.setdefault("mode", WriteMode.REPLACE)
    report = run_write(spark, pg, cfg, data, str(table_dir), table_dir.name, **kw)
    return report, catalog.get_table(pg, table_dir.name)


def read_rows(spark, pg, cfg: Config, table, **versions) -> list[dict]:
    df, _, _ = merged(spark, pg, cfg, table, **versions)
    return sorted((r.asDict() for r in df.collect()), key=lambda r: r["uuid"])


def merge_and_read(spark, pg, cfg, table) -> list[dict]:
    merge_table(pg, table)
    return read_rows(spark, pg, cfg, table)


def oracle(data: Path, versions: str | None = None, only: set[int] | None = None) -> list[dict]:
    batches = discover(data, versions)
    if only is not None:
        batches = [b for b in batches if b.index in only]
    return expected_rows(batches)
