"""The object store's settings as environment variables, both ways: child processes and
Spark executors get them by environment (never by file), and a task reads them back."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contest.config import ENV_KEYS, ObjectStoreConfig


def object_store_env(store: ObjectStoreConfig) -> dict[str, str]:
    """The object store as the AWS variables: for child processes and Spark executors,
    whose pyarrow reads them (the inverse of ENV_KEYS)."""
    values = {
        "AWS_ENDPOINT_URL": store.endpoint,
        "AWS_ACCESS_KEY_ID": store.access_key,
        "AWS_SECRET_ACCESS_KEY": store.secret_key,
        "AWS_REGION": store.region,
    }
    return {k: v for k, v in values.items() if v}


def object_store_from_env(env: Mapping[str, str]) -> ObjectStoreConfig:
    """The object store a Spark task was given through its environment."""
    values: dict[str, Any] = {}
    for var, key in ENV_KEYS.items():
        if key.startswith("s3.") and env.get(var):
            values[key[3:]] = env[var]
    return ObjectStoreConfig(**values)
