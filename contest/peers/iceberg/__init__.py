"""Apache Iceberg 1.10.0 on Spark: MERGE INTO a table of a Hadoop catalog, as
merge-on-read with position delete files (format v2) or deletion vectors (v3). And
Iceberg on its own Python library, PyIceberg (native.py: a Python process, no JVM)."""

from __future__ import annotations

from contest.peers.change_merge import MERGE_CHANGES
from contest.peers.iceberg import native
from contest.peers.iceberg.format import FORMAT
from contest.peers.native.base import native_implementation
from contest.peers.registry import AutoMaintenance, FormatFamily, Interop, Strategy, register
from contest.peers.spark import spark_implementation

# Iceberg in the lists by format (`contest bench interop`'s families): after Delta.
FAMILY = FormatFamily("iceberg", "Apache Iceberg", rank=2)

# Iceberg's Spark 3.5 runtime jar (self-contained).
PACKAGES = {"iceberg": ("org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0",)}

# Format v2, MERGE as merge-on-read: matched rows get position deletes (delete files) and
# their new versions go to new data files; the read applies the deletes. Hadoop catalog
# (format.py says why). No partitioning and an unordered upsert: distribution "none"
# skips the shuffle that the default "hash" adds before every write; snappy instead of
# 1.10's zstd (less CPU, and zstd undercuts the contest's stored-size floor at small
# scales); 256 MB target files; the collapsed batch broadcast as for Delta.
MERGE_ON_READ = {
    "peer.format": "iceberg",
    "peer.merge_mode": "merge-on-read",
    "peer.codec": "snappy",
    "peer.distribution": "none",
    "peer.target_file_bytes": 256 * 1024 * 1024,
    "peer.broadcast_bytes": 256 * 1024 * 1024,
    "spark.shuffle_partitions": 8,
}
# Format v3: the same MERGE, but merge-on-read marks a data file's deleted rows in a
# deletion vector (one Puffin blob per data file, merged with the file's earlier one)
# instead of adding position delete files that pile up batch after batch ("Row-level
# deletes", v3 spec); the read applies at most one vector per data file. The MERGE's
# rows hash-distributed: without it, two tasks of one MERGE can each write a vector for
# the same data file, and the next MERGE fails with Iceberg's `Can't index multiple DVs`
# (seen at scale 0.01 on schema-evolution; exact with hash).
DELETION_VECTORS = {
    "peer.format": "iceberg",
    "peer.format_version": 3,
    **MERGE_ON_READ,
    "peer.distribution": "hash",
}
# Iceberg 1.10's documented defaults: zstd, 512 MB target files, its own write
# distribution, Spark's 10 MB broadcast.
DEFAULTS = {"peer.format": "iceberg", "peer.merge_mode": "merge-on-read"}

# Change data by Iceberg's own MERGE (contest/peers/change_merge.py, `MERGE_CHANGES`).
CHANGES = MERGE_CHANGES

# A workload's `auto` maintenance policy (contest/workload/maintenance.py): Iceberg's
# maintenance is procedures a user calls; a commit removes nothing by default.
AUTO = AutoMaintenance(
    "none: Iceberg 1.10 compacts (rewrite_data_files) and expires snapshots "
    "(expire_snapshots) only when called; a commit keeps old metadata files by default "
    "(write.metadata.delete-after-commit.enabled = false)"
)
NATIVE_AUTO = AutoMaintenance(
    f"none: pyiceberg {native.VERSION} compacts and expires snapshots only when called"
)

register(
    spark_implementation(
        FORMAT,
        "Apache Iceberg 1.10.0",
        "Spark (MERGE INTO)",
        (
            Strategy(
                "iceberg-mor",
                MERGE_ON_READ,
                defaults=DEFAULTS,
                interop=Interop(writes=True, reads=True),
            ),
            Strategy(
                "iceberg-dv",
                DELETION_VECTORS,
                defaults={"peer.format": "iceberg", "peer.format_version": 3, **DEFAULTS},
                # Its table (deletion vectors) is read by Iceberg's readers, before and
                # after rewrite_data_files; iceberg-mor reads as Spark's Iceberg.
                interop=Interop(writes=True, compacted=True),
            ),
        ),
        packages=PACKAGES,
        changes=CHANGES,
        family=FAMILY,
        auto=AUTO,
        # Iceberg's commit records are not counted here (its peer has no count).
        counts_commits=False,
    )
)

# pyiceberg: snappy, as iceberg-mor. Defaults: PyIceberg's zstd.
register(
    native_implementation(native, {"peer.codec": "snappy"}, rank=2, family=FAMILY, auto=NATIVE_AUTO)
)
