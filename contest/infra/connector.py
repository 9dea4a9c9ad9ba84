"""The LakeSoul JVM connector, loaded through spark.jars.packages when enabled.

Spark's Ivy resolver also reads the local Maven repository, so a connector that
`mvn dependency:get` can fetch is one Spark can load. When neither has it, say so
in one line instead of a Java stack trace.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from contest.errors import ConnectorError
from contest.infra.maven import maven_failure


def local_jar(coordinates: str, home: Path | None = None) -> Path | None:
    """The connector jar in the local Maven or Ivy cache, if it is there."""
    group, artifact, version = parse(coordinates)
    home = home or Path.home()
    candidates = [
        home
        / ".m2"
        / "repository"
        / Path(*group.split("."))
        / artifact
        / version
        / f"{artifact}-{version}.jar",
        home / ".ivy2" / "jars" / f"{group}_{artifact}-{version}.jar",
    ]
    return next((c for c in candidates if c.is_file()), None)


def parse(coordinates: str) -> tuple[str, str, str]:
    parts = coordinates.split(":")
    if len(parts) != 3 or not all(parts):
        raise ConnectorError(f"not Maven coordinates (group:artifact:version): {coordinates!r}")
    return parts[0], parts[1], parts[2]


def fetch_command(coordinates: str) -> list[str]:
    return ["mvn", "-q", "dependency:get", f"-Dartifact={coordinates}", "-Dtransitive=false"]


def fetch(coordinates: str) -> Path:
    """Pre-fetch the connector into the local Maven repository."""
    parse(coordinates)
    if shutil.which("mvn") is None:
        raise ConnectorError(
            f"Maven (`mvn`) is not installed: it is needed to pre-fetch {coordinates}"
        )
    proc = subprocess.run(fetch_command(coordinates), capture_output=True, text=True)
    jar = local_jar(coordinates)
    if proc.returncode != 0 or jar is None:
        reason = maven_failure(proc.stdout + proc.stderr) if proc.returncode else "no jar after"
        raise ConnectorError(
            f"LakeSoul Spark connector {coordinates} cannot be resolved: {reason}. "
            f"Pre-fetch it with `{' '.join(fetch_command(coordinates))}` "
            "(or `contest connector fetch`) once a repository serves it, "
            "or leave spark.use_connector off to use the harness's own engine "
            "(write.engine = harness)"
        )
    return jar


def ensure_resolvable(coordinates: str) -> Path:
    return local_jar(coordinates) or fetch(coordinates)
