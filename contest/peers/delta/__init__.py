"""Delta Lake 3.3.2 on Spark: MERGE INTO a path table, copy-on-write or with deletion
vectors; its stream a foreachBatch MERGE made idempotent by txnAppId/txnVersion. And
Delta Lake on its own Rust library, delta-rs (native.py: a Python process, no JVM)."""

from __future__ import annotations

from contest.peers.change_merge import MERGE_CHANGES
from contest.peers.delta import native
from contest.peers.delta.format import FORMAT
from contest.peers.native.base import native_implementation
from contest.peers.registry import AutoMaintenance, FormatFamily, Interop, Strategy, register
from contest.peers.spark import spark_implementation

# Delta Lake in the lists by format (`contest bench interop`'s families): the first.
FAMILY = FormatFamily("delta", "Delta Lake", rank=1)

# The delta-spark jar of the same release as the `delta-spark` Python package pinned in
# pyproject.toml; it pulls delta-storage 3.3.2 and antlr4-runtime 4.9.3.
PACKAGES = {"delta": ("io.delta:delta-spark_2.12:3.3.2",)}

# Copy-on-write MERGE: every file holding a matched key is rewritten. Keys are uniform,
# so nearly every file is touched by every batch: few files (8 shuffle partitions: 8
# files per MERGE) keep the rewrite count and the read's file opens low; the collapsed
# batch is small next to the table, so it is broadcast (no shuffle of the table in the
# join; 256 MB covers a scale-1 batch); lz4_raw is the cheapest codec that still
# compresses, and CPU, not disk, is the limit here; the snapshot of a short log is
# replayed in 2 partitions, not 50 (the default costs about a second per commit for a
# dozen log files).
MERGE = {
    "peer.format": "delta",
    "peer.deletion_vectors": False,
    "peer.codec": "lz4_raw",
    "peer.broadcast_bytes": 256 * 1024 * 1024,
    "spark.shuffle_partitions": 8,
    "spark.conf": {"spark.databricks.delta.snapshotPartitions": "2"},
}
# With deletion vectors: MERGE marks the matched rows of a file in a deletion vector and
# writes only the new versions of the rows (no rewrite of the untouched rows); the read
# drops marked rows. Same session settings as delta-merge; statistics on uuid only (the
# one column MERGE's file pruning uses), so each new file's footer statistics cost less.
DELETION_VECTORS = {
    "peer.format": "delta",
    "peer.deletion_vectors": True,
    "peer.codec": "lz4_raw",
    "peer.broadcast_bytes": 256 * 1024 * 1024,
    "peer.table": {"delta.dataSkippingNumIndexedCols": "1"},
    "spark.shuffle_partitions": 8,
    "spark.conf": {"spark.databricks.delta.snapshotPartitions": "2"},
}
# Delta's documented defaults: copy-on-write MERGE, snappy, Spark's 10 MB broadcast, 50
# snapshot partitions, statistics on the first 32 columns.

# Change data by Delta's own MERGE (contest/peers/change_merge.py, `MERGE_CHANGES`).
CHANGES = MERGE_CHANGES

# A workload's `auto` maintenance policy (contest/workload/maintenance.py): Delta 3.3's
# auto compaction is off unless set, and VACUUM is never run by Delta itself.
AUTO = AutoMaintenance(
    "none: Delta 3.3 compacts only when asked (its auto compaction, "
    "delta.autoOptimize.autoCompact, is off by default) and never VACUUMs by itself; a "
    "commit only checkpoints the log (every 10 commits)"
)
# delta-rs: optimize and vacuum are calls of the library's, never made by a write.
NATIVE_AUTO = AutoMaintenance(
    f"none: delta-rs {native.VERSION} compacts (optimize.compact) and vacuums only when called"
)

register(
    spark_implementation(
        FORMAT,
        "Delta Lake 3.3.2",
        "Spark (MERGE INTO)",
        (
            Strategy(
                "delta-merge",
                MERGE,
                defaults={"peer.format": "delta", "peer.deletion_vectors": False},
                interop=Interop(writes=True, reads=True),
            ),
            Strategy(
                "delta-dv",
                DELETION_VECTORS,
                defaults={"peer.format": "delta", "peer.deletion_vectors": True},
                # Its table (deletion vectors) is read by Delta's readers, before and
                # after OPTIMIZE; delta-merge reads as Spark's Delta.
                interop=Interop(writes=True, compacted=True),
            ),
        ),
        packages=PACKAGES,
        changes=CHANGES,
        family=FAMILY,
        auto=AUTO,
    )
)

# delta-rs: lz4_raw, as delta-merge (the cheapest codec that still compresses). Defaults:
# delta-rs's own writer properties (snappy).
register(
    native_implementation(
        native,
        {"peer.codec": "lz4_raw"},
        rank=1,
        family=FAMILY,
        merge_engine=native.MERGE_ENGINE,
        auto=NATIVE_AUTO,
    )
)
