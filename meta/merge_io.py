"""The statements of `contest meta merge`, set-based, for histories of millions of
commits (results/meta_replay.md).

A partition's live commits come out in one COPY (the checkpoint's prefix unnested, the
rest joined with data_commit_info and contest_commit_version in one pass), and the
merged snapshot is built inside the server from the head's own array and a permutation:
no list of commit ids is sent back as a parameter. All of it runs in the caller's
transaction, so a merge that dies leaves nothing behind.
"""

from __future__ import annotations

import io
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from meta.errors import MetaError
from meta.replay import is_permutation

# The join of a snapshot with the commit tables. PostgreSQL estimates unnest() at 10
# rows and picks one index lookup per commit: right for short snapshots, 10 s for a
# million. A hash join reads the partition's whole history once instead, so it is
# taken when the snapshot is long and the history not much longer (`hash_join_pays`).
# The memory keeps its hash tables (about 60 MB per million commits each) and the merged
# snapshot's sort in memory; JIT only adds compile time here.
LARGE_SNAPSHOT_SETTINGS = (("work_mem", "256MB"), ("jit", "off"))
HASH_JOIN_MIN_LIVE = 20_000  # shorter snapshots: lookups take well under a second
LOOKUPS_PER_SCANNED_ROW = 8  # an index lookup costs about as much as hashing 8 rows


def hash_join_pays(live: int, history: int) -> bool:
    """One pass over the partition's `history` commit rows beats `live` index lookups."""
    return live >= HASH_JOIN_MIN_LIVE and history <= LOOKUPS_PER_SCANNED_ROW * live


ROW_COLUMNS = ("pos", "commit_id", "commit_op", "version", "found")
ROW_TYPES = {
    "pos": pa.int64(),
    "commit_id": pa.string(),
    "commit_op": pa.string(),
    "version": pa.int64(),
    "found": pa.int8(),
}


@dataclass(frozen=True)
class Head:
    """A partition's newest version, and how much of it the merge checkpoint holds."""

    version: int
    live: int  # commits in its snapshot
    checkpoint_version: int | None
    checkpoint_matches: bool  # the checkpoint is a prefix of the snapshot (or all of it)
    covered: int  # leading snapshot entries the checkpoint holds (0 unless it matches)


def read_head(cur: Any, table_id: str, desc: str) -> Head | None:
    """The head version and its size, and the checkpoint when it is a prefix of the
    head's snapshot (compared in the server)."""
    cur.execute(
        "SELECT h.version, coalesce(cardinality(h.snapshot), 0), k.partition_version, "
        "CASE WHEN k.commit_ids = h.snapshot[1:cardinality(k.commit_ids)] "
        "THEN cardinality(k.commit_ids) END "
        "FROM (SELECT version, snapshot FROM partition_info WHERE table_id = %(tid)s "
        "AND partition_desc = %(desc)s ORDER BY version DESC LIMIT 1) h "
        "LEFT JOIN contest_merge_checkpoint k "
        "ON k.table_id = %(tid)s AND k.partition_desc = %(desc)s",
        {"tid": table_id, "desc": desc},
    )
    row = cur.fetchone()
    if row is None:
        return None
    return Head(int(row[0]), int(row[1]), row[2], row[3] is not None, int(row[3] or 0))


def _set_local(cur: Any, settings: tuple[tuple[str, str], ...]) -> None:
    for name, value in settings:
        cur.execute("SELECT set_config(%s, %s, true)", (name, value))  # this transaction only


def _choose_join(cur: Any, table_id: str, desc: str, live: int) -> None:
    """Hash joins for this transaction when they pay: the size of the whole commit table
    (free, from the statistics) settles most cases, else the partition's row count."""
    if live < HASH_JOIN_MIN_LIVE:
        return
    _set_local(cur, LARGE_SNAPSHOT_SETTINGS)
    cur.execute("SELECT reltuples FROM pg_class WHERE oid = 'data_commit_info'::regclass")
    history = float(cur.fetchone()[0])
    if history < 0 or not hash_join_pays(live, int(history)):
        cur.execute(
            "SELECT count(*) FROM data_commit_info WHERE table_id = %s AND partition_desc = %s",
            (table_id, desc),
        )
        history = int(cur.fetchone()[0])
    if hash_join_pays(live, int(history)):
        _set_local(cur, (("enable_nestloop", "off"),))


