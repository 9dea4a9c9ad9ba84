"""LakeSoul tables in PostgreSQL: create, look up, drop, evolve the schema.

Tables are created through LakeSoul's own metadata client (PyPI `lakesoul`), so
`table_info` is exactly what LakeSoul writes. Creation is serialised per name by an
advisory lock, so writers racing to create one table end with one table.
"""

from __future__ import annotations

import json
import re
import uuid as uuidlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from meta.connection import PgConnection, session
from meta.errors import TableError

NAME_MAX = 128  # LakeSoul's (and PostgreSQL's identifier-ish) limit for a table name
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CREATE_LOCK = "contest.meta.create_table"


@dataclass(frozen=True)
class TableRef:
    table_id: str
    name: str
    namespace: str
    path: str
    primary_keys: tuple[str, ...]
    hash_buckets: int
    schema: pa.Schema = field(repr=False)
    # LakeSoul's CDC column (table property `lakesoul_cdc_change_column`): each row's
    # kind, insert, update or delete; "" = every row an upsert.
    cdc_column: str = ""


# LakeSoul's table property naming the column of row kinds (insert, update, delete).
CDC_PROPERTY = "lakesoul_cdc_change_column"


def table_uri(path: str | Path) -> str:
    text = str(path)
    if "://" in text:
        return text.rstrip("/")
    return "file://" + str(Path(text).resolve())


def native_catalog(
    conn: PgConnection,
    namespace: str = "default",
    object_store_options: Mapping[str, str] | None = None,
):
    """LakeSoul's own catalog and native reader; `object_store_options` (its
    `fs.s3a.*` keys) for tables on an object store."""
    # deferred: lakesoul's Python package loads native libraries; only its engine needs them
    from lakesoul import LakeSoulCatalog

    return LakeSoulCatalog(
        pg_url=conn.jdbc_url.split("?")[0],
        pg_username=conn.username,
        pg_password=conn.password,
        namespace=namespace,
        object_store_options=object_store_options,
    )


def check_name(name: str) -> str:
    """Table names are identifiers: letters, digits and underscores, at most 128."""
    if len(name) > NAME_MAX:
        raise TableError(
            f"table name {name[:24]}... is {len(name)} characters long: at most {NAME_MAX}"
        )
    if not NAME_RE.fullmatch(name):
        raise TableError(
            f"table name {name!r}: use letters, digits and underscores "
            "(starting with a letter or underscore)"
        )
    return name


def create_table(
    conn: PgConnection,
    name: str,
    path: str | Path,
    schema: pa.Schema,
    primary_keys: Sequence[str],
    hash_buckets: int,
    namespace: str = "default",
    replace: bool = False,
    reuse: bool = False,
    on_replaced: Callable[[TableRef], None] | None = None,
    cdc_column: str = "",
) -> TableRef:
    """Create a primary-keyed, hash-bucketed LakeSoul table (`cdc_column`: its CDC
    column, LakeSoul's table property, a column of `schema`).

    A name or path already taken is an error naming both, unless `replace` (drop
    them; `on_replaced` is called with each first, to remove its files) or, for the
    same name at the same path, `reuse` (return it)."""
    check_name(name)
    missing = [k for k in primary_keys if k not in schema.names]
    if missing:
        raise TableError(f"primary key column(s) {missing} not in the schema {schema.names}")
    uri = table_uri(path)
    # The lock is a session lock: held until this block closes the connection.
    with session(conn) as lock:
        lock.autocommit = True
        with lock.cursor() as cur:
            cur.execute(
                "SELECT pg_advisory_lock(hashtext(%s), hashtext(%s))",
                (CREATE_LOCK, f"{namespace}.{name}"),
            )
        taken = _taken(conn, name, namespace, uri)
        if taken and reuse and all(t.name == name and t.path == uri for t in taken):
            return taken[0]
        if taken and not replace:
            raise TableError(taken_message(f"{namespace}.{name}", name, uri, taken, reuse))
        refuse_nesting(conn, f"{namespace}.{name}", uri, {t.table_id for t in taken})
        for t in taken:
            # Files first: which are the table's is read from its metadata, and a failed
            # removal leaves the table for another --replace to finish.
            if on_replaced is not None:
                on_replaced(t)
            drop_table(conn, t.name, t.namespace)
        cat = native_catalog(conn, namespace)
        try:
            cat.create_table(
                name,
                path=uri,
                schema=schema,
                primary_keys=list(primary_keys),
                hash_bucket_num=hash_buckets,
                properties={CDC_PROPERTY: cdc_column} if cdc_column else None,
            )
        except Exception as exc:  # lakesoul raises its own AlreadyExistsError and friends
            raise TableError(f"cannot create table {namespace}.{name}: {exc}") from None
        return get_table(conn, name, namespace)


