"""LakeSoul's own metadata client, `DBManager` (lakesoul-common 2.6.2), driven from the
Spark driver through py4j: create tables, commit data files, read the snapshot.

`DBManager.commitDataCommitInfo` returns nothing and, under concurrent writers, sometimes
drops a commit without a word (the boolean of `commitData` inside it is ignored): every
commit here is verified (`committed` set on its data_commit_info row) and re-driven until
it is (README, "LakeSoul's JVM libraries").
"""

from __future__ import annotations

import json
import random
import time
import uuid as uuidlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import pyarrow as pa

from contest.errors import RunError
from contest.infra.lakesoul_jvm import PARTITION_DESC, jlist
from meta.catalog import schema_from_json

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MAX_REDRIVES = 100
SPARK_TYPES = {pa.string(): "string", pa.int64(): "long", pa.int32(): "integer"}


@dataclass(frozen=True)
class StockTable:
    table_id: str
    name: str
    namespace: str
    path: str
    schema_json: str
    primary_keys: tuple[str, ...]


@dataclass(frozen=True)
class CommitFiles:
    """One commit of a snapshot: its data files, and the columns they hold (the commit's
    `file_exist_cols`; empty when it names none)."""

    paths: list[str]
    columns: tuple[str, ...]


@dataclass(frozen=True)
class StockCommit:
    commit_id: str
    redriven: int  # times commitDataCommitInfo ran again because the commit was lost
    seconds: float


def spark_schema_json(schema: pa.Schema) -> str:
    """The schema as LakeSoul's Spark connector stores it (Spark's StructType JSON)."""
    fields = []
    for f in schema:
        if f.type not in SPARK_TYPES:
            raise RunError(
                f"column {f.name}: type {f.type} is not supported (string, int64, int32)"
            )
        fields.append(
            {"name": f.name, "type": SPARK_TYPES[f.type], "nullable": True, "metadata": {}}
        )
    return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))


def columns_of(schema_json: str) -> list[str]:
    """`name:type` of each column (the helper's column spec), from a table's schema as
    LakeSoul stores it (Spark's JSON or the PyPI package's Arrow JSON)."""
    schema = schema_from_json(schema_json)
    spark_schema_json(schema)  # supported types only
    return column_specs(schema)


def column_specs(schema: pa.Schema) -> list[str]:
    """`name:type` of each column, as jvm/ StockIO takes them."""
    return [f"{f.name}:{SPARK_TYPES[f.type]}" for f in schema]


