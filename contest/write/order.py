"""The order a write task puts its rows in: by bucket, then primary key, then arrival
(a stable sort: rows of one key keep their order, or their shuffle position).

Two ways, one answer (`write.sort`):
- arrow:   pyarrow's sort of the key strings, then a stable partition by bucket.
- uuid128: when the key is one string column and every key is a canonical lowercase
           UUID, its 128 bits as two uint64 words sort exactly as the strings do
           (contest/data/uuid_keys.py), so numpy sorts integers instead of strings; any
           other key falls back to arrow.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from contest.data.uuid_keys import uuid_order, uuid_words


def bucket_key_order(
    keys: pa.Table,
    key_cols: Sequence[str],
    bucket_ids: np.ndarray,
    pos: np.ndarray | None = None,
    method: str = "arrow",
    words: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Row indices by bucket, then key, then `pos`, then arrival (`words`: the keys'
    uuid_words when the caller has them already)."""
    if (
        method == "uuid128"
        and len(key_cols) == 1
        and (len(bucket_ids) == 0 or bucket_ids.min() >= 0)
    ):
        if words is None:
            words = uuid_words(keys.column(key_cols[0]))
        if words is not None:
            return uuid_order(bucket_ids, *words, pos)
    # One stable sort by key, then a stable partition by bucket: cheaper than one
    # sort on (bucket, key, position).
    sort_keys = [(k, "ascending") for k in key_cols]
    table = keys.select(list(key_cols))
    if pos is not None:
        table = table.append_column("__pos", pa.array(pos))
        sort_keys.append(("__pos", "ascending"))
    by_key = pc.sort_indices(table, sort_keys=sort_keys).to_numpy()
    return by_key[np.argsort(bucket_ids[by_key], kind="stable")]