def _copy_out(cur: Any, query: str, params: dict) -> bytes:
    buf = io.BytesIO()
    cur.copy_expert(
        "COPY (" + cur.mogrify(query, params).decode() + ") TO STDOUT WITH (FORMAT csv)", buf
    )
    return buf.getvalue()


def _parse(data: bytes, columns: tuple[str, ...], types: dict[str, pa.DataType]) -> pa.Table:
    return pacsv.read_csv(
        io.BytesIO(data),
        read_options=pacsv.ReadOptions(column_names=list(columns)),
        convert_options=pacsv.ConvertOptions(
            column_types=types,
            null_values=[""],  # COPY's CSV: NULL is an empty unquoted field
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )


def read_rows(cur: Any, table_id: str, desc: str, head: Head) -> pa.Table:
    """The head's commits in arrival order: commit_id, commit_op, version (null: none)
    and found (0: no data_commit_info row). The first `head.covered` come from the
    checkpoint (checked again against the head in this statement), the rest from a join."""
    _choose_join(cur, table_id, desc, head.live - head.covered)
    data = _copy_out(
        cur,
        "SELECT c.pos, c.cid, c.op, c.version, 1 "
        "FROM contest_merge_checkpoint k JOIN partition_info h "
        "ON h.table_id = k.table_id AND h.partition_desc = k.partition_desc "
        "AND h.version = %(head)s AND k.commit_ids = h.snapshot[1:%(covered)s], "
        "ROWS FROM (unnest(k.commit_ids), unnest(k.ops), unnest(k.versions)) "
        "WITH ORDINALITY AS c(cid, op, version, pos) "
        "WHERE k.table_id = %(tid)s AND k.partition_desc = %(desc)s AND %(covered)s > 0 "
        "UNION ALL "
        "SELECT %(covered)s + s.pos, s.cid, d.commit_op, v.version, "
        "(d.commit_id IS NOT NULL)::int "
        "FROM unnest((SELECT snapshot[%(covered)s + 1:] FROM partition_info "
        "WHERE table_id = %(tid)s AND partition_desc = %(desc)s AND version = %(head)s)) "
        "WITH ORDINALITY AS s(cid, pos) "
        "LEFT JOIN (SELECT commit_id, commit_op FROM data_commit_info "
        "WHERE table_id = %(tid)s AND partition_desc = %(desc)s) d ON d.commit_id = s.cid "
        "LEFT JOIN (SELECT commit_id, version FROM contest_commit_version "
        "WHERE table_id = %(tid)s AND partition_desc = %(desc)s) v ON v.commit_id = s.cid",
        {"tid": table_id, "desc": desc, "head": head.version, "covered": head.covered},
    )
    rows = _parse(data, ROW_COLUMNS, ROW_TYPES)
    pos = rows["pos"].to_numpy() - 1
    if not is_permutation(pos, head.live):
        raise MetaError(
            f"partition {desc}: the merge read {rows.num_rows} of {head.live} commits "
            "(the checkpoint changed meanwhile?): nothing written; run it again"
        )
    at = np.empty(head.live, dtype=np.int64)
    at[pos] = np.arange(head.live)
    return rows.take(pa.array(at)).drop_columns(["pos"])


def read_snapshot(cur: Any, table_id: str, desc: str, version: int) -> list[str]:
    """The commit ids of one partition version, in order."""
    data = _copy_out(
        cur,
        "SELECT s.cid FROM partition_info p, unnest(p.snapshot) WITH ORDINALITY AS s(cid, pos) "
        "WHERE p.table_id = %(tid)s AND p.partition_desc = %(desc)s AND p.version = %(v)s "
        "ORDER BY s.pos",
        {"tid": table_id, "desc": desc, "v": version},
    )
    return data.decode().splitlines()


def array_literal(values: pa.Array | pa.ChunkedArray, quote: bool = False) -> str:
    """PostgreSQL's text form of an array ('{1,NULL,3}'), built by Arrow: one string
    parameter, parsed by the server's array input, not a million SQL constants. `quote`
    for text elements (any characters)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    text = pc.cast(values, pa.large_string())

    def lit(v: str) -> pa.Scalar:
        return pa.scalar(v, pa.large_string())

    if quote:
        text = pc.replace_substring(text, "\\", "\\\\")
        text = pc.replace_substring(text, '"', '\\"')
        text = pc.binary_join_element_wise(lit('"'), text, lit('"'), lit(""))
    text = pc.fill_null(text, lit("NULL"))
    joined = pc.binary_join(
        pa.LargeListArray.from_arrays(pa.array([0, len(text)], pa.int64()), text), lit(",")
    )
    return "{" + (joined[0].as_py() or "") + "}"


def write_merge(
    cur: Any,
    table_id: str,
    desc: str,
    head: Head,
    positions: np.ndarray,
    versions: pa.Array,
    ops: pa.Array,
) -> int:
    """Write the merged snapshot (the head's commits at `positions`, in that order) as
    version head + 1 unless it is the head's own order, and the checkpoint: the written
    snapshot with its `versions` and `ops`. Returns the version the checkpoint names."""
    reordered = not np.array_equal(positions, np.arange(head.live))
    params = {"tid": table_id, "desc": desc, "head": head.version}
    written = head.version
    if reordered:
        if head.live >= HASH_JOIN_MIN_LIVE:
            _set_local(cur, LARGE_SNAPSHOT_SETTINGS)  # the snapshot's sort, in memory
        written = head.version + 1
        rank = np.empty(head.live, dtype=np.int32)
        rank[positions] = np.arange(head.live, dtype=np.int32)
        cur.execute(
            "INSERT INTO partition_info (table_id, partition_desc, version, commit_op, "
            "timestamp, snapshot, expression) "
            "SELECT h.table_id, h.partition_desc, %(new)s, 'MergeCommit', %(ts)s, "
            "(SELECT array_agg(z.cid ORDER BY z.r) FROM ROWS FROM (unnest(h.snapshot), "
            "unnest(%(rank)s::int4[])) AS z(cid, r)), '' "
            "FROM partition_info h WHERE h.table_id = %(tid)s AND h.partition_desc = %(desc)s "
            "AND h.version = %(head)s AND cardinality(h.snapshot) = %(n)s",
            {
                **params,
                "new": written,
                "ts": int(time.time() * 1000),
                "rank": array_literal(pa.array(rank)),
                "n": head.live,
            },
        )
        if cur.rowcount != 1:
            raise MetaError(f"partition {desc}: version {head.version} changed during the merge")
    if not reordered and head.checkpoint_matches and head.covered == head.live:
        # The checkpoint already holds this snapshot: only say which version it is.
        cur.execute(
            "UPDATE contest_merge_checkpoint SET partition_version = %(head)s, merged_at = now() "
            "WHERE table_id = %(tid)s AND partition_desc = %(desc)s",
            params,
        )
        return written
    cur.execute(
        "INSERT INTO contest_merge_checkpoint (table_id, partition_desc, partition_version, "
        "commit_ids, versions, ops) "
        "SELECT %(tid)s, %(desc)s, %(written)s, p.snapshot, %(versions)s::bigint[], "
        "%(ops)s::text[] FROM partition_info p WHERE p.table_id = %(tid)s "
        "AND p.partition_desc = %(desc)s AND p.version = %(written)s "
        "ON CONFLICT (table_id, partition_desc) DO UPDATE SET "
        "partition_version = EXCLUDED.partition_version, commit_ids = EXCLUDED.commit_ids, "
        "versions = EXCLUDED.versions, ops = EXCLUDED.ops, merged_at = now()",
        {
            **params,
            "written": written,
            "versions": array_literal(versions),
            "ops": array_literal(ops, quote=True),
        },
    )
    return written
