"""Distributed replay (README, "Metadata: replay in version order"): the commit rows
are read through Spark's JDBC source in parallel partitions and ordered by a
distributed sort; the driver only receives the ordered commit ids, streamed.

Same rules as `meta.replay.order_commits` (a test checks both paths give the same
snapshot): the newest reset commit first, the commits after it by version, a commit
without a version after every version that arrived before it.
"""

from __future__ import annotations

import uuid as uuidlib
from typing import TYPE_CHECKING

import psycopg2
from psycopg2 import sql

from meta.connection import PgConnection
from meta.errors import MetaError
from meta.replay import RESET_OPS, Commit, ReplayError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# The JDBC driver the replay needs on Spark's classpath (the harness loads it by this
# coordinate: contest.infra.packages, set "jdbc").
JDBC_PACKAGE = "org.postgresql:postgresql:42.7.14"
READ_PARTITIONS = 8


class SparkOrderer:
    def __init__(self, spark: SparkSession, conn: PgConnection, partitions: int = READ_PARTITIONS):
        self.spark = spark
        self.conn = conn
        self.partitions = partitions

    def _query(self, table_id: str, desc: str, version: int) -> str:
        """The commit rows of one partition version, as a JDBC subquery. Spark's JDBC
        source takes no parameters, so values are quoted by psycopg2's sql.Literal."""
        tid = str(uuidlib.UUID(table_id))
        stmt = sql.SQL(
            # Lateral index lookups per snapshot entry: a plan that stays linear
            # whatever the table statistics say.
            "(SELECT s.pos, s.cid::text AS commit_id, d.commit_op, v.version "
            "FROM partition_info p CROSS JOIN LATERAL unnest(p.snapshot) WITH ORDINALITY "
            "AS s(cid, pos) "
            "JOIN LATERAL (SELECT dc.commit_op FROM data_commit_info dc "
            "WHERE dc.table_id = p.table_id AND dc.partition_desc = p.partition_desc "
            "AND dc.commit_id = s.cid) d ON true "
            "LEFT JOIN LATERAL (SELECT cv.version FROM contest_commit_version cv "
            "WHERE cv.table_id = p.table_id AND cv.partition_desc = p.partition_desc "
            "AND cv.commit_id = s.cid) v ON true "
            "WHERE p.table_id = {tid} AND p.partition_desc = {desc} AND p.version = {ver}) q"
        ).format(tid=sql.Literal(tid), desc=sql.Literal(desc), ver=sql.Literal(int(version)))
        with psycopg2.connect(**self.conn.dsn()) as pgc:
            text = stmt.as_string(pgc)
        pgc.close()
        return text

    def order(self, table_id: str, desc: str, version: int, expected: int) -> list[Commit]:
        # deferred: pyspark is slow to import (JVM-backed); only where Spark runs
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        url = f"jdbc:postgresql://{self.conn.host}:{self.conn.port}/{self.conn.database}"
        props = {
            "user": self.conn.username,
            "password": self.conn.password,
            "driver": "org.postgresql.Driver",
            "fetchsize": "50000",
        }
        predicates = [f"pos % {self.partitions} = {i}" for i in range(self.partitions)]
        rows = self.spark.read.jdbc(
            url, self._query(table_id, desc, version), predicates=predicates, properties=props
        )
        rows = rows.cache()
        try:
            found = rows.count()
            if found != expected:
                raise MetaError(f"snapshot names {expected} commits, {found} have data")
            top = rows.filter(F.col("commit_op").isin(*RESET_OPS)).agg(F.max("pos")).first()
            cut = top[0] if top is not None else None
            live = rows if cut is None else rows.filter(F.col("pos") >= cut)
            head = F.lit(cut if cut is not None else -1)
            # The reset commit heads the snapshot: it takes no part in the ordering.
            tail_version = F.when(F.col("pos") == head, None).otherwise(F.col("version"))
            dup = (
                live.filter(tail_version.isNotNull())
                .groupBy("version")
                .agg(
                    F.count("*").alias("n"), F.sort_array(F.collect_list("commit_id")).alias("ids")
                )
                .filter("n > 1")
                .orderBy("version")
                .first()
            )
            if dup is not None:
                raise ReplayError(
                    f"commits {dup['ids'][0]} and {dup['ids'][1]} both have "
                    f"version {dup['version']}"
                )
            first = F.when(F.col("pos") == head, 0).otherwise(1)
            if live.filter(F.col("version").isNull() & (F.col("pos") != head)).first():
                # Unversioned commits: the highest version arrived before them (a
                # running max over arrival order, one ordered window).
                seen = F.max(tail_version).over(
                    Window.orderBy("pos").rowsBetween(Window.unboundedPreceding, -1)
                )
                live = live.withColumn("__base", seen)
            else:
                live = live.withColumn("__base", F.lit(None).cast("bigint"))
            key = F.coalesce(F.col("version"), F.col("__base"), F.lit(-(2**63)))
            ordered = live.orderBy(first, key, F.col("version").isNull(), F.col("pos"))
            return [
                Commit(r["commit_id"], r["commit_op"], r["version"])
                for r in ordered.select("commit_id", "commit_op", "version").toLocalIterator(
                    prefetchPartitions=True
                )
            ]
        finally:
            rows.unpersist()
