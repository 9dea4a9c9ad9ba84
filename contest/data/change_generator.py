"""What each generated batch of change data holds (the generator, contest/data/generator.py,
writes it): its keys in file order, each row's kind, and the payload columns its file has.

Two shapes, each a named workload:
- `cdc` (an op column): base-0 is a snapshot (every row an insert, Debezium's `r`), then the
  batches alternate. An odd batch holds every column: new keys inserted (`c`), keys an
  earlier batch deleted inserted again (`workload.reinsert_share` of its rows) and earlier
  keys deleted (`workload.delete_share`, `d`, the payload NULL: a delete needs only the key).
  An even batch holds the key, the op column and one to three payload columns, the ones
  its updates touch (`u`; the rows grouped by the set of columns they touch, one set a
  batch), beside its deletes. An update may hit a key deleted before: it starts the key
  afresh, as the contract says (the columns it lacks NULL).
- `multi-stream` (`workload.streams` = N): the payload columns dealt to N streams sharing the
  key; batch b is stream b mod N's, holding the key and that stream's columns, its keys
  new and updated as the workload's shares say (LakeSoul's multi-stream wide table).
Nothing here writes: pure functions of a seeded generator and the state the batches
before left (the keys deleted and not inserted again)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from contest.config import WorkloadConfig
from contest.data.changes import DELETE, INSERT, UPDATE, spelling
from contest.data.workload import contract_operators

# How many payload columns an update of `cdc` touches: one to three.
MIN_TOUCHED, MAX_TOUCHED = 1, 3


@dataclass(frozen=True)
class BatchPlan:
    """One batch: key indices in file order, each row's op value (None: no op column),
    the payload columns its file holds, and the new keys it brings (the next batch's
    first new key is after them)."""

    keys: np.ndarray
    ops: np.ndarray | None
    columns: tuple[str, ...]
    new_keys: int


@dataclass
class ChangeState:
    """What the batches before left: the keys deleted and not inserted again."""

    deleted: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))


def is_change_shape(w: WorkloadConfig) -> bool:
    """Whether the workload's batches are change data (row kinds or streams of columns)."""
    return bool(w.op_column or w.streams)


def stream_columns(w: WorkloadConfig) -> list[tuple[str, ...]]:
    """The payload columns dealt round-robin to `w.streams` streams, in the workload's order."""
    cols = list(contract_operators(w))
    n = max(1, w.streams)
    return [tuple(cols[i::n]) for i in range(n)]


def op_value(w: WorkloadConfig, kind: str, first: bool = True) -> str:
    """The op column's value of a kind in the workload's spelling (the registry's first
    for it; `first=False`: its last, Debezium's `r` for a snapshot's insert)."""
    values = [v for v, k in spelling(w.op_values).items() if k == kind]
    return values[0] if first else values[-1]


def plan_batch(
    b: int,
    rows: int,
    next_key: int,
    keys: np.ndarray,
    new_keys: int,
    rng: np.random.Generator,
    w: WorkloadConfig,
    state: ChangeState,
    draw_updates: Callable[[int], np.ndarray],
) -> BatchPlan:
    """Batch `b`'s plan. `keys`/`new_keys`: the upsert shape's keys of the batch and how
    many are new (the generator's `batch_keys`); `draw_updates(n)`: n earlier keys drawn
    by the workload's distribution, which an update batch of `cdc` takes."""
    every = tuple(contract_operators(w))
    columns = stream_columns(w)[b % len(stream_columns(w))] if w.streams else every
    if not w.op_column:
        return BatchPlan(keys, None, columns, new_keys)
    if b == 0:
        ops = np.full(len(keys), op_value(w, INSERT, first=False), dtype=object)
        return BatchPlan(keys, ops, columns, new_keys)
    deletes = math.floor(rows * w.delete_share + 1e-9)
    if b % 2 == 1:  # inserts, re-inserts and deletes: every column
        again = min(math.floor(rows * w.reinsert_share + 1e-9), len(state.deleted))
        fresh = rows - deletes - again
        back = rng.choice(state.deleted, again, replace=False) if again else state.deleted[:0]
        gone = rng.integers(0, next_key, deletes, dtype=np.int64)
        out = np.concatenate([np.arange(next_key, next_key + fresh, dtype=np.int64), back, gone])
        kinds = [op_value(w, INSERT)] * (fresh + again) + [op_value(w, DELETE)] * deletes
        state.deleted = np.union1d(np.setdiff1d(state.deleted, back), gone)
        return _shuffled(out, np.array(kinds, dtype=object), columns, fresh, rng)
    # Updates of one to three columns, and deletes.
    touched = rng.choice(len(every), rng.integers(MIN_TOUCHED, MAX_TOUCHED + 1), replace=False)
    cols = columns if w.streams else tuple(every[i] for i in sorted(touched))
    gone = rng.integers(0, next_key, deletes, dtype=np.int64)
    out = np.concatenate([draw_updates(rows - deletes), gone])
    kinds = [op_value(w, UPDATE)] * (rows - deletes) + [op_value(w, DELETE)] * deletes
    state.deleted = np.union1d(state.deleted, gone)
    return _shuffled(out, np.array(kinds, dtype=object), cols, 0, rng)


def _shuffled(
    keys: np.ndarray, ops: np.ndarray, columns: tuple[str, ...], new: int, rng: np.random.Generator
) -> BatchPlan:
    order = rng.permutation(len(keys))
    return BatchPlan(keys[order], ops[order], columns, new)
