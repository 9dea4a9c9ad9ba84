"""What a timed job needs beyond local mode: the spark-submit options for a cluster
master, and the cores the application was granted (what its score divides by).

Each job prints one JSON line whose `spark_cores` are the cores its application held
(contest.infra.spark.granted_cores); evaluate reads them from the job's log and
refuses to score a run whose cores differ from the ones asked for.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from contest.config import Config
from contest.errors import RunError
from contest.infra.packages import coordinates, local_jars


def is_local(master: str) -> bool:
    return master.startswith("local")


def master_of(master: str | None, cores: int) -> str:
    return master or f"local[{cores}]"


def cluster_options(
    cfg: Config, master: str, cores: int | None, py_files: Path | None, s3a: bool
) -> list[str]:
    """spark-submit options for `master`: on a cluster, the package zip for the
    executors, the cores asked for and a wait until they are all granted; s3a when
    Spark itself reads or writes the object store. Nothing on local masters but s3a."""
    opts: list[str] = []
    if s3a:
        opts += ["--packages", ",".join(coordinates(["s3"]))]
    if is_local(master):
        return opts
    if py_files is not None:
        opts += ["--py-files", str(py_files)]
    opts += [
        "--conf",
        f"spark.pyspark.python={sys.executable}",
        # Start the timed work only once every executor registered (else the first
        # tasks run on whichever executor came first).
        "--conf",
        "spark.scheduler.minRegisteredResourcesRatio=1.0",
        "--conf",
        "spark.scheduler.maxRegisteredResourcesWaitingTime=60s",
    ]
    if cores:
        opts += ["--conf", f"spark.cores.max={cores}"]
    return opts


def job_cores(log: Path) -> int | None:
    """The `spark_cores` of the last JSON line a job printed, if any."""
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        line = line.strip()
        if line.startswith("{") and '"spark_cores"' in line:
            try:
                return int(json.loads(line)["spark_cores"])
            except (ValueError, KeyError, TypeError):
                return None
    return None


def scored_cores(asked: int | None, granted: dict[str, int | None]) -> int:
    """The cores a score divides by: the ones every job was granted, which must be the
    ones asked for (`--cores`) when some were."""
    values = {v for v in granted.values() if v is not None}
    if not values:
        if asked is None:
            raise RunError("the jobs did not report the cores they were granted")
        return asked
    if len(values) > 1:
        detail = ", ".join(f"{k} {v}" for k, v in granted.items())
        raise RunError(f"the jobs were granted different cores ({detail}): not scored")
    (have,) = values
    if asked is not None and have != asked:
        raise RunError(
            f"Spark granted {have} cores but --cores is {asked}: not scored (ask for the "
            "cores the cluster has, or give the cluster the cores asked for)"
        )
    return have


# Options whose values from several sources are one list (comma- or path-joined).
_LIST_FLAGS = {
    "--packages": ",",
    "--exclude-packages": ",",
    "--jars": ",",
    "--py-files": ",",
    "--driver-class-path": ":",
}
# Settings whose values from several sources add up rather than replace each other.
_JOINED_CONF = {
    "spark.executor.extraJavaOptions": " ",
    "spark.executor.extraClassPath": ":",
    "spark.driver.extraJavaOptions": " ",
    "spark.driver.extraClassPath": ":",
}


def packages_as_jars(options: list[str], ivy: Path) -> tuple[list[str], float]:
    """The options with `--packages` (and `--exclude-packages`) replaced by `--jars` of
    the jars Ivy resolves them to, and the seconds that took: resolved before a timed
    job starts, for every strategy alike, so no timed job pays Ivy's resolution and
    retrieval (a peer's job paid 0.3-5 s of it inside its window before)."""
    started = time.perf_counter()
    coords: list[str] = []
    excludes: list[str] = []
    own: list[str] = []  # `--conf spark.jars=...` (hudi-merger's record merger)
    rest: list[str] = []
    it = iter(options)
    for flag in it:
        value = next(it, "")
        if flag == "--packages":
            coords += [c for c in value.split(",") if c]
        elif flag == "--exclude-packages":
            excludes += [c for c in value.split(",") if c]
        elif flag == "--conf" and value.startswith("spark.jars="):
            own += [j for j in value.removeprefix("spark.jars=").split(",") if j]
        else:
            rest += [flag, value]
    if not coords:
        return options, 0.0
    # --jars is spark.jars: a jar the options named through spark.jars goes with them,
    # or spark-submit would drop it for the resolved ones.
    jars = [str(p) for p in local_jars(coords, excludes, ivy)] + own
    merged = merge_options(rest, ["--jars", ",".join(jars)])
    return merged, round(time.perf_counter() - started, 3)


def merge_options(*sources: list[str]) -> list[str]:
    """One spark-submit option list from several (the object store's, a strategy's JVM
    libraries', a cluster's): spark-submit keeps only the last of a repeated flag, so
    list-valued flags and additive settings are joined, the rest last-wins."""
    lists: dict[str, list[str]] = {}
    confs: dict[str, str] = {}
    other: list[str] = []
    for opts in sources:
        it = iter(opts)
        for flag in it:
            value = next(it, "")
            if flag in _LIST_FLAGS:
                lists.setdefault(flag, []).extend(v for v in value.split(_LIST_FLAGS[flag]) if v)
            elif flag == "--conf" and "=" in value:
                key, val = value.split("=", 1)
                sep = _JOINED_CONF.get(key)
                confs[key] = f"{confs[key]}{sep}{val}" if sep and key in confs else val
            else:
                other += [flag, value]
    out: list[str] = []
    for flag, values in lists.items():
        unique = list(dict.fromkeys(values))
        out += [flag, _LIST_FLAGS[flag].join(unique)]
    for key, val in confs.items():
        out += ["--conf", f"{key}={val}"]
    return out + other
