"""The fast tier (`./build.sh test --fast`, pytest's `--fast`): the tests that start no
JVM and no server and are not marked slow, and a guard that holds them to it.

The tier is chosen by its markers (tests/conftest.py sets them from the fixtures a test
uses). A marker can be missing where a test starts a component in a child process
without its fixture, so in the fast tier `java`, `pg_ctl`, `initdb` and `postgres` on
PATH are stand-ins that refuse and write down which test called them; that test then
fails, naming the marker it lacks. `java -version` (a machine's description) still
answers: it starts no Spark and no server."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# The markers the fast tier leaves out: a real component, a long run, a browser, and
# what only the JVM set-up builds (`./build.sh test --fast` sets up Python only).
FAST_EXCLUDED = ("spark", "jvm", "jars", "pg", "s3", "standalone", "slow", "browser")
GUARDED = {
    "java": "spark",
    "pg_ctl": "pg",
    "initdb": "pg",
    "postgres": "pg",
}
LOG_VARIABLE = "CONTEST_FAST_TIER_LOG"

_STAND_IN = """#!/bin/sh
# The fast tier's stand-in for {tool} (tests/support/fast_tier.py).
if [ "{tool}" = java ] && [ "$1" = -version ] && [ -n "{real}" ]; then exec "{real}" "$@"; fi
printf '%s\\t%s\\n' "$PYTEST_CURRENT_TEST" "{tool} $*" >> "${{{log}:-/dev/null}}"
echo "the fast tier starts no JVM and no server: {tool} refused" >&2
exit 97
"""


def in_fast_tier(marks: set[str]) -> bool:
    """A test whose markers (by name) keep it in the fast tier."""
    return not marks & set(FAST_EXCLUDED)


def select(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Keep the fast tier's tests, deselect the rest (reported as deselected)."""
    kept, dropped = [], []
    for item in items:
        marks = {m.name for m in item.iter_markers()}
        (kept if in_fast_tier(marks) else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


STAND_IN_MARK = "The fast tier's stand-in"


def is_stand_in(path: Path) -> bool:
    """Whether a program on PATH is one of the stand-ins (its second line says so)."""
    try:
        with path.open("rb") as fh:
            return STAND_IN_MARK.encode() in fh.read(200)
    except OSError:
        return False


def real_program(name: str) -> str:
    """The first `name` on PATH that is not a stand-in ("" without one). A pytest started
    by a test of the tier (test_fast_tier.py's child pytest) installs its guard beside
    the worker's: had its `java` pointed to the worker's stand-in, which points to it,
    `java -version` would exec the two in a loop (60 s of a machine's description)."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        found = shutil.which(name, path=folder) if folder else None
        if found and not is_stand_in(Path(found)):
            return found
    return ""


def install_guard(folder: Path, log: Path) -> None:
    """Put the stand-ins first on this process's PATH (children inherit it) and drop
    JAVA_HOME, which spark-class would use before PATH."""
    real_java = real_program("java")
    java_home = os.environ.pop("JAVA_HOME", "")
    if java_home:
        real_java = str(Path(java_home) / "bin" / "java")
    folder.mkdir(parents=True, exist_ok=True)
    for tool in GUARDED:
        path = folder / tool
        real = real_java if tool == "java" else ""
        path.write_text(_STAND_IN.format(tool=tool, real=real, log=LOG_VARIABLE))
        path.chmod(0o755)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("")
    os.environ[LOG_VARIABLE] = str(log)
    os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"


def calls_of(log: Path, nodeid: str) -> list[str]:
    """The guarded tools the test `nodeid` called (PYTEST_CURRENT_TEST starts with it)."""
    if not log.is_file():
        return []
    found = []
    for line in log.read_text().splitlines():
        test, _, call = line.partition("\t")
        if test.split(" (")[0] == nodeid:
            found.append(call)
    return found


def refusal(calls: list[str]) -> str:
    """The failure a test that called a guarded tool gets: what it called, which marker."""
    marks = sorted({GUARDED[c.split(" ", 1)[0]] for c in calls})
    return (
        f"the fast tier starts no JVM and no server, and this test ran {calls[0]!r}"
        f"{f' (+{len(calls) - 1} more)' if len(calls) > 1 else ''}: mark it "
        + " and ".join(f"@pytest.mark.{m}" for m in marks)
        + (" (@pytest.mark.jvm for a JVM that is not Spark)" if "spark" in marks else "")
    )
