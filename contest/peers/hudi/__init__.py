"""Apache Hudi 1.0.2 on Spark, MERGE_ON_READ keyed by uuid: `hudi` upserts rows merged
in Spark (Hudi's MOR MERGE INTO cannot read target columns), `hudi-merger` upserts each
collapsed batch as it is and merges at read with the contract's record merger (jvm/).
And hudi-rs (native.py: a Python process, no JVM), a reader only."""

from __future__ import annotations

from dataclasses import replace

from contest.data.changes import KEY_TYPES, ChangeSupport
from contest.peers.hudi import native
from contest.peers.hudi.format import FORMAT
from contest.peers.hudi.merger import FORMAT as MERGER
from contest.peers.hudi.options import MERGE_ENGINE
from contest.peers.native.base import native_implementation
from contest.peers.registry import AutoMaintenance, FormatFamily, Interop, Strategy, register
from contest.peers.spark import spark_implementation

# Hudi in the lists by format (`contest bench interop`'s families): after Paimon.
FAMILY = FormatFamily("hudi", "Apache Hudi", rank=4)

# Hudi's Spark 3.5 bundle; it pulls hive-storage-api 2.8.1 and slf4j-api 1.7.36.
PACKAGES = {"hudi": ("org.apache.hudi:hudi-spark3.5-bundle_2.12:1.0.2",)}

# The layout both strategies share. uuids are random: a bucket index (hash of uuid into
# 8 fixed file groups) finds a key's file group without looking anything up (no bloom
# probe, no key join); no inline compaction (the contest reads once, at the end: the read
# merges the logs); no metadata table (it speeds up file listing on object stores, costs
# a second write per commit on a local disk); snappy instead of Hudi's gzip.
#
# hudi-mor: Hudi refuses the contract's MERGE INTO on MOR tables (SET may not read target
# columns), so the contract's expressions run in Spark over the batch's keys' current
# rows and the result is upserted into log files (format.py).
MOR = {
    "peer.format": "hudi",
    "peer.hudi_index": "BUCKET",
    "peer.buckets": 8,
    "peer.codec": "snappy",
    "peer.table": {"hoodie.compact.inline": "false", "hoodie.metadata.enable": "false"},
    "spark.shuffle_partitions": 8,
}
# hudi-merger: the contract as a record merger compiled into jvm/ (Hudi 1.0's Record
# Mergers page recommends mergers over payload classes): each collapsed batch is upserted
# as is, appended to log files without reading the table; the merger merges at read. The
# layout of hudi-mor, so the two differ only in where the merge runs.
MERGER_PRESET = {**MOR, "peer.format": MERGER.name}
# Hudi's documented defaults: its SIMPLE index (a join with the stored keys), gzip,
# compaction and the metadata table as its Spark datasource sets them (hudi-merger keeps
# the parquet log blocks its merger needs).

# Change data (hudi/changes.py): each batch collapsed with the delete rule; the key as
# Hudi's record key (two columns: the complex key generator). hudi-mor upserts a delete
# with Hudi's `_hoodie_is_deleted` = true and merges the batch with the keys' rows in
# Spark, so a column the batch lacks keeps the table's value and a NULL goes through its
# operator; hudi-merger upserts a delete as a tombstone the record merger resets the key
# on (Hudi's own marker lost a delete between a base row and a later insert) and writes a
# lacking column NULL, which the merger cannot tell from a NULL (UseLast with partial
# batches refused).
# A binary key is refused: Hudi makes the record key a string of the column's value, and a
# binary value's string is not its bytes (tried: one key came back once per write).
KEYS = tuple(t.name for t in KEY_TYPES if t.name != "16-byte binary")
# A timestamp without a zone is refused: Hudi 1.0.2's Spark-to-Avro schema converter has
# no TimestampNTZ (tried: "Failed to convert struct type to avro schema", the first batch).
TYPES = (
    (
        "timestamp",
        "Hudi 1.0.2's Avro schema converter has no timestamp without a time zone "
        "(Spark's TIMESTAMP_NTZ)",
    ),
)
MOR_CHANGES = ChangeSupport(
    deletes="upsert with _hoodie_is_deleted = true (the batch collapsed with the delete rule)",
    partial_columns="the batch merged in Spark with the keys' rows, lacking columns kept",
    absent_is_not_null=True,
    key_types=KEYS,
    composite_keys=True,
    refused_types=TYPES,
)
MERGER_CHANGES = replace(
    MOR_CHANGES,
    deletes="a tombstone record (_contest_deleted) the record merger resets the key on",
    partial_columns="a lacking column upserted NULL, which the record merger's rules skip",
    absent_is_not_null=False,
)

# A workload's `auto` maintenance policy (contest/workload/maintenance.py): Hudi's own
# table services as a Spark batch write runs them by default; hudi-mor's preset turns the
# inline compaction off (the contest reads once), so an `auto` lane drops that key.
AUTO = AutoMaintenance(
    "Hudi's inline compaction: a Spark batch write to a MERGE_ON_READ table compacts "
    "after every 5 delta commits (hoodie.compact.inline.max.delta.commits), and its "
    "cleaner runs after each commit keeping the last 10 commits' file slices "
    "(hoodie.clean.automatic, hoodie.clean.commits.retained)",
    off_keys=("hoodie.compact.inline",),
)

# Each streamed as its peer (`--format hudi`, `--format hudi-merger`). A stream upserts
# each micro-batch without reading the table: only the record merger applies the
# contract then, so a stream of `hudi` runs hudi-merger's.
register(
    spark_implementation(
        FORMAT,
        "Apache Hudi 1.0.2",
        "Spark (upsert of rows merged in Spark)",
        (
            Strategy(
                "hudi-mor",
                MOR,
                defaults={"peer.format": FORMAT.name},
                interop=Interop(writes=True, reads=True, compacted=True),
            ),
        ),
        packages=PACKAGES,
        changes=MOR_CHANGES,
        family=FAMILY,
        auto=AUTO,
    )
)
register(
    spark_implementation(
        MERGER,
        "Apache Hudi 1.0.2",
        "Spark (the contract's record merger)",
        (Strategy("hudi-merger", MERGER_PRESET, defaults={"peer.format": MERGER.name}),),
        packages=PACKAGES,
        changes=MERGER_CHANGES,
        family=FAMILY,
        auto=AUTO,
        merge_engine=MERGE_ENGINE,
    )
)

# hudi-rs: a reader only, no strategy (`contest bench interop` reads with it).
register(native_implementation(native, None, rank=5, family=FAMILY))
