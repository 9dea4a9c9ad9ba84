"""pyspark's worker daemon, started by Spark as `python -m contest.infra.pyspark_daemon`
under `spark.python_preload` (spark.python.daemon.module).

Spark puts its pyspark.zip first on every Python process's path (the spark-submit
driver's and the workers'): a zip holds no compiled modules, so each process compiles
pyspark's sources again, a few tenths of a CPU second before its first step. When
that zip is the installed pyspark's own (pip's pyspark ships it inside the package),
the installed package is the same code, compiled once: `prefer_installed_pyspark`
drops the zip from the path. The daemon then loads what the tasks import (numpy,
pyarrow, pandas, pyspark's Arrow serializers, the harness's task modules) once, before
it forks its workers, instead of in every worker.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys

SPARK_ZIP = "pyspark.zip"
# What a task of the write or the read imports first; loaded once in the daemon.
PRELOAD = (
    "numpy",
    "pyarrow",
    "pyarrow.compute",
    "pyarrow.parquet",
    "pandas",
    "pyspark.sql.pandas.serializers",
    "pyspark.sql.pandas.types",
    # The modules of the write's and the read's task functions (pickled by reference:
    # a worker imports their module to run them), ~0.5 s each in every worker else.
    "contest.write.files",
    "contest.read.files",
)


def prefer_installed_pyspark(path: list[str] | None = None) -> bool:
    """Drop Spark's pyspark.zip from `path` (sys.path) when pyspark is not imported yet
    and the zip lies inside the installed pyspark package (the same release); True
    when it was dropped."""
    path = sys.path if path is None else path
    if "pyspark" in sys.modules:
        return False
    zips = [p for p in path if os.path.basename(p) == SPARK_ZIP]
    rest = [p for p in path if p not in zips]
    spec = importlib.machinery.PathFinder.find_spec("pyspark", rest)
    if not zips or spec is None or not spec.submodule_search_locations:
        return False
    package = os.path.realpath(next(iter(spec.submodule_search_locations)))
    if not all(os.path.realpath(z).startswith(package + os.sep) for z in zips):
        return False  # another Spark's zip: it is that Spark's pyspark that must run
    path[:] = rest
    return True


def main() -> None:
    prefer_installed_pyspark()
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # a task that needs it fails as it would have
            pass
    from pyspark import daemon  # deferred: after prefer_installed_pyspark chose which pyspark

    daemon.manager()


if __name__ == "__main__":
    main()
