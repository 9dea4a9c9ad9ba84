"""A batch's repeated keys reduced to one row per key, outside the format: the harness's
numpy merge (contest/read/operators.py `merge_rows`, the operator registry's kernels),
rows in file order. Used by a native library that merges one source row per key but
has no engine of its own a batch can be reduced in (its results row says so)."""

from __future__ import annotations

import pyarrow as pa

from contest.config import Config
from contest.data.workload import contract_operators
from contest.read.operators import merge_rows
from contest.write.cow import KEY


def collapsed(rows: pa.Table, cfg: Config) -> pa.Table:
    """One row per key: each column by its operator over the key's rows in file order."""
    ops = {c: op for c, op in contract_operators(cfg.workload).items() if c in rows.column_names}
    return merge_rows(rows, [KEY], ops)


def folded(current: pa.Table, rows: pa.Table, cfg: Config) -> pa.Table:
    """The batch's keys after the upsert: each key's current merged row (if any) folded
    with the batch's rows, in that order, by the operators (every operator here is a
    left fold, so the current row stands for every row before the batch)."""
    if current.num_rows == 0:
        return collapsed(rows, cfg)
    both = pa.concat_tables([current.select(rows.column_names).cast(rows.schema), rows])
    return collapsed(both, cfg)
