"""A peer table's folder as files: which are data, delete or log files, and how many
bytes the table stores. What the write reports per batch and maintenance per run."""

from __future__ import annotations

import os
from pathlib import Path


def classify(name: str) -> str:
    """data, delete (Iceberg position deletes and v3 deletion vectors, Delta deletion
    vectors) or log (Hudi)."""
    if name.startswith(".") and ".log." in name:
        return "log"
    if name.startswith("deletion_vector_") or name.endswith(("-deletes.parquet", ".puffin")):
        return "delete"
    return "data" if name.endswith(".parquet") else "other"


def data_listing(root: Path, skip: tuple[str, ...]) -> dict[str, tuple[str, int]]:
    """Files of the table's data area: path -> (kind, bytes); the format's log and
    metadata folders (`skip`) and checksum files left out."""
    out: dict[str, tuple[str, int]] = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in files:
            kind = classify(name)
            if kind != "other":
                path = os.path.join(folder, name)
                out[path] = (kind, os.path.getsize(path))
    return out


def folder_bytes(root: Path) -> int:
    """Bytes stored under the table's folder: data, logs, metadata (the size rule)."""
    return sum(
        os.path.getsize(os.path.join(folder, name))
        for folder, _, files in os.walk(root)
        for name in files
    )
