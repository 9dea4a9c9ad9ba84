"""LakeSoul tables in PostgreSQL: create, look up, commit files, list a snapshot.

Tables are created through LakeSoul's own metadata client (PyPI `lakesoul`), so
`table_info` is exactly what LakeSoul writes. Commits follow LakeSoul's protocol
(data_commit_info row, then partition_info version n+1 whose snapshot lists the
live commits; a version taken by a concurrent writer is a primary-key conflict,
and the commit is retried on the new head), plus the commit's user-defined
version in `contest_commit_version`, all in one transaction.
"""

from __future__ import annotations

import json
import random
import time
import uuid as uuidlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import psycopg2
import psycopg2.errors
import pyarrow as pa

from contest.pg import PgConnection

NO_PARTITION = "-5"  # LakeSoul's partition_desc for a table without range partitions
MAX_COMMIT_RETRIES = 50


class TableError(RuntimeError):
    """A table that cannot be used as asked; the message names it."""


@dataclass(frozen=True)
class TableRef:
    table_id: str
    name: str
    namespace: str
    path: str
    primary_keys: tuple[str, ...]
    hash_buckets: int
    schema: pa.Schema = field(repr=False)


@dataclass(frozen=True)
class DataFile:
    path: str
    size: int
    columns: tuple[str, ...]
    bucket: int
    rows: int = 0


@dataclass(frozen=True)
class CommitResult:
    commit_id: str
    partition_version: int
    retries: int
    seconds: float


def table_uri(path: str | Path) -> str:
    text = str(path)
    if "://" in text:
        return text.rstrip("/")
    return "file://" + str(Path(text).resolve())


def native_catalog(conn: PgConnection, namespace: str = "default"):
    from lakesoul import LakeSoulCatalog

    return LakeSoulCatalog(
        pg_url=conn.jdbc_url.split("?")[0],
        pg_username=conn.username,
        pg_password=conn.password,
        namespace=namespace,
    )


def connect(conn: PgConnection):
    return psycopg2.connect(**conn.dsn())


def create_table(
    conn: PgConnection,
    name: str,
    path: str | Path,
    schema: pa.Schema,
    primary_keys: Sequence[str],
    hash_buckets: int,
    namespace: str = "default",
    replace: bool = False,
) -> TableRef:
    """Create a primary-keyed, hash-bucketed LakeSoul table (dropping it first if asked)."""
    missing = [k for k in primary_keys if k not in schema.names]
    if missing:
        raise TableError(f"primary key column(s) {missing} not in the schema {schema.names}")
    if replace:
        drop_table(conn, name, namespace)
    cat = native_catalog(conn, namespace)
    try:
        cat.create_table(
            name,
            path=table_uri(path),
            schema=schema,
            primary_keys=list(primary_keys),
            hash_bucket_num=hash_buckets,
        )
    except Exception as exc:  # lakesoul raises its own AlreadyExistsError and friends
        raise TableError(f"cannot create table {namespace}.{name}: {exc}") from None
    return get_table(conn, name, namespace)


def drop_table(conn: PgConnection, name: str, namespace: str = "default") -> bool:
    """Remove a table's metadata (all of it: LakeSoul's and ours). Files are the caller's."""
    with connect(conn) as pgc, pgc.cursor() as cur:
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
                "DELETE FROM table_name_id WHERE table_id = %s",
                "DELETE FROM table_path_id WHERE table_id = %s",
                "DELETE FROM table_info WHERE table_id = %s",
            ):
                cur.execute(stmt, (table_id,))
    pgc.close()
    return bool(rows)


def _table_from_row(row: tuple) -> TableRef:
    from lakesoul._lib._utils import _schema_from_metadata_str

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
        schema=_schema_from_metadata_str(schema_json),
    )


_TABLE_COLS = (
    "table_id, table_name, table_namespace, table_path, table_schema, properties, partitions"
)


def get_table(conn: PgConnection, name: str, namespace: str = "default") -> TableRef:
    with connect(conn) as pgc, pgc.cursor() as cur:
        cur.execute(
            f"SELECT {_TABLE_COLS} FROM table_info WHERE table_name = %s AND table_namespace = %s",
            (name, namespace),
        )
        row = cur.fetchone()
    pgc.close()
    if row is None:
        raise TableError(f"no LakeSoul table named {namespace}.{name}")
    return _table_from_row(row)


