"""JVM libraries, loaded the way users load them: `spark.jars.packages` with pinned
coordinates, resolved by Spark's Ivy into `~/.ivy2`. `contest packages fetch` (which
`./build.sh` runs) resolves them ahead, so no timed run downloads anything and a machine
without network still runs once they are fetched. A library that cannot be resolved is
one line naming its coordinates and the pre-fetch command, not a Java trace.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from contest.errors import ConnectorError
from meta.distributed import JDBC_PACKAGE

S3A_PACKAGE = "org.apache.hadoop:hadoop-aws:3.3.4"

# Named sets of coordinates; each feature asks for its set by name.
PACKAGES: dict[str, tuple[str, ...]] = {
    # PostgreSQL's JDBC driver: the distributed metadata replay reads commits through it.
    "jdbc": (JDBC_PACKAGE,),
    # Hadoop's s3a (the version of pyspark's Hadoop client jars, 3.3.4; brings the AWS
    # SDK bundle): Spark's own readers and writers on s3:// paths.
    "s3": (S3A_PACKAGE,),
    # LakeSoul's own released libraries (lakesoul-io-java brings lakesoul-common), with
    # jcasbin pinned (lakesoul-common's casbin adapter asks for "LATEST"): the
    # lakesoul-stock engine, contest/infra/lakesoul_jvm.py.
    "lakesoul": ("com.dmetasoul:lakesoul-io-java:2.6.2", "org.casbin:jcasbin:1.81.0"),
    # The peer table formats (contest/peers), as their users load them into Spark 3.5:
    # Delta pulls delta-storage 3.3.2 and antlr4-runtime 4.9.3; Iceberg's runtime jar is
    # self-contained; Hudi's bundle pulls hive-storage-api 2.8.1 and slf4j-api 1.7.36.
    "delta": ("io.delta:delta-spark_2.12:3.3.2",),
    "iceberg": ("org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0",),
    "hudi": ("org.apache.hudi:hudi-spark3.5-bundle_2.12:1.0.2",),
    # Apache Paimon's Spark 3.5 connector (a self-contained jar); the newest release of
    # it the Maven repository here serves (contest/peers/paimon.py).
    "paimon": ("org.apache.paimon:paimon-spark-3.5:0.9.0",),
}
# Artifacts a set must not pull in (they clash with Spark's own jars).
EXCLUDES: dict[str, tuple[str, ...]] = {
    "lakesoul": ("org.apache.spark:spark-catalyst_2.12",),
}


def coordinates(names: Iterable[str]) -> tuple[str, ...]:
    """The coordinates of the named sets, in order, without repeats."""
    out: list[str] = []
    for name in names:
        if name not in PACKAGES:
            raise ConnectorError(
                f"unknown JVM package set {name!r} (known: {', '.join(sorted(PACKAGES))})"
            )
        out.extend(c for c in PACKAGES[name] if c not in out)
    return tuple(out)


def ivy_jar(coordinate: str, home: Path | None = None) -> Path:
    """Where Spark's Ivy keeps a resolved artifact's jar."""
    parts = coordinate.split(":")
    if len(parts) != 3 or not all(parts):
        raise ConnectorError(f"not Maven coordinates (group:artifact:version): {coordinate!r}")
    group, artifact, version = parts
    return (home or Path.home()) / ".ivy2" / "jars" / f"{group}_{artifact}-{version}.jar"


def missing(coords: Sequence[str], home: Path | None = None) -> list[str]:
    return [c for c in coords if not ivy_jar(c, home).is_file()]


def fetch_command(coords: Sequence[str]) -> str:
    return f"contest packages fetch --coordinates {','.join(coords)}"


def fetch(coords: Sequence[str], excludes: Sequence[str] = ()) -> None:
    """Resolve `coords` (and their dependencies) into the Ivy cache the way Spark does
    at session start: a short Spark driver with `spark.jars.packages`."""
    if not coords:
        return
    code = (
        "from pyspark.sql import SparkSession\n"
        "import sys\n"
        "b = SparkSession.builder.master('local[1]').appName('contest-fetch')\n"
        "b = b.config('spark.jars.packages', sys.argv[1]).config('spark.ui.enabled', 'false')\n"
        "if sys.argv[2]:\n"
        "    b = b.config('spark.jars.excludes', sys.argv[2])\n"
        "b.getOrCreate().stop()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, ",".join(coords), ",".join(excludes)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        reason = next(
            (
                ln.strip()
                for ln in proc.stderr.splitlines()
                if "not found" in ln or "UNRESOLVED" in ln or "unresolved" in ln
            ),
            "the Maven repositories did not serve it",
        )
        raise ConnectorError(f"cannot resolve {', '.join(coords)}: {reason}")


def require(coords: Sequence[str]) -> None:
    """Fail in one line, before a session starts, when a library is neither in the Ivy
    cache nor resolvable now."""
    absent = missing(coords)
    if not absent:
        return
    try:
        fetch(absent)
    except ConnectorError as exc:
        raise ConnectorError(
            f"{exc}; pre-fetch with `{fetch_command(absent)}` where a Maven repository is reachable"
        ) from None


def for_paths(*paths: object) -> tuple[str, ...]:
    """What Spark's own readers and writers need for these paths: Hadoop's s3a when one
    of them is in the object store (a batch read with spark.read.parquet, a result
    written by Spark's writer), nothing otherwise."""
    from contest.infra.storage import is_object_store

    return coordinates(["s3"]) if any(is_object_store(p) for p in paths) else ()
