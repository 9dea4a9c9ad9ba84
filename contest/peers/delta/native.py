"""Delta Lake through delta-rs (`deltalake` 1.6.6, Rust, no JVM): the first batch written
by `write_deltalake`, every later one by `DeltaTable.merge` with the contract's operators
as DataFusion update expressions (`requests` summed, last non-NULL values by coalesce,
`name` after its "null" strings became NULL in the reduction). MERGE takes one source row
per key, and delta-rs has no SQL over in-memory rows (its `QueryBuilder` queries only
Delta tables), so a batch's repeated keys are reduced outside it first, by the harness's
numpy merge (contest/peers/native/collapse.py): the results row says so. Read by
`DeltaTable.to_pyarrow_table` (copy-on-write: the table holds one row per key), the
files delta-rs's log names opened through Arrow's own local filesystem (`local_files`).

Change data (row kinds, batches of some of the payload columns, keys of one or two
columns of any key type) goes through the same MERGE as the Spark formats'
(contest/peers/change_merge.py, `merge_clauses`): the batch collapsed by key with the
delete rule outside delta-rs (numpy, contest/peers/native/collapse.py), then delta-rs's
own `when_matched_delete`, `when_matched_update` (the replacing one, then the combining
one, which sets only the columns the batch holds) and `when_not_matched_insert`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.fs as pa_fs

from contest.config import Config
from contest.data import operators
from contest.data.changes import KEY_TYPES, ChangeSupport
from contest.data.merge_engines import MergeEngine
from contest.data.workload import contract_operators
from contest.peers.change_merge import MergeClauses, merge_clauses
from contest.peers.native.base import Metrics, NativeFormat
from contest.peers.native.collapse import ChangeRows, collapsed
from contest.write.cow import KEY

VERSION = "1.6.6"
TABLE_FORMAT = f"Delta Lake (delta-rs {VERSION})"
CHANGES = ChangeSupport(
    deletes=f"delta-rs {VERSION} MERGE when_matched_delete(<op> IN (<delete values>))",
    partial_columns=f"delta-rs {VERSION} MERGE when_matched_update of only the columns the "
    "batch holds",
    absent_is_not_null=True,
    key_types=tuple(t.name for t in KEY_TYPES),
    composite_keys=True,
)
# MERGE's update expressions are DataFusion SQL: every operator's combine expression of
# the registry (`spark_combine`: CASE, coalesce, greatest, least, concat) is standard
# SQL that DataFusion evaluates alike.
MERGE_ENGINE = MergeEngine("delta-rs", f"delta-rs {VERSION}'s MERGE (DataFusion SQL)")


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def update_expressions(ops: dict[str, str]) -> dict[str, str]:
    """MERGE's `when_matched_update` map: each column by its operator's combine of the
    target's (t) and the reduced source's (s) value."""
    return {c: operators.spark_combine(op, f"t.{_q(c)}", f"s.{_q(c)}") for c, op in ops.items()}


def local_files(table: Path) -> pa_fs.FileSystem:
    """The filesystem the read opens the table's data files with: Arrow's own, rooted at
    the table, never delta-rs's default, a Python file system (`DeltaStorageHandler` in a
    `PyFileSystem`). Through that one every buffer Arrow reads holds a Python object;
    the scan's readers are released on Arrow's threads after `to_pyarrow_table` returns,
    and one released while the interpreter exits takes the GIL, is ended by Python
    (pthread_exit) and unwinds through a C++ destructor: std::terminate, "terminate
    called without an active exception", exit -6 (41 of 300 reads beside four busy
    processes; 0 of 300 this way). Which files make the table is still delta-rs's
    answer; a native library's tables are local folders (contest/peers/native/job.py)."""
    return pa_fs.SubTreeFileSystem(str(table), pa_fs.LocalFileSystem())


def _source_schema(source: pa.Schema, target: pa.Schema, key: Sequence[str]) -> pa.Schema:
    """The collapsed batch's schema with its key's columns in the table's types (a
    16-byte key is Delta's binary: delta-rs has no fixed-size binary)."""
    return pa.schema([target.field(f.name) if f.name in key else f for f in source])


