"""The strategies the harness evaluates: each a preset over the configuration's
defaults (a config file and flags still win), and the engine that runs it."""

from __future__ import annotations

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
}
