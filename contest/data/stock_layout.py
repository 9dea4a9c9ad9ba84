"""How a stock LakeSoul table stores the contract's columns: shared by the lakesoul-stock
engine's Write job, which adds the count columns, and its Read job, which folds them back
(contest/write/stock.py says why), so neither job imports the other's package."""

from __future__ import annotations

COUNTED = {"requests": "requests_nonnull"}  # summed column -> its count of non-NULL values
