"""How a stock LakeSoul table stores a workload's columns: shared by the lakesoul-stock
engine's Write job, which adds the count columns, and its Read job, which folds them back
(contest/write/stock.py says why), so neither job imports the other's package; and how
that schema evolves batch by batch (a workload that adds or widens a column)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from contest.data import operators as registry
from contest.data.schema_changes import Change, changes
from contest.errors import SchemaEvolutionError


def counted(ops: Mapping[str, str]) -> dict[str, str]:
    """Summed column -> its count of non-NULL values, for every column whose operator's
    LakeSoul form needs one (the registry's `lakesoul_counted`: LakeSoul's SumAll)."""
    return {c: f"{c}_nonnull" for c, op in ops.items() if registry.get(op).lakesoul_counted}


def null_string_columns(ops: Mapping[str, str]) -> tuple[str, ...]:
    """Columns whose "null" strings are written as NULL (an operator that skips them)."""
    return tuple(c for c, op in ops.items() if registry.get(op).null_string)


COUNTED = counted(registry.CONTRACT)  # the contest's: requests -> requests_nonnull


def stored_schema(batch: pa.Schema, ops: Mapping[str, str]) -> pa.Schema:
    """A batch's columns as the stock table stores them: its own, then a count column for
    each summed column it has (a batch written before a column was added lacks both)."""
    own = {c: op for c, op in ops.items() if c in batch.names}
    return pa.schema(list(batch) + [pa.field(c, pa.int64()) for c in counted(own).values()])


SIMPLE_TYPES = {pa.int32(): "int", pa.int64(): "bigint", pa.string(): "string"}
ARROW_TYPES = {v: k for k, v in SIMPLE_TYPES.items()}


def _simple(schema: pa.Schema) -> list[tuple[str, str]]:
    out = []
    for f in schema:
        if f.type not in SIMPLE_TYPES:
            raise SchemaEvolutionError(
                f"column {f.name}: type {f.type} is not one the stock engine writes "
                "(string, int32, int64)"
            )
        out.append((f.name, SIMPLE_TYPES[f.type]))
    return out


def evolved(table: pa.Schema, batch: pa.Schema) -> tuple[pa.Schema, list[Change]]:
    """The table's schema once a batch of stored schema `batch` is committed, and what
    changed (contest/data/schema_changes.py): an added column at the end, a widened
    integer in its place; a narrower integer is written as the table's type (no
    change). A change that is neither: SchemaEvolutionError."""
    done = changes(dict(_simple(table)), dict(_simple(batch)))
    bad = [c for c in done if c.kind not in ("added", "widened")]
    if bad:
        raise SchemaEvolutionError(
            f"write.engine=lakesoul-stock: {bad[0]}: LakeSoul's reader casts integers wider only"
        )
    widened = {c.column: ARROW_TYPES[c.new] for c in done if c.kind == "widened"}
    fields = [pa.field(f.name, widened.get(f.name, f.type)) for f in table]
    fields += [batch.field(c.column) for c in done if c.kind == "added"]
    return pa.schema(fields), done


def schema_plan(
    table: pa.Schema | None, batches: Sequence[pa.Schema]
) -> list[tuple[pa.Schema, list[Change]]]:
    """The table's schema after each batch is committed, in commit (version) order, and
    what each batch changes: the first batch of a new table (`table` None) makes it as
    it is. Known before any batch is written, so concurrent writers write each batch in
    the types its commit will find."""
    out: list[tuple[pa.Schema, list[Change]]] = []
    current = table
    for batch in batches:
        done: list[Change] = []
        if current is None:
            current = batch
        else:
            current, done = evolved(current, batch)
        out.append((current, done))
    return out