def with_clauses(merger: Any, m: MergeClauses) -> Any:
    """delta-rs's `TableMerger` given a change batch's clauses in their order (the first
    whose condition holds applies, as in SQL's MERGE)."""
    if m.delete_if:
        merger = merger.when_matched_delete(m.delete_if)
    if m.replace:
        merger = merger.when_matched_update(m.replace, m.replace_if)
    if m.combine:
        merger = merger.when_matched_update(m.combine)
    return merger.when_not_matched_insert(m.insert, m.insert_if or None)


def _metrics(result: Any) -> Metrics:
    return {k: int(v) for k, v in dict(result or {}).items() if isinstance(v, int)}


class DeltaRs(NativeFormat):
    name = "delta-rs"
    library = "deltalake"
    label = (
        f"delta-rs {VERSION} MERGE with the contract as update expressions (change data: "
        "its own DELETE, UPDATE and INSERT clauses); each batch's repeated keys reduced "
        "outside it (numpy; change data by the delete rule)"
    )
    changes = CHANGES
    codecs: ClassVar[tuple[str, ...]] = ("", "none", "snappy", "zstd", "gzip", "lz4_raw")
    marker = "_delta_log"
    metadata_dirs = ("_delta_log",)
    merge_engines = ("numpy", MERGE_ENGINE.name)

    def _writer_properties(self, cfg: Config) -> Any:
        from deltalake import WriterProperties  # deferred: a native library, its jobs only

        if not cfg.peer.codec:
            return None
        codec = "UNCOMPRESSED" if cfg.peer.codec == "none" else cfg.peer.codec.upper()
        return WriterProperties(compression=codec)  # type: ignore[arg-type]

    def write_batch(
        self, cfg: Config, table: Path, rows: pa.Table, first: bool, threads: int
    ) -> tuple[str, Metrics]:
        # deferred: a native library, its jobs only
        from deltalake import DeltaTable, write_deltalake

        source = collapsed(rows, cfg)
        props = self._writer_properties(cfg)
        if first:
            write_deltalake(
                str(table),
                source,
                mode="error",
                configuration=dict(cfg.peer.table) or None,
                writer_properties=props,
            )
            return "create+append", {"rows": source.num_rows}
        ops = {
            c: op for c, op in contract_operators(cfg.workload).items() if c in source.schema.names
        }
        result = (
            DeltaTable(str(table))
            .merge(
                source,
                f"t.{_q(KEY)} = s.{_q(KEY)}",
                source_alias="s",
                target_alias="t",
                writer_properties=props,
            )
            .when_matched_update(update_expressions(ops))
            .when_not_matched_insert_all()
            .execute()
        )
        return "merge", _metrics(result)

    def write_changes(
        self,
        cfg: Config,
        table: Path,
        change: ChangeRows,
        schema: pa.Schema,
        first: bool,
        threads: int,
    ) -> tuple[str, Metrics]:
        """The collapsed change batch MERGEd by delta-rs (`merge_clauses`); the first
        creates the table in `schema`, empty, then MERGEs like the others."""
        from deltalake import DeltaTable  # deferred: a native library, its jobs only

        props = self._writer_properties(cfg)
        if first:
            handle = DeltaTable.create(
                str(table), schema, mode="error", configuration=dict(cfg.peer.table) or None
            )
        else:
            handle = DeltaTable(str(table))
        target = pa.schema(handle.schema().to_arrow())
        key = change.rules.key
        ops = contract_operators(cfg.workload)
        columns = [c for c in target.names if c not in key and c in ops]
        m = merge_clauses(change.rules, change.columns, columns, ops, _q)
        source = change.rows.cast(_source_schema(change.rows.schema, target, key))
        merger = handle.merge(
            source, m.on, source_alias="s", target_alias="t", writer_properties=props
        )
        result = with_clauses(merger, m).execute()
        return ("create+" if first else "") + f"change merge ({change.label})", _metrics(result)

    def read_table(self, cfg: Config, table: Path, threads: int) -> pa.Table:
        from deltalake import DeltaTable  # deferred: a native library, its jobs only

        return DeltaTable(str(table)).to_pyarrow_table(filesystem=local_files(table))


FORMAT = DeltaRs()