class DBManager:
    """One DBManager in the driver's JVM (thread-safe: py4j gives each Python thread its
    own JVM thread, and DBManager's calls are independent transactions)."""

    def __init__(self, spark: SparkSession):
        self.jvm = cast(Any, spark._jvm)
        meta = self.jvm.com.dmetasoul.lakesoul.meta
        self.db = meta.DBManager()
        self.util = meta.DBUtil
        self.entity = meta.entity

    def create_table(
        self,
        name: str,
        namespace: str,
        path: str,
        schema: pa.Schema,
        primary_key: str,
        hash_buckets: int,
    ) -> StockTable:
        table_id = f"table_{uuidlib.uuid4()}"
        props = self.jvm.com.alibaba.fastjson.JSONObject()
        props.put("hashBucketNum", str(hash_buckets))
        props.put("hashPartitions", primary_key)
        partitions = self.util.formatTableInfoPartitionsField(primary_key, "")
        schema_json = spark_schema_json(schema)
        self.db.createNewTable(table_id, namespace, name, path, schema_json, props, partitions)
        return StockTable(table_id, name, namespace, path, schema_json, (primary_key,))

    def table(self, name: str, namespace: str) -> StockTable | None:
        info = self.db.getTableInfoByNameAndNamespace(name, namespace)
        if info is None or not info.getTableId():
            return None
        hashed = (info.getPartitions() or ";").split(";", 1)[1]
        return StockTable(
            info.getTableId(),
            name,
            namespace,
            info.getTablePath(),
            info.getTableSchema(),
            tuple(c for c in hashed.split(",") if c),
        )

    def _commit_info(
        self, table_id: str, commit_id: str, files: Sequence[tuple[str, int]], columns: str
    ) -> Any:
        e, j = self.entity, self.jvm
        builder = (
            e.DataCommitInfo.newBuilder()
            .setTableId(table_id)
            .setPartitionDesc(PARTITION_DESC)
            .setCommitId(self.util.toProtoUuid(j.java.util.UUID.fromString(commit_id)))
            .setCommitOp(e.CommitOp.MergeCommit)
            .setTimestamp(int(time.time() * 1000))
            .setCommitted(False)
        )
        for path, size in files:
            builder.addFileOps(
                e.DataFileOp.newBuilder()
                .setPath(path)
                .setFileOp(e.FileOp.add)
                .setSize(size)
                .setFileExistCols(columns)
                .build()
            )
        return builder.build()

    def committed(self, table_id: str, info: Any) -> bool:
        ids = jlist(self.jvm, [info.getCommitId()])
        found = self.db.getDataCommitInfosFromUUIDs(table_id, PARTITION_DESC, ids)
        return bool(found.size()) and bool(found.get(0).getCommitted())

    def commit(
        self,
        table_id: str,
        files: Sequence[tuple[str, int]],
        columns: Sequence[str],
        *,
        verify: bool = True,
        commit_id: str | None = None,
    ) -> StockCommit:
        """A MergeCommit of `files` by DBManager; with `verify`, re-driven until it landed.
        `commit_id`: the id to commit under (one whose version was claimed beforehand)."""
        started = time.perf_counter()
        commit_id = commit_id or str(uuidlib.uuid4())
        info = self._commit_info(table_id, commit_id, files, ",".join(columns))
        self.db.commitDataCommitInfo(info, self.jvm.java.util.ArrayList())
        redriven = 0
        while verify and not self.committed(table_id, info):
            redriven += 1
            if redriven > MAX_REDRIVES:
                raise RunError(
                    f"DBManager did not commit {commit_id} after {MAX_REDRIVES} attempts"
                )
            time.sleep(random.uniform(0.001, 0.02))
            self.db.commitDataCommitInfo(info, self.jvm.java.util.ArrayList())
        return StockCommit(commit_id, redriven, time.perf_counter() - started)

    def update_schema(self, table_id: str, schema: pa.Schema) -> str:
        """The table's schema replaced by `schema` (DBManager's `updateTableSchema`, what
        LakeSoul's connector calls when a write adds a column); its JSON."""
        schema_json = spark_schema_json(schema)
        self.db.updateTableSchema(table_id, schema_json)
        return schema_json

    def partition_versions(self, table_id: str) -> list[tuple[int, list[str]]]:
        """Every version of the table's partition LakeSoul keeps, oldest first: (version,
        the commit ids of its snapshot in apply order)."""
        infos = self.db.getOnePartitionVersions(table_id, PARTITION_DESC)
        return sorted((int(p.getVersion()), self._ids(p)) for p in infos)

    def _ids(self, info: Any) -> list[str]:
        """The commit ids of a partition version's snapshot, in apply order."""
        return [str(self.util.toJavaUUID(u)) for u in info.getSnapshotList()]

    def snapshot(self, table_id: str, version: int | None = None) -> list[CommitFiles]:
        """The files of each commit of the head snapshot (or of the partition's
        `version`, DBManager's `getSinglePartitionInfo(table, desc, version)`), in
        snapshot (apply) order."""
        if version is None:
            info = self.db.getSinglePartitionInfo(table_id, PARTITION_DESC)
        else:
            info = self.db.getSinglePartitionInfo(table_id, PARTITION_DESC, version)
        if info is None:
            return []
        return self.commit_files(table_id, info, self._ids(info))

    def commit_files(self, table_id: str, info: Any, ids: Sequence[str]) -> list[CommitFiles]:
        """The files of the commits `ids` of the partition version `info`, in that order."""
        datas = self.db.getTableSinglePartitionDataInfo(info)
        by_id = {str(self.util.toJavaUUID(d.getCommitId())): d for d in datas}
        out = []
        for uid in ids:
            data = by_id.get(uid)
            if data is None:
                raise RunError(f"snapshot of {table_id} names a commit with no data: {uid}")
            ops = list(data.getFileOpsList())
            columns: dict[str, None] = {}
            for op in ops:
                columns.update(dict.fromkeys(c for c in op.getFileExistCols().split(",") if c))
            out.append(CommitFiles([op.getPath() for op in ops], tuple(columns)))
        return out

    def changes(self, table_id: str, start: int, end: int) -> list[CommitFiles]:
        """The files of the commits the partition's version `end` holds and its version
        `start` does not, in apply order: the commits made after `start` up to `end`."""
        before = self.db.getSinglePartitionInfo(table_id, PARTITION_DESC, start)
        after = self.db.getSinglePartitionInfo(table_id, PARTITION_DESC, end)
        if after is None:
            return []
        old = set() if before is None else set(self._ids(before))
        return self.commit_files(table_id, after, [i for i in self._ids(after) if i not in old])
