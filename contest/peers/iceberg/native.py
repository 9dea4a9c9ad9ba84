"""Apache Iceberg through PyIceberg (`pyiceberg` 0.12.0, no JVM): a table of a SQL
catalog kept in the table's own folder (sqlite, PyIceberg's documented local catalog),
written by `Table.upsert` keyed by uuid, read by its scan.

`upsert` replaces a matched row with the source's row: it has no update expressions,
so the contract's merged values are computed outside the format before each upsert:
the batch's keys' current rows (a scan filtered to them) folded with the batch's rows
by the harness's numpy merge (contest/peers/native/collapse.py). PyIceberg 0.12 writes
its deletes copy-on-write (the files holding a replaced row are rewritten): the results
row is labelled so.

Change data (row kinds, batches of some of the payload columns, keys of one or two
columns) follows the Spark formats' MERGE (contest/peers/change_merge.py) with
PyIceberg's own operations, one transaction a batch: the batch collapsed by key with the
delete rule outside the format (numpy, contest/peers/native/collapse.py); the keys whose
last row is a delete removed by `Transaction.delete` (PyIceberg's own match filter of
the keys); every other key upserted (`Transaction.upsert` keyed by the key's columns),
its row the batch's folded onto the table's current one outside the format (a column
the batch lacks keeps the table's value; a re-inserted key's row is the batch's alone)."""

from __future__ import annotations

import sqlite3
import warnings
from contextlib import closing
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc

from contest.config import Config
from contest.data.changes import KEY_TYPES, ChangeSupport
from contest.data.workload import contract_operators
from contest.peers.base import codec_name
from contest.peers.native.base import Metrics, NativeFormat
from contest.peers.native.collapse import ChangeRows, collapsed, folded, folded_changes
from contest.write.cow import KEY

VERSION = "0.12.0"
TABLE_FORMAT = f"Apache Iceberg (pyiceberg {VERSION})"
CATALOG_FILE = "pyiceberg_catalog.db"
# A Hadoop catalog's pointer to the table's current metadata file (Spark's iceberg peers).
HADOOP_HINT = "metadata/version-hint.text"
NAMESPACE, TABLE = "contest", "ccf"
IDENTIFIER = f"{NAMESPACE}.{TABLE}"


def current_metadata(table: Path) -> str | None:
    """The current metadata file of PyIceberg's table in `table` (its SQL catalog's
    pointer, read from the sqlite file without PyIceberg), or None when the folder holds
    no PyIceberg table: another engine (Spark's iceberg peers) loads the table from it
    as a static table, since a Hadoop catalog cannot see a SQL catalog's table."""
    file = Path(table) / CATALOG_FILE
    if not file.is_file():
        return None
    with closing(sqlite3.connect(f"{file.as_uri()}?mode=ro", uri=True)) as db:
        found = db.execute(
            "SELECT metadata_location FROM iceberg_tables "
            "WHERE table_namespace = ? AND table_name = ?",
            (NAMESPACE, TABLE),
        ).fetchone()
    return str(found[0]) if found else None


CHANGES = ChangeSupport(
    deletes=f"pyiceberg {VERSION} Transaction.delete of the keys whose last row is a delete "
    "(copy-on-write), the batch collapsed by key outside it",
    partial_columns=f"pyiceberg {VERSION} upsert of rows that keep the table's value of a "
    "column the batch lacks (folded outside the format)",
    absent_is_not_null=True,
    key_types=tuple(t.name for t in KEY_TYPES),
    composite_keys=True,
)