def find_table(conn: PgConnection, name_or_path: str, namespace: str = "default") -> TableRef:
    """A table by name, or by path (anything with a slash)."""
    if "/" not in name_or_path:
        return get_table(conn, name_or_path, namespace)
    uri = table_uri(name_or_path)
    with connect(conn) as pgc, pgc.cursor() as cur:
        cur.execute(f"SELECT {_TABLE_COLS} FROM table_info WHERE table_path = %s", (uri,))
        row = cur.fetchone()
    pgc.close()
    if row is None:
        raise TableError(f"no LakeSoul table at {uri}")
    return _table_from_row(row)


def file_ops(files: Iterable[DataFile]) -> list[tuple[str, str, int, str]]:
    return [(f.path, "add", f.size, ",".join(f.columns)) for f in files]


def commit_files(
    conn: PgConnection,
    table: TableRef,
    files: Sequence[DataFile],
    *,
    version: int | None = None,
    batch: str | None = None,
    commit_op: str = "MergeCommit",
    partition_desc: str = NO_PARTITION,
) -> CommitResult:
    """Commit files as one LakeSoul commit; never lost under concurrent writers.

    MergeCommit/AppendCommit append the commit to the head snapshot; an
    UpdateCommit or CompactionCommit replaces the snapshot (it holds everything).
    """
    if commit_op not in ("MergeCommit", "AppendCommit", "UpdateCommit", "CompactionCommit"):
        raise TableError(f"unknown commit_op {commit_op!r}")
    commit_id = str(uuidlib.uuid4())
    started = time.perf_counter()
    now_ms = int(time.time() * 1000)
    ops = file_ops(files)
    retries = 0
    pgc = connect(conn)
    try:
        while True:
            try:
                with pgc, pgc.cursor() as cur:
                    cur.execute(
                        "INSERT INTO data_commit_info (table_id, partition_desc, commit_id, "
                        "file_ops, commit_op, committed, timestamp) "
                        "VALUES (%s, %s, %s, %s::data_file_op[], %s, true, %s)",
                        (table.table_id, partition_desc, commit_id, ops, commit_op, now_ms),
                    )
                    cur.execute(
                        "SELECT version, snapshot::text[] FROM partition_info "
                        "WHERE table_id = %s AND partition_desc = %s "
                        "ORDER BY version DESC LIMIT 1",
                        (table.table_id, partition_desc),
                    )
                    head = cur.fetchone()
                    if head is None:
                        new_version, snapshot = 0, [commit_id]
                    elif commit_op in ("UpdateCommit", "CompactionCommit"):
                        new_version, snapshot = head[0] + 1, [commit_id]
                    else:
                        new_version, snapshot = head[0] + 1, [str(s) for s in head[1]] + [commit_id]
                    cur.execute(
                        "INSERT INTO partition_info (table_id, partition_desc, version, "
                        "commit_op, timestamp, snapshot, expression) "
                        "VALUES (%s, %s, %s, %s, %s, %s::uuid[], '')",
                        (table.table_id, partition_desc, new_version, commit_op, now_ms, snapshot),
                    )
                    if version is not None:
                        cur.execute(
                            "INSERT INTO contest_commit_version "
                            "(table_id, partition_desc, commit_id, version, batch) "
                            "VALUES (%s, %s, %s, %s, %s)",
                            (table.table_id, partition_desc, commit_id, version, batch),
                        )
                return CommitResult(commit_id, new_version, retries, time.perf_counter() - started)
            except psycopg2.errors.UniqueViolation:
                # Another writer took version n+1 first: rebase on the new head.
                retries += 1
                if retries > MAX_COMMIT_RETRIES:
                    raise TableError(
                        f"commit to {table.name} gave up after {MAX_COMMIT_RETRIES} conflicts"
                    ) from None
                time.sleep(random.uniform(0.001, 0.02) * min(retries, 10))
    finally:
        pgc.close()


@dataclass(frozen=True)
class SnapshotCommit:
    commit_id: str
    commit_op: str
    files: tuple[DataFile, ...]
    version: int | None


