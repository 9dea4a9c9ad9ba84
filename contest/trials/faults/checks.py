"""Pure checks of what an experiment left: the write's log, a command's failure line,
a killed read's target, a snapshot's order (unit-tested)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

# A committed batch's log line (contest/write/report.py `log_batch`): name, version, rows.
_COMMITTED = re.compile(r"contest\.write (\S+) v(-?\d+): (\d+) rows, ")


def committed_in_log(text: str) -> dict[int, str]:
    """version -> batch of every batch a write's log reports committed. A batch's line
    is logged only after its commit returned, so each one is an acknowledged commit; a
    line cut short by a kill does not match."""
    return {int(m.group(2)): m.group(1) for m in _COMMITTED.finditer(text)}


def one_line_failure(stderr: str) -> str | None:
    """The failure line of a command that failed as promised: exactly one line starting
    `contest: ` and no traceback of its own; None otherwise. (Spark's executor logs a
    failed task's Python traceback inside a Java log record, `PythonException:
    Traceback ...`: that is Spark's log, not the command's failure.)"""
    lines = stderr.splitlines()
    if any(ln.startswith("Traceback (most recent call last)") for ln in lines):
        return None
    lines = [ln for ln in lines if ln.startswith("contest: ")]
    lines = [ln for ln in lines if not ln.startswith("contest: warning:")]
    return lines[0] if len(lines) == 1 else None


def classify_result(exists: bool, complete: bool, inode: int | None, old_inode: int | None) -> str:
    """What a killed read left at its target: the `old` complete result, a `new` complete
    one, `none`, or a `partial` one (a folder without both markers: the broken promise)."""
    if not exists:
        return "none"
    if not complete:
        return "partial"
    return "old" if inode == old_inode else "new"


def is_permutation(a: Sequence[str], b: Sequence[str]) -> bool:
    """Same elements, each once: nothing dropped, nothing duplicated."""
    return len(a) == len(b) == len(set(a)) and set(a) == set(b)


def is_sorted(values: Sequence[int | None]) -> bool:
    known = [v for v in values if v is not None]
    return all(x <= y for x, y in zip(known, known[1:], strict=False))


def disjoint_indices(count: int, writers: int) -> list[list[int]]:
    """Batch indices 0..count-1 dealt round-robin to `writers` writers."""
    return [list(range(w, count, writers)) for w in range(writers)]


def tree_state(folder: Path) -> dict[str, tuple[int, int]]:
    """Every file under `folder` (hidden ones too): relative path -> (size, mtime in ns).
    Empty when the folder is absent."""
    if not folder.is_dir():
        return {}
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            st = p.stat()
            out[str(p.relative_to(folder))] = (st.st_size, st.st_mtime_ns)
    return out


def changed_files(
    before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]
) -> list[str]:
    """The files of `before` that are gone or different in `after` (new files do not count)."""
    return sorted(k for k, v in before.items() if after.get(k) != v)


def names_all(line: str | None, *names: str) -> bool:
    """A failure line that names every one of `names`."""
    return bool(line) and all(n in (line or "") for n in names)
