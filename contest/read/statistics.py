"""Which columns of the read's result files carry min/max statistics (read.statistics).

A module of its own, without imports, so the floor (contest/benchmarks/duckdb/floor.py) writes
its rows as the result is written without loading the read's machinery."""

from __future__ import annotations

from collections.abc import Sequence


def statistics_setting(statistics: str, keys: Sequence[str]) -> bool | list[str]:
    """pyarrow's `write_statistics` for read.statistics: the key columns' names for
    "key" (each result file is sorted by key: its min/max is what a reader prunes by),
    True for "all", False for "none"."""
    if statistics == "key":
        return list(keys)
    if statistics in ("all", "none"):
        return statistics == "all"
    raise ValueError(f"statistics {statistics!r}: choose key, all or none")
