"""Folders of files, local or in the object store: list, stat, download.

pyarrow's filesystems do the IO (contest.infra.storage.filesystem, the one place that
opens them); these helpers keep a folder's name as the user spelled it (an absolute
path, or `s3://bucket/prefix`), so every message names what was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs

from contest.infra.storage import delete_tree, filesystem, is_object_store


@dataclass(frozen=True)
class Entry:
    """A file of a folder: its full name (path or URI), base name, bytes and mtime."""

    uri: str
    name: str
    size: int
    mtime_ns: int


def folder_name(text: str | Path) -> str:
    """A folder as the project names it: an object-store URI without a trailing `/`, or
    an absolute local path (Spark's JVM may run in another folder)."""
    text = str(text)
    if is_object_store(text):
        return text.rstrip("/")
    return str(Path(text.removeprefix("file://")).absolute())


def join(folder: str, name: str) -> str:
    return f"{folder.rstrip('/')}/{name}"


def base_name(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1]


def parent(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[0]


def kind(uri: str) -> str | None:
    """ "file", "folder", or None when nothing is there (an object-store prefix is a
    folder when some object lies under it)."""
    fs, path = filesystem(uri)
    info = fs.get_file_info(path)
    if info.type == pafs.FileType.File:
        return "file"
    if info.type == pafs.FileType.Directory:
        return "folder"
    return None


def list_files(folder: str, recursive: bool = False, folders: bool = False) -> list[Entry]:
    """The files of a folder (none when it does not exist), by name; with `recursive`,
    `name` is the path below the folder; with `folders`, its sub-folders too."""
    fs, base = filesystem(folder)
    try:
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=recursive))
    except FileNotFoundError:
        return []
    # S3Proxy's filesystem backend lists a sub-folder in a recursive listing twice:
    # as the folder, and as an empty object of the same name (its marker). Not a file.
    dirs = {i.path for i in infos if i.type == pafs.FileType.Directory}
    out = []
    for info in infos:
        if info.type == pafs.FileType.File and info.path in dirs:
            continue
        wanted = (pafs.FileType.File, pafs.FileType.Directory) if folders else (pafs.FileType.File,)
        if info.type not in wanted:
            continue
        rel = info.path[len(base) :].lstrip("/")
        out.append(Entry(join(folder, rel), rel, info.size or 0, info.mtime_ns or 0))
    return sorted(out, key=lambda e: e.name)


def open_input(uri: str):
    """A random-access file (parquet footers, row groups) on either kind of store."""
    fs, path = filesystem(uri)
    return fs.open_input_file(path)


def localize(uris: Sequence[str], dest: Path, chunk: int = 8 << 20) -> list[str]:
    """Local paths for files that may be in the object store: object-store files are
    downloaded into `dest` (streamed, a chunk at a time), local ones returned as they
    are. Names under `dest` keep the file's order and base name, so they stay unique."""
    out = []
    for i, uri in enumerate(uris):
        if not is_object_store(uri):
            out.append(str(uri))
            continue
        dest.mkdir(parents=True, exist_ok=True)
        local = dest / f"{i:05d}-{base_name(uri)}"
        fs, path = filesystem(uri)
        with fs.open_input_stream(path) as src, local.open("wb") as dst:
            while block := src.read(chunk):
                dst.write(block)
        out.append(str(local))
    return out


def remove_tree(uri: str) -> None:
    """Remove a folder and everything under it, if present. In the object store the
    files of its sub-folders go first, one request each, then its sub-folders deepest
    first, then the rest in one bulk delete. S3Proxy's filesystem backend needs this
    order: a bulk delete of files with their non-empty folders' markers stalls, and a
    folder emptied of files stays behind as an object no request names but its
    parent folder's delete."""
    if is_object_store(uri):
        for entry in list_files(uri, recursive=True):
            if "/" not in entry.name:
                continue
            fs, path = filesystem(entry.uri)
            try:
                fs.delete_file(path)
            except FileNotFoundError:
                pass
        # Then the sub-folders that hold something (markers, by now), deepest first.
        entries = list_files(uri, recursive=True, folders=True)
        holders = {parent(e.uri) for e in entries if "/" in e.name}
        for folder in sorted(holders, key=lambda f: -f.count("/")):
            fs, path = filesystem(folder)
            try:
                fs.delete_dir(path)
            except OSError:  # FileNotFoundError too: removed with its parent below
                pass
    delete_tree(uri)


def upload(local_files: Sequence[Path], folder: str, chunk: int = 8 << 20) -> list[str]:
    """Copy local files into a folder of the object store (streamed), by base name."""
    out = []
    for p in local_files:
        uri = join(folder, p.name)
        fs, path = filesystem(uri)
        with p.open("rb") as src, fs.open_output_stream(path) as dst:
            while block := src.read(chunk):
                dst.write(block)
        out.append(uri)
    return out
