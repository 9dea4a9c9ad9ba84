"""What each peer format needs from Spark and from its table, derived from the config.

Pure functions (no Spark): the settings that must be in place when the session starts
(`start_conf`: under spark-submit they go on its command line, `submit_options`), the
settings a running session takes (`runtime_conf`), the table's properties, Hudi's write
options, and where an Iceberg table lives in its catalog.
"""

from __future__ import annotations

from pathlib import Path

from contest.config import Config
from contest.infra import packages

# The Iceberg catalog the jobs use: a Hadoop catalog, i.e. the warehouse folder itself
# holds each table's metadata pointer (version-hint.text) and commits by atomic rename.
# Chosen because it needs no server and the contest's tables are on a local disk, where
# rename is atomic. On an object store (no atomic rename) a JDBC catalog on the
# project's PostgreSQL would be the choice; it changes only the commit, not the MERGE.
ICEBERG_CATALOG = "peer"
# Hudi's ordering (precombine) field: the batch's version, so that of two writes of a key
# the newer batch wins whatever order Hudi sees them in.
HUDI_ORDERING = "_ver"

_CODEC_NAMES = {"none": "uncompressed"}


def is_peer(cfg: Config) -> bool:
    return bool(cfg.peer.format)


def coordinates(cfg: Config) -> tuple[str, ...]:
    """Maven coordinates of the configured format (peer.packages overrides the pin)."""
    if cfg.peer.packages:
        return tuple(c.strip() for c in cfg.peer.packages.split(",") if c.strip())
    return packages.coordinates([cfg.peer.format])


def start_conf(cfg: Config) -> dict[str, str]:
    """Settings read when the session starts (extensions, catalogs, serializer)."""
    fmt = cfg.peer.format
    if fmt == "delta":
        return {
            "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        }
    if fmt == "iceberg":
        return {
            "spark.sql.extensions": (
                "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
            ),
            f"spark.sql.catalog.{ICEBERG_CATALOG}": "org.apache.iceberg.spark.SparkCatalog",
            f"spark.sql.catalog.{ICEBERG_CATALOG}.type": "hadoop",
        }
    if fmt == "hudi":
        return {
            "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
            "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
            "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
            "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
        }
    return {}


def submit_options(cfg: Config) -> list[str]:
    """spark-submit options of a peer job: its packages and start settings (the JVM
    runs before the job's Python starts, so they cannot come from the session builder)."""
    if not is_peer(cfg):
        return []
    out = ["--packages", ",".join(coordinates(cfg))]
    for key, value in start_conf(cfg).items():
        out += ["--conf", f"{key}={value}"]
    return out


def runtime_conf(cfg: Config, table_path: Path) -> dict[str, str]:
    """SQL settings a running session takes, set by the job before it touches the table."""
    conf: dict[str, str] = {}
    if cfg.peer.broadcast_bytes:
        conf["spark.sql.autoBroadcastJoinThreshold"] = str(cfg.peer.broadcast_bytes)
    if cfg.peer.format == "delta" and cfg.peer.codec:
        # Delta writes through Spark's parquet writer, which takes the session's codec.
        conf["spark.sql.parquet.compression.codec"] = _codec(cfg.peer.codec)
    if cfg.peer.format == "iceberg":
        warehouse, _, _ = iceberg_location(table_path)
        conf[f"spark.sql.catalog.{ICEBERG_CATALOG}.warehouse"] = str(warehouse)
    return conf


def _codec(name: str) -> str:
    return _CODEC_NAMES.get(name, name)


def table_properties(cfg: Config) -> dict[str, str]:
    """Properties the table is created with (Delta, Iceberg); then peer.table's."""
    p = cfg.peer
    props: dict[str, str] = {}
    if p.format == "delta":
        props["delta.enableDeletionVectors"] = str(p.deletion_vectors).lower()
    elif p.format == "iceberg":
        props["format-version"] = "2"
        for op in ("merge", "update", "delete"):
            props[f"write.{op}.mode"] = p.merge_mode
        if p.codec:
            props["write.parquet.compression-codec"] = _codec(p.codec)
        if p.target_file_bytes:
            props["write.target-file-size-bytes"] = str(p.target_file_bytes)
        if p.distribution:
            props["write.distribution-mode"] = p.distribution
            props["write.merge.distribution-mode"] = p.distribution
    return props | dict(p.table)


def hudi_options(cfg: Config, table_path: Path, operation: str) -> dict[str, str]:
    """Hudi datasource options of one write: a MERGE_ON_READ table keyed by uuid, not
    partitioned, the batch version as ordering field; then the configured layout."""
    p = cfg.peer
    opts = {
        "hoodie.table.name": hudi_table_name(table_path),
        "hoodie.datasource.write.table.type": "MERGE_ON_READ",
        "hoodie.datasource.write.operation": operation,
        "hoodie.datasource.write.recordkey.field": "uuid",
        "hoodie.datasource.write.precombine.field": HUDI_ORDERING,
        "hoodie.datasource.write.partitionpath.field": "",
        "hoodie.datasource.write.keygenerator.class": (
            "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
        ),
    }
    if p.hudi_index:
        opts["hoodie.index.type"] = p.hudi_index
        if p.hudi_index == "BUCKET":
            opts["hoodie.index.bucket.engine"] = "SIMPLE"
    if p.buckets:
        opts["hoodie.bucket.index.num.buckets"] = str(p.buckets)
    if p.codec:
        opts["hoodie.parquet.compression.codec"] = _codec(p.codec)
    if p.target_file_bytes:
        opts["hoodie.parquet.max.file.size"] = str(p.target_file_bytes)
    return opts | dict(p.table)


def hudi_table_name(table_path: Path) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in Path(table_path).name)


def iceberg_location(table_path: Path) -> tuple[Path, str, str]:
    """(warehouse, namespace, table) of a table folder in a Hadoop catalog: the catalog
    keeps table `ns.t` at `<warehouse>/ns/t`, so the folder's parent is the namespace and
    its grandparent the warehouse."""
    path = Path(table_path).absolute()
    return path.parent.parent, path.parent.name, path.name


def iceberg_identifier(table_path: Path) -> str:
    _, namespace, name = iceberg_location(table_path)
    return f"{ICEBERG_CATALOG}.`{namespace}`.`{name}`"
