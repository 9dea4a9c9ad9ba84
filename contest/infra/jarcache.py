"""The shared JVM caches (Spark's Ivy home, the local Maven repository) kept whole when
several set-ups on one machine use them at once (two clones, `./build.sh run` beside
`./build.sh test`), and healed when a file in them is corrupt.

- Verified: a jar counts as present only when it is a whole zip (every entry's CRC
  checked) and, where Maven keeps the repository's `.sha1` beside it, matches that. The
  full check runs once per file version: a file's size, times and inode are then
  remembered in the cache's `.contest/verified.json`, so a second set-up checks nothing.
- Atomic: what the harness writes itself goes to a temporary name in the same folder,
  is verified, then renamed over the final name; a reader sees the old file or the new.
- Locked: each cache has one lock file (`.contest/lock`, flock); every fetch into it
  holds the lock, so a second set-up waits (and says so) instead of reading a half
  written jar.
- Healed: a corrupt file found at the next run is taken away just before it is fetched
  again (`set_aside`), and put back only if the fetch fails.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import sys
import time
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from contest.errors import ConnectorError

TOOL_DIR = ".contest"
LOCK_WAIT_S = 3600.0
_held: dict[Path, int] = {}  # lock files this process holds, with their depth


def maven_repository(home: Path | None = None) -> Path:
    """The local Maven repository (Maven's default place). Here, below maven.py and
    packages.py, because both read it: Ivy retrieves jars from it too."""
    return (home or Path.home()) / ".m2" / "repository"


def problem(path: Path, memo: Memo | None = None) -> str | None:
    """Why `path` is not a usable jar ("missing", a checksum mismatch, a broken zip), or
    None when it is."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return "missing"
    # ctime and inode too: Ivy's copies keep the source's modification time, and a
    # change of content or a rename always moves ctime.
    stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    if memo is not None and memo.get(path) == stamp:
        return None
    reason = _checksum_problem(path) or _zip_problem(path)
    if reason is None and memo is not None:
        memo.put(path, stamp)
    return reason


def _checksum_problem(path: Path) -> str | None:
    """The repository's SHA-1 (Maven keeps it as `<jar>.sha1`), when there is one."""
    sidecar = path.with_name(path.name + ".sha1")
    try:
        want = sidecar.read_text().split()[0].strip().lower()
    except (FileNotFoundError, IndexError, UnicodeDecodeError):
        return None
    digest = hashlib.sha1()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    got = digest.hexdigest()
    if got != want:
        return f"checksum mismatch (SHA-1 {got[:12]}, the repository's {want[:12]})"
    return None


def _zip_problem(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as z:
            bad = z.testzip()
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as exc:
        return f"not a whole jar ({exc})"
    return f"not a whole jar (entry {bad} fails its CRC)" if bad else None


class Memo:
    """Jars already verified, by path, with the size and modification time they had."""

    def __init__(self, root: Path) -> None:
        self.file = root / TOOL_DIR / "verified.json"
        try:
            self.data: dict[str, list[int]] = json.loads(self.file.read_text())
        except (FileNotFoundError, ValueError):
            self.data = {}
        self.dirty = False

    def get(self, path: Path) -> list[int] | None:
        return self.data.get(str(path))

    def put(self, path: Path, stamp: list[int]) -> None:
        self.data[str(path)] = stamp
        self.dirty = True

    def save(self) -> None:
        """Written atomically; two writers at once lose entries, which are checked again."""
        if not self.dirty:
            return
        with contextlib.suppress(OSError):  # a read-only cache is verified every time
            write_atomic(self.file, json.dumps(self.data, indent=0).encode())
        self.dirty = False


def write_atomic(dest: Path, data: bytes) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(dest)
    try:
        with tmp.open("wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def install(src: Path, dest: Path) -> Path:
    """Copy `src` to `dest` atomically: to a temporary name beside it, verified, renamed."""
    reason = problem(src)
    if reason:
        raise ConnectorError(f"cannot install {src.name}: {src} is {reason}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_name(dest)
    try:
        shutil.copyfile(src, tmp)
        with tmp.open("rb") as f:
            os.fsync(f.fileno())
        reason = problem(tmp)
        if reason:
            raise ConnectorError(f"copying {src} to {dest} gave a file that is {reason}")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def _temp_name(dest: Path) -> Path:
    return dest.with_name(f".{dest.name}.{os.getpid()}.tmp")


@contextlib.contextmanager
def set_aside(paths: Iterable[Path]) -> Iterator[list[Path]]:
    """Move corrupt files out of the way of a fetch; drop them when the block succeeds
    (the fetch replaced them), put them back when it fails."""
    moved: list[tuple[Path, Path]] = []
    for path in dict.fromkeys(paths):
        if path.exists():
            aside = path.with_name(f".{path.name}.corrupt")
            os.replace(path, aside)
            moved.append((path, aside))
    try:
        yield [p for p, _ in moved]
    except BaseException:
        for path, aside in moved:
            if not path.exists():
                os.replace(aside, path)
        raise
    for _, aside in moved:
        aside.unlink(missing_ok=True)


def sweep(paths: Iterable[Path]) -> None:
    """Remove what a set-up killed mid-way (kill -9) left beside these jars: its
    temporary copies and the broken files it had set aside. Called under the cache's
    lock, when no other set-up is writing there."""
    for path in paths:
        for left in path.parent.glob(f".{path.name}.*"):
            if left.name.endswith((".tmp", ".corrupt")):
                left.unlink(missing_ok=True)


@contextlib.contextmanager
def lock(root: Path, what: str, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the machine-wide lock of one cache (`root`); a second set-up waits for it and
    says on stderr whom it waits for. Re-entrant within a process."""
    path = (root / TOOL_DIR / "lock").absolute()
    if path in _held:
        _held[path] += 1
        try:
            yield
        finally:
            _held[path] -= 1
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        _acquire(fd, path, what, wait_s)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}: {what}\n".encode(), 0)
        _held[path] = 1
        try:
            yield
        finally:
            del _held[path]
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


def _acquire(fd: int, path: Path, what: str, wait_s: float) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
    print(f"{what}: waiting for another set-up ({holder}) holding {path}", file=sys.stderr)
    deadline = time.monotonic() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise ConnectorError(
                    f"{what}: {path} is still held after {wait_s:.0f} s ({holder}); "
                    "is a set-up stuck? stop it and run again"
                ) from None
            time.sleep(0.5)
