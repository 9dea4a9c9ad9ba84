"""How a stock LakeSoul table stores a workload's columns: shared by the lakesoul-stock
engine's Write job, which adds the count columns, and its Read job, which folds them back
(contest/write/stock.py says why), so neither job imports the other's package."""

from __future__ import annotations

from collections.abc import Mapping

from contest.data import operators as registry


def counted(ops: Mapping[str, str]) -> dict[str, str]:
    """Summed column -> its count of non-NULL values, for every column whose operator's
    LakeSoul form needs one (the registry's `lakesoul_counted`: LakeSoul's SumAll)."""
    return {c: f"{c}_nonnull" for c, op in ops.items() if registry.get(op).lakesoul_counted}


def null_string_columns(ops: Mapping[str, str]) -> tuple[str, ...]:
    """Columns whose "null" strings are written as NULL (an operator that skips them)."""
    return tuple(c for c, op in ops.items() if registry.get(op).null_string)


COUNTED = counted(registry.CONTRACT)  # the contest's: requests -> requests_nonnull
