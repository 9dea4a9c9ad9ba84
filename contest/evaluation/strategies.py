"""The strategies the harness evaluates: each a preset over the configuration's
defaults (a config file and flags still win), and the engine that runs it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

DEFAULT_SCALE = 0.1

# Each strategy is a preset over the defaults (a config file and flags still win).
STRATEGIES: dict[str, dict[str, object]] = {
    # This project: concurrent versioned upserts, big-file-only repartition,
    # uncompressed files, metadata merge, merge operators on read, each bucket's
    # result written by its merge task.
    "optimized": {"write.mode": "mor"},
    # The contest example's merge-on-read path: sequential upserts with the
    # connector's defaults (every batch shuffled into the buckets; the native
    # writer's codec, zstd), and the result written by Spark (snappy, its default).
    "baseline-mor": {
        "write.mode": "mor",
        "write.threads": 1,
        "write.big_file_bytes": 1,
        "write.repartition": 4,
        "write.task_rows": 0,  # 4 parts whatever the rows (the connector's 4 buckets)
        "write.codec": "zstd",
        "write.reader": "spark",
        "read.writer": "spark",
        "read.codec": "snappy",
    },
    # The contest example's main baseline: copy-on-write, a full outer join and an
    # overwrite per batch; read as baseline-mor reads.
    "baseline-cow": {
        "write.mode": "cow",
        "write.threads": 1,
        "write.codec": "zstd",
        "write.reader": "spark",
        "read.writer": "spark",
        "read.codec": "snappy",
    },
    # Stock LakeSoul as far as this machine allows: tables and commits by LakeSoul's
    # DBManager, rows written and merged by LakeSoul's native IO with its merge operators,
    # sequential upserts in version order (contest/write/stock.py), loaded through
    # spark.jars.packages; the result written by Spark (snappy, its default).
    "lakesoul-stock": {
        "write.engine": "lakesoul-stock",
        "read.engine": "lakesoul-stock",
        "write.threads": 1,
        "read.codec": "snappy",
    },
    # --- Peers: the table formats users pick instead, each merging every batch in
    # version order with MERGE INTO after collapsing it by key (contest/peers), timed
    # and checked like the others. Each preset is what a knowledgeable user of the
    # format would set for this workload: one key column, a third of each batch
    # updating earlier keys spread uniformly over the table, one full read at the end,
    # local disk, a few cores. The result is written with the same codec as optimized.
    #
    # Delta Lake 3.3.2, copy-on-write MERGE: every file holding a matched key is
    # rewritten. Keys are uniform, so nearly every file is touched by every batch:
    # few files (8 shuffle partitions: 8 files per MERGE) keep the rewrite count and the
    # read's file opens low; the collapsed batch is small next to the table, so it is
    # broadcast (no shuffle of the table in the join; 256 MB covers a scale-1 batch);
    # lz4_raw is the cheapest codec that still compresses, and CPU, not disk, is the
    # limit here; the snapshot of a short log is replayed in 2 partitions, not 50
    # (the default costs about a second per commit for a dozen log files).
    "delta-merge": {
        "peer.format": "delta",
        "peer.deletion_vectors": False,
        "peer.codec": "lz4_raw",
        "peer.broadcast_bytes": 256 * 1024 * 1024,
        "spark.shuffle_partitions": 8,
        "spark.conf": {"spark.databricks.delta.snapshotPartitions": "2"},
    },
    # Delta Lake 3.3.2 with deletion vectors: MERGE marks the matched rows of a file in
    # a deletion vector and writes only the new versions of the rows (no rewrite of
    # the untouched rows); the read drops marked rows. Same session settings as
    # delta-merge; statistics on uuid only (the one column MERGE's file pruning uses),
    # so each new file's footer statistics cost less.
    "delta-dv": {
        "peer.format": "delta",
        "peer.deletion_vectors": True,
        "peer.codec": "lz4_raw",
        "peer.broadcast_bytes": 256 * 1024 * 1024,
        "peer.table": {"delta.dataSkippingNumIndexedCols": "1"},
        "spark.shuffle_partitions": 8,
        "spark.conf": {"spark.databricks.delta.snapshotPartitions": "2"},
    },
    # Apache Iceberg 1.10.0, format v2, MERGE as merge-on-read: matched rows get
    # position deletes (delete files) and their new versions go to new data files;
    # the read applies the deletes. Hadoop catalog (contest/peers/formats.py says why).
    # No partitioning and an unordered upsert: distribution "none" skips the shuffle
    # that the default "hash" adds before every write; snappy instead of 1.10's zstd
    # (less CPU, and zstd undercuts the contest's stored-size floor at small scales);
    # 256 MB target files; the collapsed batch broadcast as for Delta.
    "iceberg-mor": {
        "peer.format": "iceberg",
        "peer.merge_mode": "merge-on-read",
        "peer.codec": "snappy",
        "peer.distribution": "none",
        "peer.target_file_bytes": 256 * 1024 * 1024,
        "peer.broadcast_bytes": 256 * 1024 * 1024,
        "spark.shuffle_partitions": 8,
    },
    # Apache Iceberg 1.10.0, format v3: the same MERGE as iceberg-mor, but merge-on-read
    # marks a data file's deleted rows in a deletion vector (one Puffin blob per data
    # file, merged with the file's earlier one) instead of adding position delete files
    # that pile up batch after batch ("Row-level deletes", v3 spec); the read applies at
    # most one vector per data file. The layout of iceberg-mor otherwise, but the MERGE's
    # rows hash-distributed: without it, two tasks of one MERGE can each write a vector
    # for the same data file, and the next MERGE fails with Iceberg's `Can't index
    # multiple DVs` (seen at scale 0.01 on schema-evolution; exact with hash).
    "iceberg-dv": {
        "peer.format": "iceberg",
        "peer.format_version": 3,
        "peer.merge_mode": "merge-on-read",
        "peer.codec": "snappy",
        "peer.distribution": "hash",
        "peer.target_file_bytes": 256 * 1024 * 1024,
        "peer.broadcast_bytes": 256 * 1024 * 1024,
        "spark.shuffle_partitions": 8,
    },
    # Apache Hudi 1.0.2, MERGE_ON_READ keyed by uuid, the batch version as ordering
    # field. Hudi refuses the contract's MERGE INTO on MOR tables (SET may not read
    # target columns), so the contract's expressions run in Spark over the batch's keys'
    # current rows and the result is upserted into log files (contest/peers/write.py).
    # uuids are random: a bucket index (hash of uuid into 8 fixed file groups) finds a
    # key's file group without looking anything up (no bloom probe, no key join); no
    # inline compaction (the contest reads once, at the end: the read merges the logs);
    # no metadata table (it speeds up file listing on object stores, costs a second
    # write per commit on a local disk); snappy instead of Hudi's gzip.
    "hudi-mor": {
        "peer.format": "hudi",
        "peer.hudi_index": "BUCKET",
        "peer.buckets": 8,
        "peer.codec": "snappy",
        "peer.table": {"hoodie.compact.inline": "false", "hoodie.metadata.enable": "false"},
        "spark.shuffle_partitions": 8,
    },
    # --- Peers that defer the merge, as LakeSoul does: each batch is appended and the
    # format's own merge runs at read (and in compactions), not at write.
    #
    # Apache Paimon 0.9.0 (paimon-spark-3.5, the newest Spark 3.5 connector the Maven
    # repository here serves), a primary-key table whose aggregation merge engine is the
    # contract (contest/peers/paimon.py: sum, last_non_null_value, sequence fields
    # version + row position). Settings per Paimon's documentation:
    # - fixed buckets (`bucket` = 8): "Data Distribution" page, fixed bucket mode hashes
    #   the key into a bucket (one LSM tree each) without the key index that dynamic
    #   buckets keep, and unlike dynamic buckets it allows several writers; 8 as for
    #   hudi-mor, one per shuffle partition ("Write Performance": sink parallelism at
    #   most, preferably equal to, the bucket count).
    # - `write-only` = true: "Multiple Writers" page, writers skip compaction (and
    #   snapshot expiration), so every commit only appends sorted runs and concurrent
    #   commits never conflict; the read merges the runs, as the contest reads once.
    # - `write-buffer-spillable` = true: "Write Performance" page, lets the writer's
    #   sort buffer spill to disk instead of failing on the 10M-row first batch.
    # - parquet with zstd (level 1): Paimon 0.9's defaults (`file.format`,
    #   `file.compression`: "For faster read and write, it is recommended to use zstd").
    "paimon-agg": {
        "peer.format": "paimon",
        "peer.buckets": 8,
        "peer.table": {"write-only": "true", "write-buffer-spillable": "true"},
        "spark.shuffle_partitions": 8,
    },
    # Apache Hudi 1.0.2, MERGE_ON_READ with the contract as a record merger compiled
    # into jvm/ (contest/peers/hudi_merger.py; Hudi 1.0's Record Mergers page recommends
    # mergers over payload classes): each collapsed batch is upserted as is, appended to
    # log files without reading the table; the merger merges at read. The layout of
    # hudi-mor (bucket index of 8 file groups, no inline compaction, no metadata table,
    # snappy), so the two differ only in where the merge runs.
    "hudi-merger": {
        "peer.format": "hudi-merger",
        "peer.hudi_index": "BUCKET",
        "peer.buckets": 8,
        "peer.codec": "snappy",
        "peer.table": {"hoodie.compact.inline": "false", "hoodie.metadata.enable": "false"},
        "spark.shuffle_partitions": 8,
    },
}


# Each peer strategy's row at the format's documented defaults (ClickBench's "tuned"
# entries apart from the defaults): what makes the strategy the strategy (its format,
# its merge mechanism, the contract's exactness) stays, every tuning setting of the
# preset above goes; the session is the harness's default one. Named `<strategy>:defaults`
# (`contest bench peers --strategies iceberg-mor,iceberg-mor:defaults`). A strategy whose
# preset tunes nothing has none (lakesoul-stock: LakeSoul's libraries as shipped,
# sequential; optimized and the baselines are this harness's own).
VARIANT = ":"
DEFAULTS: dict[str, dict[str, object]] = {
    # Delta 3.3.2: copy-on-write MERGE, snappy, Spark's 10 MB broadcast, 50 snapshot
    # partitions, statistics on the first 32 columns.
    "delta-merge": {"peer.format": "delta", "peer.deletion_vectors": False},
    "delta-dv": {"peer.format": "delta", "peer.deletion_vectors": True},
    # Iceberg 1.10: zstd, 512 MB target files, its own write distribution, Spark's
    # 10 MB broadcast.
    "iceberg-mor": {"peer.format": "iceberg", "peer.merge_mode": "merge-on-read"},
    "iceberg-dv": {
        "peer.format": "iceberg",
        "peer.format_version": 3,
        "peer.merge_mode": "merge-on-read",
    },
    # Hudi 1.0.2: its SIMPLE index (a join with the stored keys), gzip, compaction and
    # the metadata table as its Spark datasource sets them (hudi-merger keeps the parquet
    # log blocks its merger needs).
    "hudi-mor": {"peer.format": "hudi"},
    "hudi-merger": {"peer.format": "hudi-merger"},
    # Paimon 0.9: dynamic buckets (bucket = -1: a key index assigns buckets), writers
    # compact as they write, one writer (dynamic buckets take a single write job).
    "paimon-agg": {"peer.format": "paimon", "write.threads": 1},
}


def variant_name(strategy: str, variant: str = "defaults") -> str:
    return f"{strategy}{VARIANT}{variant}"


def strategy_names(variants: bool = False) -> list[str]:
    """The strategies; with `variants`, each one's `:defaults` row too."""
    names = list(STRATEGIES)
    return names + [variant_name(n) for n in DEFAULTS] if variants else names


