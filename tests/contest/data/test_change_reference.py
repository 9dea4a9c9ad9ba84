"""The oracle's change path against a reference written here in plain Python: random
small change batches (deletes, re-inserts, files lacking columns, NULLs and "null"
strings, a composite int32 + string key, versions out of file order) fold to the same
rows. The reference applies rows one at a time, the rule as the README states it."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.data import operators as ops
from contest.data.batches import discover
from contest.data.changes import ROW_KINDS, Changes
from contest.data.oracle import expected_rows

KEY = ("tenant", "id")
OPERATORS = {
    "ip": ops.USE_LAST_NOT_NULL,
    "requests": ops.SUM_ALL,
    "name": ops.USE_LAST_NOT_NULL_NOR_NULL_STRING,
    "note": ops.USE_LAST,
}
TYPES = {
    "tenant": pa.string(),
    "id": pa.int32(),
    "op": pa.string(),
    "ip": pa.string(),
    "requests": pa.int64(),
    "name": pa.string(),
    "note": pa.string(),
}


def _last(values, keep=lambda v: True):
    kept = [v for v in values if keep(v)]
    return kept[-1] if kept else None


def _sum(values):
    numbers = [v for v in values if v is not None]
    return sum(numbers) if numbers else None


FOLD = {
    ops.USE_LAST: lambda vs: vs[-1] if vs else None,
    ops.USE_LAST_NOT_NULL: lambda vs: _last(vs, lambda v: v is not None),
    ops.SUM_ALL: _sum,
    ops.USE_LAST_NOT_NULL_NOR_NULL_STRING: lambda vs: _last(vs, lambda v: v not in (None, "null")),
}


def reference(files, versions, spelling):
    """Every row in (version, position) order: a delete forgets the key; any other row
    adds, to each column its file holds, its value; a key's columns fold what they hold."""
    order = sorted(
        (versions[i], pos, cols, r)
        for i, (cols, rows) in enumerate(files)
        for pos, r in enumerate(rows)
    )
    live: dict[tuple, dict[str, list]] = {}
    for _, _, cols, r in order:
        k = tuple(r[c] for c in KEY)
        if ROW_KINDS[spelling][r["op"]] == "delete":
            live.pop(k, None)
            continue
        folded = live.setdefault(k, {c: [] for c in OPERATORS})
        for c in OPERATORS:
            if c in cols:
                folded[c].append(r[c])
    return [
        {**dict(zip(KEY, k, strict=True)), **{c: FOLD[OPERATORS[c]](vs[c]) for c in OPERATORS}}
        for k, vs in sorted(live.items())
    ]


def _value(rnd, col):
    if rnd.random() < 0.2:
        return None
    if col == "requests":
        return rnd.randint(-3, 9)
    if col == "name" and rnd.random() < 0.3:
        return "null"
    return rnd.choice("xyz")


def random_files(rnd, spelling):
    """3-4 files of 1-8 rows, each holding the key, the op and some payload columns."""
    kinds = list(ROW_KINDS[spelling])
    files = []
    for _ in range(rnd.randint(3, 4)):
        cols = [c for c in OPERATORS if rnd.random() < 0.6]
        rows = []
        for _ in range(rnd.randint(1, 8)):
            r = {"tenant": rnd.choice("ab"), "id": rnd.randint(1, 3), "op": rnd.choice(kinds)}
            rows.append({**r, **{c: _value(rnd, c) for c in cols}})
        files.append((cols, rows))
    return files


@pytest.mark.parametrize("seed", range(12))
def test_the_oracle_folds_random_changes_as_the_reference_does(seed, tmp_path):
    rnd = random.Random(seed)
    spelling = rnd.choice(sorted(ROW_KINDS))
    files = random_files(rnd, spelling)
    versions = list(range(len(files)))
    rnd.shuffle(versions)
    for i, (cols, rows) in enumerate(files):
        schema = pa.schema([(c, TYPES[c]) for c in (*KEY, "op", *cols)])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / f"base-{i}.parquet")
    spec = ",".join(f"{i}={v}" for i, v in enumerate(versions))
    batches = discover(tmp_path, spec, schema=None)
    got = expected_rows(batches, OPERATORS, Changes(KEY, "op", spelling))
    assert got == reference(files, versions, spelling)


def test_the_reference_itself_on_a_case_worked_by_hand():
    first = {"tenant": "a", "id": 1, "op": "insert", "requests": 2, "note": "n"}
    files = [
        (["requests", "note"], [first]),
        ([], [{"tenant": "a", "id": 1, "op": "delete"}]),
        (["requests"], [{"tenant": "a", "id": 1, "op": "update", "requests": None}]),
    ]
    # Re-inserted by an update whose file lacks note, its requests NULL: every column NULL.
    assert reference(files, [0, 1, 2], "lakesoul") == [
        {"tenant": "a", "id": 1, "ip": None, "requests": None, "name": None, "note": None}
    ]
    # The delete last: the key is absent.
    assert reference(files, [0, 2, 1], "lakesoul") == []
