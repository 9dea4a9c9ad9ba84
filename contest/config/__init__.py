"""One typed configuration, built in one direction: defaults, file, environment, flags.

Only `load_config` looks at the environment, and only through the mapping it is
given; every other module receives a frozen `Config`, and makes variants with
`dataclasses.replace` or `override`. Relative folders (state, work, results) are taken
from the folder the command runs in, never from where the package is installed.
The sections are in `contest.config.sections`, the loading in `contest.config.loading`,
validation in `contest.config.validation`; everything is imported from here.
"""

from __future__ import annotations

from contest.config.loading import (
    EMBEDDED_S3_FILE,
    ENV_KEYS,
    LAKESOUL_HOME,
    LAKESOUL_PROPERTIES,
    absolute_paths,
    apply_mapping,
    as_dict,
    embedded_s3_settings,
    get_key,
    lakesoul_home_settings,
    load_config,
    override,
    set_key,
    to_toml,
    unless_set,
)
from contest.config.sections import (
    CODECS,
    CONNECTOR_COORDINATES,
    DISTRIBUTIONS,
    READ_MERGES,
    RESULT_STATISTICS,
    STREAM_TRIGGERS,
    WRITE_SORTS,
    ClusterConfig,
    Config,
    ObjectStoreConfig,
    OracleConfig,
    PeerConfig,
    PgConfig,
    ReadConfig,
    SparkConfig,
    StreamConfig,
    TableConfig,
    WorkloadConfig,
    WriteConfig,
)

__all__ = [
    "CODECS",
    "READ_MERGES",
    "RESULT_STATISTICS",
    "WRITE_SORTS",
    "CONNECTOR_COORDINATES",
    "PgConfig",
    "SparkConfig",
    "TableConfig",
    "WriteConfig",
    "ReadConfig",
    "OracleConfig",
    "ObjectStoreConfig",
    "ClusterConfig",
    "PeerConfig",
    "DISTRIBUTIONS",
    "WorkloadConfig",
    "STREAM_TRIGGERS",
    "StreamConfig",
    "Config",
    "ENV_KEYS",
    "EMBEDDED_S3_FILE",
    "LAKESOUL_HOME",
    "LAKESOUL_PROPERTIES",
    "set_key",
    "get_key",
    "unless_set",
    "apply_mapping",
    "override",
    "load_config",
    "embedded_s3_settings",
    "lakesoul_home_settings",
    "to_toml",
    "absolute_paths",
    "as_dict",
]
