"""The harness's errors: one family under `meta.errors.HarnessError`, each carrying its
exit code, and the one helper that turns a failure inside a Spark task back into one.

Spark wraps an exception raised in a Python worker in a Py4J/`PythonException` whose
text holds the worker's traceback and a long Java trace. `unwrap_spark_error` finds the
worker's own exception line and returns the harness error it names (or a `TaskError`
with that line), so the user sees one line, whichever way the error crossed the JVM.
"""

from __future__ import annotations

import re

from meta.errors import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    CommitError,
    HarnessError,
    MetaError,
    PgError,
    ReplayError,
    TableError,
    UsageError,
)

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CommitError",
    "ConfigError",
    "ConnectorError",
    "DataError",
    "HarnessError",
    "MergeOperatorError",
    "MetaError",
    "PgError",
    "PhaseError",
    "ReadError",
    "ReplayError",
    "RunError",
    "SchemaEvolutionError",
    "TableError",
    "TaskError",
    "UsageError",
    "key_line",
    "toml_error",
    "unwrap_spark_error",
]


class ConfigError(UsageError):
    """A configuration key or value that cannot be used; the message names it."""


class DataError(UsageError):
    """A data folder, batch file or version list that cannot be used; names it."""


class MergeOperatorError(UsageError):
    """An unknown merge operator, or one that does not fit its column's type."""


class ReadError(UsageError):
    """The table cannot be read as asked; the message says what to do."""


class SchemaEvolutionError(UsageError):
    """An old file that the table's newest schema cannot read."""


class ConnectorError(HarnessError):
    """A JVM library that cannot be resolved; names the coordinates and the fix."""


class RunError(HarnessError):
    """A run that failed (a job, a phase, a server); the message names what and where."""


class PhaseError(RunError):
    """A phase of an evaluation that failed; its run record names the phase."""


class TaskError(HarnessError):
    """An error raised inside a Spark task that is not one of the harness's own."""


# `pkg.module.ClassName: message` or `ClassName: message` at the start of a line.
_EXC_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?([A-Z][A-Za-z0-9_]*(?:Error|Exception)): (.+)$")
_JAVA_NOISE = ("py4j.", "org.apache.spark.", "java.", "scala.")


def _harness_classes() -> dict[str, type[HarnessError]]:
    out: dict[str, type[HarnessError]] = {}
    todo: list[type[HarnessError]] = [HarnessError]
    while todo:
        cls = todo.pop()
        out.setdefault(cls.__name__, cls)
        todo.extend(cls.__subclasses__())
    return out


def unwrap_spark_error(exc: BaseException) -> HarnessError | None:
    """The harness error behind a Spark failure, or None when `exc` is not from Spark.

    Inside a Python worker the last exception line of the worker's traceback is the
    cause (Python prints the last exception of a chain last); a harness error keeps its
    class, anything else becomes a `TaskError` with that line (e.g. `OSError: [Errno 28]
    No space left on device`)."""
    if isinstance(exc, HarnessError):
        return exc
    text = str(exc)
    name = type(exc).__name__
    if not (
        name
        in (
            "Py4JJavaError",
            "PythonException",
            "IllegalArgumentException",
            "AnalysisException",
            "SparkRuntimeException",
            "SparkException",
        )
        or "Traceback (most recent call last)" in text
    ):
        return None
    known = _harness_classes()
    lines = text.splitlines()
    if "Traceback (most recent call last)" in text:
        # The worker's traceback ends with its exception line, before the Java trace.
        block_end = len(lines)
        for i, line in enumerate(lines):
            if line.startswith("\tat ") or line.strip().startswith("at org.apache"):
                if any("Traceback" in ln for ln in lines[:i]):
                    block_end = i
                    break
        candidates = [m for ln in lines[:block_end] if (m := _EXC_LINE.match(ln.strip()))]
        for m in reversed(candidates):
            if m.group(1) in known:
                return known[m.group(1)](m.group(2))
        py = [m for m in candidates if not m.group(0).startswith(_JAVA_NOISE)]
        if py:
            return _task_error(f"in a Spark task: {py[-1].group(0)}")
    for line in lines:
        # Py4J puts the JVM's exception after ": " on the line below its own wrapper
        # ("An error occurred while calling None.org...JavaSparkContext."): the cause.
        m = _EXC_LINE.match(line.strip().removeprefix(": "))
        if m:
            return _task_error(f"Spark: {m.group(0)[:500]}")
    first = next((ln.strip() for ln in lines if ln.strip()), name)
    return _task_error(f"Spark: {first[:500]}")


# Spark's own advice names spark-submit's --driver-memory, which `contest` has not.
_DRIVER_MEMORY = re.compile(r"System memory (\d+) must be at least (\d+)")


def _task_error(text: str) -> HarnessError:
    """A Spark failure in one line; a driver too small for Spark gets the way `contest`
    sets its memory instead of Spark's `--driver-memory` advice."""
    m = _DRIVER_MEMORY.search(text)
    if m:
        have, need = (int(g) >> 20 for g in m.groups())
        return ConfigError(
            f"Spark: [INVALID_DRIVER_MEMORY] the driver's heap is {have} MB, Spark needs at "
            f"least {need} MB: raise spark.driver_memory (--set spark.driver_memory=1g, or "
            "driver_memory under [spark] in the config file)"
        )
    return TaskError(text)


# -- where in a TOML file an error is (config, workload and sweep files) ---------------


def toml_error(path: object, exc: Exception) -> str:
    """`FILE:LINE: not valid TOML: what` (tomllib puts the place at the message's end)."""
    text = str(exc)
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)$", text)
    if not m:
        return f"{path}: not valid TOML: {text}"
    return f"{path}:{m.group(1)}: not valid TOML: {text[: m.start()]} (column {m.group(2)})"


def key_line(text: str, message: str) -> str:
    """`:LINE` of the key a configuration error names (`spark.nosuch: ...` or `unknown
    configuration key: spark.nosuch`), found under its [section] in the TOML text; ''
    when it cannot be placed."""
    m = re.match(r"([A-Za-z_]\w*(?:\.\w+)*)", message.removeprefix("unknown configuration key: "))
    if not m:
        return ""
    *section, key = m.group(1).split(".")
    current: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        header = re.fullmatch(r"\[\[?\s*([\w.\s\"]+?)\s*\]\]?(\s*#.*)?", stripped)
        if header:
            current = [p.strip().strip('"') for p in header.group(1).split(".")]
            continue
        lhs = stripped.split("=", 1)[0].strip() if "=" in stripped else ""
        if not lhs:
            continue
        dotted = current + [p.strip().strip('"') for p in lhs.split(".")]
        if dotted == [*section, key] or (not section and dotted[-1:] == [key]):
            return f":{number}"
        if len(dotted) < len(section) + 1 and dotted == [*section, key][: len(dotted)]:
            return f":{number}"  # a table value (`spark = {...}`) holding the key
    return ""
