"""Object-store helpers for tests on the embedded S3 server (the session's `s3` fixture)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from contest.config import Config, ObjectStoreConfig
from contest.infra import storage
from contest.infra.s3server import ensure_bucket

BUCKET = "contest-tests"


@contextmanager
def configured(s3: Config) -> Iterator[None]:
    """This process opens s3:// paths on the embedded server meanwhile."""
    storage.configure(s3.s3)
    try:
        yield
    finally:
        storage.configure(ObjectStoreConfig())


def fresh_prefix(name: str) -> str:
    """A prefix no other test (or earlier run) used, in the tests' bucket."""
    uri = f"s3://{BUCKET}/{name}-{secrets.token_hex(4)}"
    ensure_bucket(uri)
    return uri


def upload(folder: Path, uri: str) -> str:
    """Copy a local folder's files (not sub-folders) under `uri`."""
    for p in sorted(folder.iterdir()):
        if p.is_file():
            put(uri.rstrip("/") + "/" + p.name, p.read_bytes())
    return uri


def put(uri: str, data: bytes) -> None:
    fs, path = storage.filesystem(uri)
    with fs.open_output_stream(path) as fh:
        fh.write(data)


def names(uri: str) -> list[str]:
    """Files under a prefix, relative to it, sorted."""
    from contest.infra.folders import list_files

    return [e.name for e in list_files(uri, recursive=True)]


def delete(uri: str) -> None:
    """Remove one object."""
    fs, path = storage.filesystem(uri)
    fs.delete_file(path)