class IcebergPy(NativeFormat):
    name = "pyiceberg"
    library = "pyiceberg"
    label = (
        f"pyiceberg {VERSION} upsert of rows merged outside the format (numpy: upsert has no "
        "update expressions), copy-on-write; change data: its own delete and upsert in one "
        "transaction, the batch collapsed by the delete rule outside it"
    )
    changes = CHANGES
    codecs: ClassVar[tuple[str, ...]] = ("", "none", "snappy", "zstd", "gzip")
    marker = CATALOG_FILE
    metadata_dirs = ("metadata",)

    def _catalog(self, table: Path) -> Any:
        # deferred: a native library, its jobs only
        from pyiceberg.catalog.sql import SqlCatalog

        return SqlCatalog(
            "contest",
            uri=f"sqlite:///{table / CATALOG_FILE}",
            warehouse=table.as_uri(),
        )

    def table_properties(self, cfg: Config) -> dict[str, str]:
        props = {}
        if cfg.peer.codec:
            props["write.parquet.compression-codec"] = codec_name(cfg.peer.codec)
        return props | dict(cfg.peer.table)

    def write_batch(
        self, cfg: Config, table: Path, rows: pa.Table, first: bool, threads: int
    ) -> tuple[str, Metrics]:
        # deferred: a native library, its jobs only
        from pyiceberg.expressions import In

        if first:
            table.mkdir(parents=True, exist_ok=True)
            iceberg = self._catalog(table)
            iceberg.create_namespace(NAMESPACE)
            source = collapsed(rows, cfg)
            # The merged rows' schema: a sum of decimals is declared at precision 38.
            handle = iceberg.create_table(
                IDENTIFIER,
                schema=source.schema,
                location=table.as_uri(),
                properties=self.table_properties(cfg),
            )
            handle.append(source)
            return "create+append", {"rows": source.num_rows}
        handle = self._catalog(table).load_table(IDENTIFIER)
        keys = pc.unique(rows.column(KEY)).to_pylist()
        # In's signature as mypy reads its pydantic model differs from its constructor's.
        matched = In(KEY, keys)  # type: ignore[call-arg, arg-type]
        current = handle.scan(row_filter=matched).to_arrow()
        result = handle.upsert(folded(current, rows, cfg), join_cols=[KEY])
        return "upsert", {
            "rows_updated": result.rows_updated,
            "rows_inserted": result.rows_inserted,
        }

    def write_changes(
        self,
        cfg: Config,
        table: Path,
        change: ChangeRows,
        schema: pa.Schema,
        first: bool,
        threads: int,
    ) -> tuple[str, Metrics]:
        """The collapsed change batch in one PyIceberg transaction: its deleted keys by
        `delete`, its other keys by `upsert` (the module's docstring); the first batch
        creates the table in `schema`."""
        # deferred: a native library, its jobs only
        from pyiceberg.table.upsert_util import create_match_filter

        if first:
            table.mkdir(parents=True, exist_ok=True)
            iceberg = self._catalog(table)
            iceberg.create_namespace(NAMESPACE)
            handle = iceberg.create_table(
                IDENTIFIER,
                schema=schema,
                location=table.as_uri(),
                properties=self.table_properties(cfg),
            )
        else:
            handle = self._catalog(table).load_table(IDENTIFIER)
        key = list(change.rules.key)
        target = handle.schema().as_arrow()
        deleted = change.deletes()
        gone = change.rows.filter(pa.array(deleted))
        folding = change.rows.filter(pa.array(~deleted & ~change.replaces()))
        current = target.empty_table()
        if folding.num_rows and not first:
            current = handle.scan(row_filter=create_match_filter(folding, key)).to_arrow()
        rows = folded_changes(current, change, target, contract_operators(cfg.workload))
        updated = inserted = 0
        with handle.transaction() as tx:
            if gone.num_rows:
                with warnings.catch_warnings():  # a key the table does not hold: no-op
                    warnings.filterwarnings("ignore", "Delete operation did not match")
                    tx.delete(create_match_filter(gone, key))
            if rows.num_rows:
                result = tx.upsert(rows, join_cols=key)
                updated, inserted = result.rows_updated, result.rows_inserted
        operation = ("create+" if first else "") + f"change delete+upsert ({change.label})"
        return operation, {
            "delete_keys": gone.num_rows,
            "rows_updated": updated,
            "rows_inserted": inserted,
        }

    def holds(self, cfg: Config, table: Path) -> bool:
        """Its own table (the catalog file), or one a Hadoop catalog wrote (Spark's
        iceberg peers: `metadata/version-hint.text`), which it reads as a static table."""
        return (table / CATALOG_FILE).exists() or (table / HADOOP_HINT).exists()

    def read_table(self, cfg: Config, table: Path, threads: int) -> pa.Table:
        if (table / CATALOG_FILE).exists():
            return self._catalog(table).load_table(IDENTIFIER).scan().to_arrow()
        # deferred: a native library, its jobs only
        from pyiceberg.table import StaticTable

        version = (table / HADOOP_HINT).read_text().strip()
        metadata = table / "metadata" / f"v{version}.metadata.json"
        return StaticTable.from_metadata(metadata.as_uri()).scan().to_arrow()


FORMAT = IcebergPy()