def taken_message(
    qualified: str, name: str, uri: str, taken: Sequence[TableRef], reuse: bool
) -> str:
    """Why a name or folder cannot be used, and the flag that helps: for a new table,
    --resume (an interrupted write of it), --append or --replace; for --append/--resume
    (`reuse`), where the table of that name really is, or which table holds the folder."""
    what = "; ".join(f"table {t.namespace}.{t.name} at {t.path}" for t in taken)
    if not reuse:
        return (
            f"cannot create {qualified} at {uri}: taken by {what} (an interrupted write "
            "of it: --resume finishes it; --append adds batches to it, --replace recreates it)"
        )
    same_name = [t for t in taken if t.name == name and t.path != uri]
    if same_name:
        t = same_name[0]
        return (
            f"cannot add to {qualified} at {uri}: table {t.namespace}.{t.name} is at "
            f"{t.path}, not there (--table is the table's folder: give --table {t.path})"
        )
    t = taken[0]
    return (
        f"cannot add to {qualified} at {uri}: that folder holds table {t.namespace}.{t.name} "
        f"(--name {t.name} adds to it; the name defaults to the folder's last part)"
    )


def _taken(conn: PgConnection, name: str, namespace: str, uri: str) -> list[TableRef]:
    """The tables holding this name or this path."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            f"SELECT {_TABLE_COLS} FROM table_info WHERE (table_name = %s AND "
            "table_namespace = %s) OR table_path = %s",
            (name, namespace, uri),
        )
        return [_table_from_row(r) for r in cur.fetchall()]


def nested_tables(conn: PgConnection, uri: str) -> list[TableRef]:
    """The tables whose folder is inside `uri`'s folder or holds it (not the same folder)."""
    uri = uri.rstrip("/")
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            f"SELECT {_TABLE_COLS} FROM table_info WHERE "
            "left(table_path, length(%s) + 1) = %s || '/' "
            "OR left(%s, length(table_path) + 1) = table_path || '/' "
            "ORDER BY table_namespace, table_name",
            (uri, uri, uri),
        )
        return [_table_from_row(r) for r in cur.fetchall()]


def refuse_nesting(
    conn: PgConnection, qualified: str, uri: str, ignore: Collection[str] = ()
) -> None:
    """A new table's folder may not hold, or be inside, another table's folder (but
    those of `ignore`, table ids about to be replaced): an error naming both."""
    nested = [t for t in nested_tables(conn, uri) if t.table_id not in ignore]
    if nested:
        t = nested[0]
        how = "is inside" if uri.startswith(t.path.rstrip("/") + "/") else "holds"
        raise TableError(
            f"cannot create {qualified} at {uri}: its folder {how} the folder of table "
            f"{t.namespace}.{t.name} at {t.path}; tables' folders may not nest "
            "(choose a folder outside every table)"
        )


@dataclass(frozen=True)
class Neighbours:
    """What under a table's folder belongs to other tables, so deleting the table's
    files (vacuum, replace) never touches it: their folders, and files their commits name.
    Paths are URIs, as `table_info` and the commits hold them."""

    folders: tuple[str, ...] = ()
    files: frozenset[str] = frozenset()


def neighbours(conn: PgConnection, table_id: str, uri: str) -> Neighbours:
    """Other tables' folders inside `uri`'s folder, and the files under it that other
    tables' commits (live or not) name."""
    prefix = uri.rstrip("/") + "/"
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT table_path FROM table_info WHERE table_id <> %s "
            "AND left(table_path, length(%s)) = %s",
            (table_id, prefix, prefix),
        )
        folders = tuple(sorted(r[0].rstrip("/") for r in cur.fetchall()))
        cur.execute(
            "SELECT DISTINCT (f).path FROM data_commit_info dc, unnest(dc.file_ops) f "
            "WHERE dc.table_id <> %s AND left((f).path, length(%s)) = %s",
            (table_id, prefix, prefix),
        )
        files = frozenset(r[0] for r in cur.fetchall())
    return Neighbours(folders, files)


def drop_table(conn: PgConnection, name: str, namespace: str = "default") -> bool:
    """Remove a table's metadata (all of it: LakeSoul's and ours). Files are the caller's."""
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            "SELECT table_id FROM table_info WHERE table_name = %s AND table_namespace = %s",
            (name, namespace),
        )
        rows = [r[0] for r in cur.fetchall()]
        for table_id in rows:
            for stmt in (
                "DELETE FROM partition_info WHERE table_id = %s",
                "DELETE FROM data_commit_info WHERE table_id = %s",
                "DELETE FROM contest_commit_version WHERE table_id = %s",
                "DELETE FROM contest_merge_checkpoint WHERE table_id = %s",
                "DELETE FROM contest_expected_version WHERE table_id = %s",
                "DELETE FROM contest_compaction WHERE table_id = %s",
                "DELETE FROM contest_rolled_back_version WHERE table_id = %s",
                "DELETE FROM contest_stream_batch WHERE table_id = %s",
                "DELETE FROM contest_write_token WHERE table_id = %s",
                "DELETE FROM table_name_id WHERE table_id = %s",
                "DELETE FROM table_path_id WHERE table_id = %s",
                "DELETE FROM table_info WHERE table_id = %s",
            ):
                cur.execute(stmt, (table_id,))
    return bool(rows)


