"""Helpers for pipeline tests: write, merge and read for real, compare with the oracle."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from contest.config import Config
from contest.data.batches import discover
from contest.data.oracle import expected_rows
from contest.read.job import merged
from contest.write.job import WriteMode, run_write
from meta import catalog
from meta.merge import merge_table


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
