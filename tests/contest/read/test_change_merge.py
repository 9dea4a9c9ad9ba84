"""The change merge's pieces on small tables: key codes of any key type, the rows after
each key's last delete, absent columns told from NULLs, the switch to the change merge."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.data import operators as ops
from contest.errors import RunError
from contest.read.changes import (
    after_last_delete,
    key_codes,
    merge_change_bucket,
    merge_changes,
)
from contest.read.files import needs_change_merge
from meta.catalog import TableRef
from meta.commits import DataFile, SnapshotCommit


def test_key_codes_tell_composite_and_binary_keys_apart():
    t = pa.table(
        {
            "a": pa.array([b"\xff\x00", b"\xff\x00", b"\x00", b"\xff\x00"], pa.binary()),
            "b": pa.array([1, 2, 1, 1], pa.int32()),
        }
    )
    codes = key_codes(t, ["a", "b"])
    assert codes[0] == codes[3]
    assert len({codes[0], codes[1], codes[2]}) == 3
    assert len(set(key_codes(t, ["a"]).tolist())) == 2


def test_rows_after_the_last_delete_of_their_key():
    codes = np.array([0, 1, 0, 0, 1, 0, 2])
    deletes = np.array([False, False, True, False, True, False, False])
    # key 0: rows 0, 2(del), 3, 5 -> 3 and 5 live; key 1: its last row deletes it.
    assert after_last_delete(codes, deletes).tolist() == [
        False, False, False, True, False, True, True
    ]  # fmt: skip
    assert after_last_delete(codes, np.zeros(7, bool)).all()


def test_merge_changes_drops_tombstones_and_skips_absent_columns_where_null_overwrites():
    t = pa.table(
        {
            "k": ["a", "a", "b", "a", "b", "c"],
            "n": pa.array([1, 2, 3, 4, None, 9], pa.int64()),
            "u": ["x", "y", "z", None, "w", "v"],
            "op": ["insert", "insert", "insert", "update", "update", "delete"],
        }
    )
    # u is absent from the file of rows 3-4 (its NULL there is no value), held elsewhere.
    held = {"u": np.array([True, True, True, False, False, True])}
    got = merge_changes(t, held, ["k"], {"n": ops.SUM_ALL, "u": ops.USE_LAST}, "op")
    assert sorted(got.to_pylist(), key=lambda r: r["k"]) == [
        {"k": "a", "n": 7, "u": "y"},
        {"k": "b", "n": 3, "u": "z"},
    ]
    # Held everywhere, the NULL overwrites under UseLast.
    got = merge_changes(t, {}, ["k"], {"n": ops.SUM_ALL, "u": ops.USE_LAST}, "op")
    assert {r["k"]: r["u"] for r in got.to_pylist()} == {"a": None, "b": "w"}


def _table(keys, schema, cdc=""):
    return TableRef("t1", "t", "default", "file:///t", keys, 4, schema, cdc)


def _commit(*columns):
    files = tuple(DataFile(f"file:///t/{i}", 1, c, 0) for i, c in enumerate(columns))
    return SnapshotCommit("c", "MergeCommit", files, 0)


def test_the_change_merge_only_when_the_table_needs_it():
    schema = pa.schema([("uuid", pa.string()), ("ip", pa.string()), ("note", pa.string())])
    contest = {"ip": ops.USE_LAST_NOT_NULL, "note": ops.USE_LAST}
    every = ("uuid", "ip", "note")
    assert not needs_change_merge(_table(("uuid",), schema), [_commit(every)], contest)
    assert needs_change_merge(_table(("uuid",), schema, "op"), [_commit(every)], contest)
    assert needs_change_merge(_table(("uuid", "ip"), schema), [_commit(every)], contest)
    # A UseLast column absent after a file held it; absent only before (schema
    # evolution) or under an operator that skips NULLs, the plain merge agrees.
    later = [_commit(every), _commit(("uuid", "ip"))]
    assert needs_change_merge(_table(("uuid",), schema), later, contest)
    earlier = [_commit(("uuid", "ip")), _commit(every)]
    assert not needs_change_merge(_table(("uuid",), schema), earlier, contest)
    skipping = {**contest, "note": ops.USE_LAST_NOT_NULL}
    assert not needs_change_merge(_table(("uuid",), schema), later, skipping)


def test_a_change_bucket_read_per_file_columns_and_a_damaged_file_in_one_line(tmp_path):
    schema = pa.schema([("k", pa.int64()), ("u", pa.string())])
    pq.write_table(pa.table({"k": [1, 2], "u": ["x", "y"], "op": ["insert"] * 2}), tmp_path / "a")
    pq.write_table(pa.table({"k": [1, 2], "op": ["update", "delete"]}), tmp_path / "b")
    files = [(str(tmp_path / "a"), 0), (str(tmp_path / "b"), 1)]
    got = merge_change_bucket(files, schema, ["k"], {"u": ops.USE_LAST}, "op")
    assert got.to_pylist() == [{"k": 1, "u": "x"}]  # b lacks u: 1 keeps x; 2 deleted
    (tmp_path / "c").write_bytes(b"PAR1 not parquet")
    with pytest.raises(RunError, match=r"committed data file .*/c cannot be read") as err:
        merge_change_bucket([*files, (str(tmp_path / "c"), 2)], schema, ["k"], {}, "op")
    assert "\n" not in str(err.value)