def head_snapshot(
    conn: PgConnection, table: TableRef, partition_desc: str = NO_PARTITION,
    partition_version: int | None = None,
) -> tuple[int, list[SnapshotCommit]]:
    """The commits of a partition version (default: the newest), in snapshot order."""
    with connect(conn) as pgc, pgc.cursor() as cur:
        if partition_version is None:
            cur.execute(
                "SELECT version, snapshot::text[] FROM partition_info WHERE table_id = %s "
                "AND partition_desc = %s ORDER BY version DESC LIMIT 1",
                (table.table_id, partition_desc),
            )
        else:
            cur.execute(
                "SELECT version, snapshot::text[] FROM partition_info WHERE table_id = %s "
                "AND partition_desc = %s AND version = %s",
                (table.table_id, partition_desc, partition_version),
            )
        head = cur.fetchone()
        if head is None:
            return -1, []
        pversion, snapshot = head[0], [str(s) for s in head[1]]
        cur.execute(
            "SELECT s.cid::text, d.commit_op, d.files, v.version "
            "FROM unnest(%s::uuid[]) AS s(cid) "
            "JOIN LATERAL (SELECT dc.commit_op, ARRAY(SELECT ROW((f).path, (f).size, "
            "(f).file_exist_cols)::text FROM unnest(dc.file_ops) AS f "
            "WHERE (f).file_op = 'add') AS files FROM data_commit_info dc "
            "WHERE dc.table_id = %s AND dc.partition_desc = %s AND dc.commit_id = s.cid) d "
            "ON true "
            "LEFT JOIN LATERAL (SELECT cv.version FROM contest_commit_version cv "
            "WHERE cv.table_id = %s AND cv.partition_desc = %s AND cv.commit_id = s.cid) v "
            "ON true",
            (snapshot, table.table_id, partition_desc, table.table_id, partition_desc),
        )
        rows = {r[0]: r for r in cur.fetchall()}
    pgc.close()
    missing = [c for c in snapshot if c not in rows]
    if missing:
        raise TableError(f"table {table.name}: snapshot names commits with no data: {missing[:3]}")
    commits = []
    for cid in snapshot:
        _, op, raw_files, version = rows[cid]
        files = tuple(_parse_file_row(text) for text in raw_files)
        commits.append(SnapshotCommit(cid, op, files, version))
    return pversion, commits


def _parse_file_row(text: str) -> DataFile:
    """Parse PostgreSQL's text form of ROW(path, size, cols): `(path,123,"a,b")`."""
    import csv

    inner = text[1:-1]
    path, size, cols = next(csv.reader([inner], quotechar='"', escapechar="\\"))
    return DataFile(path=path, size=int(size), columns=tuple(c for c in cols.split(",") if c),
                    bucket=bucket_of_path(path))


def bucket_of_path(path: str) -> int:
    """LakeSoul names bucket files `part-<id>_<bucket:04>.<ext>`."""
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    tail = stem.rsplit("_", 1)[-1]
    if not tail.isdigit():
        raise TableError(f"data file name carries no hash bucket: {path}")
    return int(tail)


def evolve_schema(conn: PgConnection, table: TableRef, schema: pa.Schema) -> TableRef:
    """Give a table a newer schema (new columns; changed types are caught at read time).

    The schema is serialised by LakeSoul itself: a scratch table is created with
    it and its schema columns copied over, so every LakeSoul reader parses it."""
    missing = [k for k in table.primary_keys if k not in schema.names]
    if missing:
        raise TableError(f"new schema of {table.name} drops primary key column(s) {missing}")
    scratch = f"__contest_schema_{uuidlib.uuid4().hex[:12]}"
    native_catalog(conn, table.namespace).create_table(
        scratch, path=f"{table.path}/_schema_scratch_{scratch}", schema=schema,
        primary_keys=list(table.primary_keys), hash_bucket_num=table.hash_buckets)
    try:
        with connect(conn) as pgc, pgc.cursor() as cur:
            cur.execute(
                "UPDATE table_info t SET table_schema = s.table_schema, "
                "table_schema_arrow_ipc = s.table_schema_arrow_ipc, "
                "table_schema_arrow_ipc_json_hash = s.table_schema_arrow_ipc_json_hash "
                "FROM table_info s WHERE t.table_id = %s AND s.table_name = %s "
                "AND s.table_namespace = %s",
                (table.table_id, scratch, table.namespace),
            )
        pgc.close()
    finally:
        drop_table(conn, scratch, table.namespace)
    return get_table(conn, table.name, table.namespace)
