"""Where files live: one place that turns a path or URI into a pyarrow filesystem.

Every reader and writer of table, batch and result files goes through `filesystem`,
so local paths and object-store URIs take the same code path. `s3://bucket/key` (and
Hadoop's spelling `s3a://`) opens the configured S3-compatible store: the driver is
told it by `configure`, Spark tasks find it in their environment (the AWS variables
`session_conf` gives executors).
"""

from __future__ import annotations

import functools
import os
from typing import Any

import pyarrow.fs as pafs

from contest.config import ObjectStoreConfig
from contest.config.stores import object_store_from_env

OBJECT_STORE_SCHEMES = ("s3://", "s3a://")

_configured: ObjectStoreConfig | None = None


def is_object_store(uri: str | object) -> bool:
    return str(uri).startswith(OBJECT_STORE_SCHEMES)


def configure(store: ObjectStoreConfig) -> None:
    """The object store of this process (the driver's, from its Config)."""
    global _configured
    _configured = store if store.configured else None


def current_store() -> ObjectStoreConfig:
    if _configured is not None:
        return _configured

    return object_store_from_env(os.environ)


@functools.lru_cache(maxsize=4)
def s3_filesystem(store: ObjectStoreConfig, create_buckets: bool = False) -> Any:
    """pyarrow's S3 filesystem for the store (one per process and store: cheap to reuse);
    only the one asked for with `create_buckets` may create buckets."""
    kwargs: dict[str, Any] = {"region": store.region, "allow_bucket_creation": create_buckets}
    if store.endpoint:
        scheme, _, host = store.endpoint.partition("://")
        kwargs.update(endpoint_override=host.rstrip("/"), scheme=scheme)
    if store.access_key:
        kwargs.update(access_key=store.access_key, secret_key=store.secret_key)
    if store.path_style:
        kwargs["force_virtual_addressing"] = False
    return pafs.S3FileSystem(**kwargs)


def filesystem(uri: str) -> tuple[Any, str]:
    """(pyarrow filesystem, path inside it) for a local path or a URI."""
    if is_object_store(uri):
        return s3_filesystem(current_store()), uri.split("://", 1)[1].rstrip("/")

    return pafs.FileSystem.from_uri(uri)


def s3a_conf(store: ObjectStoreConfig) -> dict[str, str]:
    """Hadoop's s3a settings for Spark's own readers and writers (`spark.read.parquet`
    of an s3:// batch folder), for the store pyarrow uses."""
    conf = {
        # s3:// is Hadoop's s3a too (the URIs the project's own readers take).
        "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "spark.hadoop.fs.s3a.endpoint.region": store.region,
        "spark.hadoop.fs.s3a.path.style.access": str(store.path_style).lower(),
        # S3Proxy's filesystem backend stalls on deleting a directory marker whose
        # folder is not empty (which s3a does after every write) and on bulk deletes.
        "spark.hadoop.fs.s3a.directory.marker.retention": "keep",
        "spark.hadoop.fs.s3a.multiobjectdelete.enable": "false",
        "spark.hadoop.mapreduce.fileoutputcommitter.cleanup.skipped": "true",
    }
    if store.endpoint:
        conf["spark.hadoop.fs.s3a.endpoint"] = store.endpoint
        ssl = store.endpoint.startswith("https://")
        conf["spark.hadoop.fs.s3a.connection.ssl.enabled"] = str(ssl).lower()
    if store.access_key:
        conf.update(
            {
                "spark.hadoop.fs.s3a.aws.credentials.provider": (
                    "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
                ),
                "spark.hadoop.fs.s3a.access.key": store.access_key,
                "spark.hadoop.fs.s3a.secret.key": store.secret_key,
            }
        )
    return conf


def delete_tree(uri: str) -> None:
    """Remove a folder (local or in the object store) and everything in it, if present."""
    fs, path = filesystem(uri)
    try:
        fs.delete_dir(path)
    except FileNotFoundError:
        pass


def lakesoul_options(store: ObjectStoreConfig) -> dict[str, str]:
    """The store as LakeSoul's native IO takes it (`object_store_options`)."""
    opts = {
        "fs.s3a.endpoint.region": store.region,
        "fs.s3a.path.style.access": str(store.path_style).lower(),
    }
    if store.endpoint:
        opts["fs.s3a.endpoint"] = store.endpoint
    if store.access_key:
        opts.update({"fs.s3a.access.key": store.access_key, "fs.s3a.secret.key": store.secret_key})
    return opts
