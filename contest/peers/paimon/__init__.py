"""Apache Paimon 0.9.0 on Spark: a primary-key table whose aggregation merge engine is
the contract; batches append sorted runs and the merge runs at read, as LakeSoul's. And
Paimon's Python API, pypaimon (native.py): named, and refused in one line (it cannot be
installed beside the harness)."""

from __future__ import annotations

from contest.data.changes import KEY_TYPES, ChangeSupport
from contest.peers.native.base import native_implementation
from contest.peers.paimon import native
from contest.peers.paimon.format import FORMAT
from contest.peers.paimon.table import MERGE_ENGINE
from contest.peers.registry import AutoMaintenance, FormatFamily, Interop, Strategy, register
from contest.peers.spark import spark_implementation

# Paimon in the lists by format (`contest bench interop`'s families): after Iceberg.
FAMILY = FormatFamily("paimon", "Apache Paimon", rank=3)

# Paimon's Spark 3.5 connector (a self-contained jar); the newest release of it the Maven
# repository serves.
PACKAGES = {"paimon": ("org.apache.paimon:paimon-spark-3.5:0.9.0",)}

# Settings per Paimon's documentation:
# - fixed buckets (`bucket` = 8): "Data Distribution" page, fixed bucket mode hashes the
#   key into a bucket (one LSM tree each) without the key index that dynamic buckets
#   keep, and unlike dynamic buckets it allows several writers; 8 as for hudi-mor, one
#   per shuffle partition ("Write Performance": sink parallelism at most, preferably
#   equal to, the bucket count).
# - `write-only` = true: "Multiple Writers" page, writers skip compaction (and snapshot
#   expiration), so every commit only appends sorted runs and concurrent commits never
#   conflict; the read merges the runs, as the contest reads once.
# - `write-buffer-spillable` = true: "Write Performance" page, lets the writer's sort
#   buffer spill to disk instead of failing on the 10M-row first batch.
# - parquet with zstd (level 1): Paimon 0.9's defaults (`file.format`,
#   `file.compression`: "For faster read and write, it is recommended to use zstd").
AGGREGATION = {
    "peer.format": "paimon",
    "peer.buckets": 8,
    "peer.table": {"write-only": "true", "write-buffer-spillable": "true"},
    "spark.shuffle_partitions": 8,
}
# Paimon 0.9's documented defaults: dynamic buckets (bucket = -1: a key index assigns
# buckets), writers compact as they write, one writer (dynamic buckets take a single
# write job).
DEFAULTS = {"peer.format": "paimon", "write.threads": 1}

# Change data (format.py `change_rows`): the workload's key as the primary key (one or two
# columns, every key type); a batch lacking payload columns writes them NULL, which every
# aggregate but last_value skips, so the merged value stays (UseLast with partial batches
# refused: a NULL is not told from an absent column). No deletes: Paimon 0.9's aggregation
# merge engine takes a `-D` row (`rowkind.field`) as a retraction, field by field (sum
# subtracts the row's value, last_non_null_value clears the field on a non-NULL one), and
# keeps the key: tried on Spark, +I 5, -D, +I 7 merged to 12. Removing the row on delete
# is `partial-update.remove-record-on-delete`, for the partial-update engine without
# aggregate functions (0.9 refuses them without sequence groups, and both together).
CHANGES = ChangeSupport(
    no_deletes="Paimon 0.9's aggregation engine retracts a -D row field by field and keeps "
    "the key (remove-record-on-delete is the partial-update engine's, which 0.9 refuses "
    "beside aggregate functions)",
    partial_columns="the aggregation merge engine: a lacking column written NULL, which its "
    "aggregates but last_value skip",
    absent_is_not_null=False,
    key_types=tuple(t.name for t in KEY_TYPES),
    composite_keys=True,
)

# A workload's `auto` maintenance policy (contest/workload/maintenance.py): Paimon's
# writers compact and expire as they commit; paimon-agg's preset (`write-only`) turns
# both off, so an `auto` lane drops that key.
AUTO = AutoMaintenance(
    "Paimon's sorted-run trigger: a writer compacts a bucket once it holds 5 sorted runs "
    "(num-sorted-run.compaction-trigger) and expires snapshots at commit beyond the 10 "
    "newest once older than an hour (snapshot.num-retained.min, snapshot.time-retained)",
    off_keys=("write-only",),
)

register(
    spark_implementation(
        FORMAT,
        "Apache Paimon 0.9.0",
        "Spark (the aggregation merge engine)",
        (
            Strategy(
                "paimon-agg",
                AGGREGATION,
                defaults=DEFAULTS,
                interop=Interop(writes=True, reads=True, compacted=True),
            ),
        ),
        packages=PACKAGES,
        changes=CHANGES,
        family=FAMILY,
        auto=AUTO,
        merge_engine=MERGE_ENGINE,
    )
)

# pypaimon: its defaults (it cannot run here: native.WHY). A reader only in the interop
# matrix (its cells refused there in one line): it writes no table for the others.
register(
    native_implementation(
        native, {}, rank=4, family=FAMILY, interop=Interop(reads=True), unavailable=native.WHY
    )
)
