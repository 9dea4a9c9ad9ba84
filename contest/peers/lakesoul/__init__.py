"""LakeSoul: the harness's own tables (concurrent versioned upserts, the metadata merge,
merge operators on read; contest/write and contest/read) and LakeSoul's own released
libraries (write.engine = read.engine = lakesoul-stock). Neither is a `peer.format`: the
write and read engines choose them. And LakeSoul on its own Python engine, lakesoul-py
(native.py: a Python process, no JVM), a `peer.format` as the other native libraries."""

from __future__ import annotations

from contest.data.changes import KEY_TYPES, ChangeSupport
from contest.infra import lakesoul_jvm
from contest.peers.lakesoul import native
from contest.peers.native.base import native_implementation
from contest.peers.registry import (
    AutoMaintenance,
    FormatFamily,
    Implementation,
    Interop,
    Strategy,
    StreamTable,
    register,
)
from meta.stream import committed_count

# LakeSoul in the lists by format (`contest bench interop`'s families): the last, after
# the peers. Its implementations are the harness's engines (`optimized`: the harness's
# write and read, no `peer.format`) and LakeSoul's Python engine (lakesoul-py).
FAMILY = FormatFamily("lakesoul", "LakeSoul", rank=5)

# This project: concurrent versioned upserts, big-file-only repartition, uncompressed
# files, metadata merge, merge operators on read, each bucket's result written by its
# merge task.
OPTIMIZED = {"write.mode": "mor"}
# The contest example's merge-on-read path: sequential upserts with the connector's
# defaults (every batch shuffled into the buckets; the native writer's codec, zstd), and
# the result written by Spark (snappy, its default).
BASELINE_MOR = {
    "write.mode": "mor",
    "write.threads": 1,
    "write.big_file_bytes": 1,
    "write.repartition": 4,
    "write.task_rows": 0,  # 4 parts whatever the rows (the connector's 4 buckets)
    "write.codec": "zstd",
    "write.reader": "spark",
    "read.writer": "spark",
    "read.codec": "snappy",
}
# The contest example's main baseline: copy-on-write, a full outer join and an overwrite
# per batch; read as baseline-mor reads.
BASELINE_COW = {
    "write.mode": "cow",
    "write.threads": 1,
    "write.codec": "zstd",
    "write.reader": "spark",
    "read.writer": "spark",
    "read.codec": "snappy",
}
# Stock LakeSoul as far as this machine allows: tables and commits by LakeSoul's
# DBManager, rows written and merged by LakeSoul's native IO with its merge operators,
# sequential upserts in version order (contest/write/stock.py), loaded through
# spark.jars.packages; the result written by Spark (snappy, its default). Its preset
# tunes nothing: LakeSoul's libraries as shipped, so it has no `:defaults` row.
STOCK = {
    "write.engine": "lakesoul-stock",
    "read.engine": "lakesoul-stock",
    "write.threads": 1,
    "read.codec": "snappy",
}


# Change data in the harness's tables (contest/write/changes.py, contest/read/changes.py).
# optimized and baseline-mor take it (baseline-mor through the same change write, one
# task per row group, not its shuffle); baseline-cow refuses it in one line before any
# work (write.mode = cow: a full outer join per batch keeps no tombstones; its write
# refuses it too, whatever names the configuration).
CHANGES = ChangeSupport(
    deletes=(
        "LakeSoul's CDC column (table property lakesoul_cdc_change_column, insert/update/"
        "delete): delete rows kept as tombstones, each key's rows up to its last delete "
        "dropped by the merge-on-read"
    ),
    partial_columns=(
        "each data file holds its batch's columns only (the commit's file_exist_cols); "
        "the merge-on-read skips a column a file lacks"
    ),
    absent_is_not_null=True,
    key_types=tuple(t.name for t in KEY_TYPES),
    composite_keys=True,
)
# baseline-cow: the contest's upserts only (its copy-on-write join keeps no tombstones
# and no per-file columns).
COPY_ON_WRITE_CHANGES = ChangeSupport(
    no_deletes="copy-on-write's full outer join per batch keeps no tombstones"
)
# lakesoul-stock: LakeSoul 2.6.2's native IO library merges every row of a key with its
# merge operators; it has no CDC column (no "cdc" in its library's symbols or options):
# the connectors that drop deleted keys after the merge are not served here.
STOCK_CHANGES = ChangeSupport(
    no_deletes="LakeSoul 2.6.2's native IO has no CDC column option (its Spark and Flink "
    "connectors, which drop deleted keys after the merge, are not served here)",
    # The stock write declares a table's columns to LakeSoul's DBManager in Spark's
    # schema JSON, which it maps for string, int64 and int32 only (contest/infra/dbmanager.py).
    refused_types=tuple(
        (name, "the stock write declares string, int64 and int32 columns only")
        for name in ("decimal", "date", "timestamp", "timestamptz")
    ),
)


# A workload's `auto` maintenance policy (contest/workload/maintenance.py): LakeSoul's
# automatic compaction is a service of its own (a Spark job woken by PostgreSQL
# notifications), which neither the harness nor the stock engine runs.
AUTO = AutoMaintenance(
    "none: the harness's LakeSoul tables are compacted and vacuumed only when asked "
    "(contest compact, contest vacuum); LakeSoul's automatic compaction is a separate "
    "service, not run here"
)
STOCK_AUTO = AutoMaintenance(
    f"none: LakeSoul {lakesoul_jvm.LAKESOUL_VERSION}'s libraries (DBManager, native IO) "
    "compact nothing by themselves; LakeSoul's automatic compaction is a separate service, "
    "not run here"
)


def stream_commits(table: StreamTable) -> int:
    """The stream's commit rows in PostgreSQL (`contest_stream_batch`)."""
    return committed_count(table.conn, table.name, table.namespace)


register(
    Implementation(
        name="lakesoul",
        table_format="LakeSoul (the harness's tables)",
        runs_on="the harness's writer and merge-on-read",
        strategies=(
            Strategy(
                "optimized", OPTIMIZED, interop=Interop(writes=True, reads=True, compacted=True)
            ),
            Strategy("baseline-mor", BASELINE_MOR),
            Strategy("baseline-cow", BASELINE_COW, changes=COPY_ON_WRITE_CHANGES),
        ),
        stream="lakesoul",
        commit_records=stream_commits,
        changes=CHANGES,
        family=FAMILY,
        auto=AUTO,
    )
)
register(
    Implementation(
        name="lakesoul-stock",
        table_format=f"LakeSoul {lakesoul_jvm.LAKESOUL_VERSION}",
        runs_on="LakeSoul's own libraries (DBManager, native IO) in Spark",
        packages={lakesoul_jvm.PACKAGE_SET: lakesoul_jvm.COORDINATES},
        excludes={lakesoul_jvm.PACKAGE_SET: lakesoul_jvm.EXCLUDES},
        strategies=(Strategy("lakesoul-stock", STOCK),),
        changes=STOCK_CHANGES,
        family=FAMILY,
        auto=STOCK_AUTO,
    )
)

# lakesoul-py: parquet (every reader here reads it) in the contest's 4 hash buckets.
# Defaults: its writer's vortex-compact files and its own bucket count.
register(
    native_implementation(
        native, {"peer.file_format": "parquet", "peer.buckets": 4}, rank=3, family=FAMILY
    )
)