# Spark's type names in a StructType JSON, as Arrow types.
SPARK_JSON_TYPES = {
    "string": pa.string(),
    "long": pa.int64(),
    "integer": pa.int32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "binary": pa.binary(),
}


def schema_from_json(text: str) -> pa.Schema:
    """A table's schema as LakeSoul stores it: Spark's StructType JSON (LakeSoul's JVM
    connector and DBManager clients) or Arrow's JSON (the PyPI package); both occur in
    one catalog (README, "LakeSoul's JVM libraries")."""
    doc = json.loads(text)
    if doc.get("type") != "struct":
        # deferred: lakesoul's Python package loads native libraries; only its engine needs them
        from lakesoul._lib._utils import _schema_from_metadata_str

        return _schema_from_metadata_str(text)
    fields = []
    for f in doc["fields"]:
        if f["type"] not in SPARK_JSON_TYPES:
            raise TableError(f"column {f['name']}: Spark type {f['type']!r} is not supported")
        fields.append(pa.field(f["name"], SPARK_JSON_TYPES[f["type"]], f.get("nullable", True)))
    return pa.schema(fields)


def _table_from_row(row: tuple) -> TableRef:
    table_id, name, namespace, path, schema_json, props, partitions = row
    props = props if isinstance(props, dict) else json.loads(props or "{}")
    hash_cols = (partitions or ";").split(";", 1)[1]
    pks = tuple(c for c in hash_cols.split(",") if c)
    return TableRef(
        table_id=table_id,
        name=name,
        namespace=namespace,
        path=path,
        primary_keys=pks,
        hash_buckets=int(props.get("hashBucketNum", "1")),
        schema=schema_from_json(schema_json),
        cdc_column=str(props.get(CDC_PROPERTY, "")),
    )


_TABLE_COLS = (
    "table_id, table_name, table_namespace, table_path, table_schema, properties, partitions"
)


def get_table(conn: PgConnection, name: str, namespace: str = "default") -> TableRef:
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(
            f"SELECT {_TABLE_COLS} FROM table_info WHERE table_name = %s AND table_namespace = %s",
            (name, namespace),
        )
        row = cur.fetchone()
    if row is None:
        raise TableError(f"no LakeSoul table named {namespace}.{name}")
    return _table_from_row(row)


def list_tables(conn: PgConnection) -> list[TableRef]:
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(f"SELECT {_TABLE_COLS} FROM table_info ORDER BY table_namespace, table_name")
        return [_table_from_row(r) for r in cur.fetchall()]


def find_table(conn: PgConnection, name_or_path: str, namespace: str = "default") -> TableRef:
    """A table by name, or by path (anything with a slash)."""
    if "/" not in name_or_path:
        return get_table(conn, name_or_path, namespace)
    uri = table_uri(name_or_path)
    with session(conn) as pgc, pgc, pgc.cursor() as cur:
        cur.execute(f"SELECT {_TABLE_COLS} FROM table_info WHERE table_path = %s", (uri,))
        row = cur.fetchone()
    if row is None:
        raise TableError(f"no LakeSoul table at {uri}")
    return _table_from_row(row)


def evolve_schema(conn: PgConnection, table: TableRef, schema: pa.Schema) -> TableRef:
    """Give a table a newer schema (new columns; changed types are caught at read time).

    The schema is serialised by LakeSoul itself: a scratch table is created with
    it and its schema columns copied over, so every LakeSoul reader parses it."""
    missing = [k for k in table.primary_keys if k not in schema.names]
    if missing:
        raise TableError(f"new schema of {table.name} drops primary key column(s) {missing}")
    scratch = f"__contest_schema_{uuidlib.uuid4().hex[:12]}"
    native_catalog(conn, table.namespace).create_table(
        scratch,
        path=f"{table.path}/_schema_scratch_{scratch}",
        schema=schema,
        primary_keys=list(table.primary_keys),
        hash_bucket_num=table.hash_buckets,
    )
    try:
        with session(conn) as pgc, pgc, pgc.cursor() as cur:
            cur.execute(
                "UPDATE table_info t SET table_schema = s.table_schema, "
                "table_schema_arrow_ipc = s.table_schema_arrow_ipc, "
                "table_schema_arrow_ipc_json_hash = s.table_schema_arrow_ipc_json_hash "
                "FROM table_info s WHERE t.table_id = %s AND s.table_name = %s "
                "AND s.table_namespace = %s",
                (table.table_id, scratch, table.namespace),
            )
    finally:
        drop_table(conn, scratch, table.namespace)
    return get_table(conn, table.name, table.namespace)
