"""The expected answer of a changes read of change data (`--from-version A
--to-version B` on a table with an op column), from the oracle's own results: the
table as of A, as of B, and the batches between merged alone (what a changes read of
upserts returns). A key live at B with a batch between: its merged row of those
batches, op insert if it was not live at A, update if it was; a key live at A and not
at B: op delete, payload NULL; a key inserted and deleted between: absent. The op
column (`rules.op_column`) last, in the configured spelling."""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data.batches import Batch
from contest.data.changes import DELETE, INSERT, UPDATE, Changes, spelled
from contest.data.oracle import Budget, expected_result, expected_rows


def changed_rows(
    at_a: Sequence[dict],
    at_b: Sequence[dict],
    between: Sequence[dict],
    rules: Changes,
) -> list[dict]:
    """The changes read from the three results (pure: rows as dicts), sorted by key."""
    names = spelled(rules.op_values)

    def key(r: Mapping) -> tuple:
        return tuple(r[k] for k in rules.key)

    was = {key(r) for r in at_a}
    now = {key(r) for r in at_b}
    out = [
        {**r, rules.op_column: names[UPDATE if key(r) in was else INSERT]}
        for r in between
        if key(r) in now
    ]
    columns = list(between[0]) if between else list(at_a[0]) if at_a else list(rules.key)
    out += [
        {
            **{c: (r[c] if c in rules.key else None) for c in columns},
            rules.op_column: names[DELETE],
        }
        for r in at_a
        if key(r) not in now
    ]
    return sorted(out, key=key)


def expected_changes(
    batches: Sequence[Batch],
    low: int,
    high: int | None,
    operators: Mapping[str, str] | None,
    rules: Changes,
) -> list[dict]:
    """The changes read after version `low` up to `high` (None: the newest)."""
    upto_b = [b for b in batches if high is None or b.version <= high]
    at_a = [b for b in upto_b if b.version <= low]
    between = [b for b in upto_b if b.version > low]
    return changed_rows(
        expected_rows(at_a, operators, rules) if at_a else [],
        expected_rows(upto_b, operators, rules),
        expected_rows(between, operators, rules),
        rules,
    )


def write_expected_changes(
    batches: Sequence[Batch],
    low: int,
    high: int | None,
    out_path: str | Path,
    operators: Mapping[str, str] | None,
    rules: Changes,
    budget: Budget | None = None,
) -> Path:
    """The changes read's expected file for `contest check --from-version`: the
    oracle's file as of B typed and keyed (its schema, the key recorded for the
    checker), the op column appended. In memory: for small tables."""
    upto_b = [b for b in batches if high is None or b.version <= high]
    out = Path(out_path)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        at_b = expected_result(
            upto_b, Path(tmp) / "b.parquet", budget=budget, operators=operators, changes=rules
        )
        schema = pq.read_schema(at_b.path)
    schema = schema.append(pa.field(rules.op_column, pa.string()))
    rows = expected_changes(batches, low, high, operators, rules)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), out)
    return out