def is_strategy(name: str) -> bool:
    base, _, variant = name.partition(VARIANT)
    return base in STRATEGIES and (not variant or (variant == "defaults" and base in DEFAULTS))


def preset(name: str) -> dict[str, object]:
    """The preset of a strategy or of a strategy's variant (`iceberg-mor:defaults`)."""
    base, _, variant = name.partition(VARIANT)
    if not is_strategy(name):
        raise KeyError(name)
    return dict(DEFAULTS[base] if variant else STRATEGIES[base])


def file_stem(name: str) -> str:
    """A strategy's name as a file or table name part (`:` is a URI scheme to Hadoop)."""
    return name.replace(VARIANT, "_")


def round_order(strategies: Sequence[T], rnd: int) -> list[T]:
    """Round `rnd` (from 1) of an interleaved comparison: the strategies rotated left
    by rnd - 1, so none always runs first, last or after the same neighbour."""
    if not strategies:
        return []
    k = (rnd - 1) % len(strategies)
    return [*strategies[k:], *strategies[:k]]


def stream_preset(name: str) -> dict[str, object]:
    """The settings of the first strategy preset on the format a stream of `name` runs
    (delta-merge, paimon-agg, hudi-merger): the peer layout the batch runs measure."""
    from contest.peers import formats

    fmt = formats.for_stream(name).name
    return next((dict(p) for p in STRATEGIES.values() if p.get("peer.format") == fmt), {})
