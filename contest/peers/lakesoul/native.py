"""LakeSoul through its own Python engine (`lakesoul` 2.0.0, Rust, no JVM): a
primary-key, hash-bucketed table in the harness's PostgreSQL metadata, written by
`write_arrow`, read by its scan's merge-on-read.

Its reader merges a key's rows with the last value only: the Python API has no merge
operators (results/notes/lakesoul_python.md: its reader options ignore
`merge_operators`). So the contract's other operators are applied outside the format,
before each write: the batch's keys' current rows, as LakeSoul's own merge-on-read
returns them (a filtered scan), folded with the batch's rows by the harness's numpy
merge (contest/peers/native/collapse.py), and the folded rows upserted. Every row
written is a key's whole merged row, so LakeSoul's last-value merge-on-read is exact:
the results row says the merge is outside the format. One row per key per write also
makes the writer's unstable default sort irrelevant."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from contest.config import Config, PeerConfig
from contest.data.changes import ChangeSupport
from contest.errors import ConfigError, TableError, UsageError
from contest.infra.postgres import resolve_connection
from contest.peers.native.base import Metrics, NativeFormat
from contest.peers.native.collapse import collapsed, folded
from contest.write.cow import KEY
from meta import catalog

VERSION = "2.0.0"
TABLE_FORMAT = f"LakeSoul (its Python engine, lakesoul {VERSION})"
# write_arrow's `format`: its default first.
FILE_FORMATS = ("", "vortex-compact", "vortex", "parquet")


def _table_name(table: Path) -> str:
    """The metadata's name of the table: its folder's (as `contest write` names one)."""
    return catalog.check_name(table.name)


class LakeSoulPy(NativeFormat):
    name = "lakesoul-py"
    library = "lakesoul"
    label = (
        f"lakesoul {VERSION} write_arrow upserts of rows merged outside the format (numpy: "
        "its Python API has no merge operators), its last-value merge-on-read"
    )
    codecs: ClassVar[tuple[str, ...]] = ("",)
    marker = "its metadata in PostgreSQL"
    # Its CDC column is stored, but its scan keeps a deleted key's row
    # (results/notes/lakesoul_python.md, "Deletes are not applied").
    changes = ChangeSupport(
        no_deletes=f"lakesoul {VERSION}'s Python scan does not apply CDC deletes (a key "
        "whose last row is a delete comes back, op = 'delete')"
    )

    def validate(self, peer: PeerConfig) -> None:
        if peer.format == self.name and peer.file_format not in FILE_FORMATS:
            raise ConfigError(
                f"peer.file_format: {peer.file_format!r} is not one of "
                f"{', '.join(f or '(default)' for f in FILE_FORMATS)} for {self.name}"
            )

    def _catalog(self, cfg: Config) -> Any:
        return catalog.native_catalog(resolve_connection(cfg), cfg.table.namespace)

    def _ref(self, cfg: Config, table: Path) -> catalog.TableRef | None:
        try:
            return catalog.find_table(resolve_connection(cfg), str(table))
        except TableError:
            return None

    def holds(self, cfg: Config, table: Path) -> bool:
        return self._ref(cfg, table) is not None

    def prepare(self, cfg: Config, table: Path, replace: bool) -> None:
        """The folder's own table (metadata at exactly this path) is dropped when the
        folder is gone (its files removed by the caller) or with `replace`; a folder
        that holds anything else is refused."""
        ref = self._ref(cfg, table)
        has_files = table.exists() and any(table.iterdir())
        if has_files and not replace:
            raise UsageError(f"--table {table}: exists and is not empty (--replace to replace it)")
        if has_files and ref is None:
            raise UsageError(
                f"--table {table}: not a {self.name} table (no metadata): not replaced"
            )
        self.forget(cfg, table)
        if has_files:
            shutil.rmtree(table)

    def forget(self, cfg: Config, table: Path) -> None:
        """Its metadata in PostgreSQL (LakeSoul's catalog on the harness's database): the
        table at exactly this path, and no other."""
        ref = self._ref(cfg, table)
        if ref is not None:
            catalog.drop_table(resolve_connection(cfg), ref.name, ref.namespace)

    def _write(self, cfg: Config, handle: Any, rows: pa.Table, threads: int) -> Metrics:
        options: dict[str, Any] = {"thread_num": threads}
        if cfg.peer.file_format:
            options["format"] = cfg.peer.file_format
        result = handle.write_arrow(rows.cast(handle.schema), **options)
        return {"rows": rows.num_rows, "files": len(result.files)}

    def write_batch(
        self, cfg: Config, table: Path, rows: pa.Table, first: bool, threads: int
    ) -> tuple[str, Metrics]:
        lakesoul = self._catalog(cfg)
        if first:
            handle = lakesoul.create_table(
                _table_name(table),
                path=str(table),
                schema=rows.schema,
                primary_keys=[KEY],
                hash_bucket_num=cfg.peer.buckets or None,
            )
            return "create+upsert", self._write(cfg, handle, collapsed(rows, cfg), threads)
        # deferred: pyarrow.dataset loads the dataset machinery, wanted by this job only
        import pyarrow.dataset as ds

        handle = lakesoul.table(_table_name(table))
        keys = pc.unique(rows.column(KEY))
        current = handle.scan(filter=ds.field(KEY).isin(keys), thread_count=threads)
        merged = folded(current.to_arrow_table(), rows, cfg)
        return "read+upsert", self._write(cfg, handle, merged, threads)

    def read_table(self, cfg: Config, table: Path, threads: int) -> pa.Table:
        ref = self._ref(cfg, table)
        assert ref is not None  # the runner asked `holds` first
        handle = self._catalog(cfg).table(ref.name)
        return handle.scan(thread_count=threads).to_arrow_table()


FORMAT = LakeSoulPy()
