"""Where files live: one place that turns a path or URI into a pyarrow filesystem.

Every reader and writer of table, batch and result files goes through `filesystem`,
so local paths and object-store URIs take the same code path.
"""

from __future__ import annotations

from typing import Any


def filesystem(uri: str) -> tuple[Any, str]:
    """(pyarrow filesystem, path inside it) for a local path or a URI."""
    import pyarrow.fs as pafs

    return pafs.FileSystem.from_uri(uri)
