"""The jars the harness keeps in the local Maven repository (~/.m2/repository): jffi's
main jar (Ivy fetches only its native one), the S3Proxy program, and Hudi's Spark
bundle, which jvm/'s record merger compiles against (installed from Spark's Ivy cache,
not downloaded a second time).

Each is verified (the repository's `.sha1` Maven keeps beside it, and a zip test),
fetched with Maven's strict checksums, written atomically, under the repository's lock
(contest/infra/jarcache.py); a corrupt one is set aside and fetched again.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from contest.errors import ConnectorError
from contest.infra import jarcache, packages


@dataclass(frozen=True)
class Artifact:
    coordinate: str  # group:artifact:version[:type[:classifier]]
    why: str
    from_ivy: bool = False  # installed from the jar Spark's Ivy cache holds


ARTIFACTS: dict[str, Artifact] = {
    "jffi": Artifact(
        "com.github.jnr:jffi:1.3.13",
        "jffi's main jar (LakeSoul's native I/O; Ivy gets the native one)",
    ),
    "hudi-build": Artifact(
        "org.apache.hudi:hudi-spark3.5-bundle_2.12:1.0.2",
        "Hudi's Spark bundle, which jvm/ compiles against",
        from_ivy=True,
    ),
    "s3proxy": Artifact(
        "org.gaul:s3proxy:2.6.0:jar:jar-with-dependencies", "the embedded S3 server (contest s3)"
    ),
}


def repository(home: Path | None = None) -> Path:
    return jarcache.maven_repository(home)


def jar_path(coordinate: str, repo: Path | None = None) -> Path:
    parts = coordinate.split(":")
    if len(parts) not in (3, 5) or not all(parts):
        raise ConnectorError(f"not Maven coordinates (group:artifact:version): {coordinate!r}")
    group, artifact, version = parts[:3]
    classifier = f"-{parts[4]}" if len(parts) == 5 else ""
    folder = (repo or repository()).joinpath(*group.split("."), artifact, version)
    return folder / f"{artifact}-{version}{classifier}.jar"


def problem(name: str, repo: Path | None = None) -> str | None:
    """Why the named artifact is not usable in the repository, or None."""
    root = repo or repository()
    memo = jarcache.Memo(root)
    reason = jarcache.problem(jar_path(ARTIFACTS[name].coordinate, root), memo)
    memo.save()
    return reason


def ensure(
    name: str, repo: Path | None = None, ivy: Path | None = None, settings: Path | None = None
) -> Path:
    """The named artifact, whole, in the repository: verified, else fetched (or installed
    from the Ivy cache) now, a corrupt copy replaced."""
    if name not in ARTIFACTS:
        raise ConnectorError(f"unknown Maven artifact {name!r} (known: {', '.join(ARTIFACTS)})")
    art = ARTIFACTS[name]
    root = repo or repository()
    jar = jar_path(art.coordinate, root)
    if problem(name, root) is None:
        return jar  # no lock: a run's session start never waits for a set-up elsewhere
    with jarcache.lock(root, f"fetching {art.coordinate}"):
        memo = jarcache.Memo(root)
        reason = jarcache.problem(jar, memo)
        memo.save()
        if reason is not None:
            if art.from_ivy:
                install_from_ivy(art, root, ivy)
            else:
                get(art.coordinate, root, settings)
        jarcache.sweep([jar, jar.with_name(jar.name + ".sha1")])
        return jar


def install_from_ivy(art: Artifact, repo: Path, ivy: Path | None = None) -> Path:
    """Install the jar Spark's Ivy holds (fetched and verified first) into the Maven
    repository, atomically, with a minimal POM (what `mvn install:install-file` writes)."""
    packages.require([art.coordinate], ivy)
    group, artifact, version = art.coordinate.split(":")[:3]
    source = packages.ivy_jar(art.coordinate, ivy=ivy or packages.ivy_home())
    jar = jarcache.install(source, jar_path(art.coordinate, repo))
    pom = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<project>\n  <modelVersion>4.0.0</modelVersion>\n'
        f"  <groupId>{group}</groupId>\n  <artifactId>{artifact}</artifactId>\n"
        f"  <version>{version}</version>\n  <description>installed by contest from Spark's "
        "Ivy cache</description>\n</project>\n"
    )
    pom_file = jar.with_suffix(".pom")
    if not pom_file.is_file():
        jarcache.write_atomic(pom_file, pom.encode())
    return jar


# The plugin `mvn dependency:get` runs on Maven 3.8, named in full (no prefix lookup).
DEPENDENCY_GET = "org.apache.maven.plugins:maven-dependency-plugin:2.8:get"


def get_command(coordinate: str, repo: Path, settings: Path | None = None) -> list[str]:
    cmd = ["mvn", "-B", "-q", "--strict-checksums"]
    if settings is not None:
        cmd += ["-s", str(settings)]
    if repo != repository():
        cmd.append(f"-Dmaven.repo.local={repo}")
    return [*cmd, DEPENDENCY_GET, f"-Dartifact={coordinate}", "-Dtransitive=false"]


def get(coordinate: str, repo: Path | None = None, settings: Path | None = None) -> Path:
    """Download with Maven (strict checksums: a mismatch fails the download), a corrupt
    copy set aside first so Maven fetches it again; verified after."""
    root = repo or repository()
    jar = jar_path(coordinate, root)
    if shutil.which("mvn") is None:
        raise ConnectorError(f"Maven (`mvn`) is needed to fetch {coordinate}")
    with jarcache.lock(root, f"fetching {coordinate}"):
        broken = [] if jarcache.problem(jar) in (None, "missing") else [jar]
        sidecar = jar.with_name(jar.name + ".sha1")
        with jarcache.set_aside([*broken, *([sidecar] if broken else [])]):
            cmd = get_command(coordinate, root, settings)
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
            if proc.returncode != 0:
                raise ConnectorError(
                    f"cannot fetch {coordinate}: {maven_failure(proc.stdout + proc.stderr)}"
                )
            reason = jarcache.problem(jar)
            if reason:
                raise ConnectorError(f"cannot fetch {coordinate}: Maven left {jar} {reason}")
    return jar


def maven_failure(output: str) -> str:
    """What failed in a Maven download, from its output: a checksum mismatch, a
    repository that could not be reached, an artifact no repository has."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", output)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for pattern, what in (
        (
            r"[Cc]hecksum (validation )?failed|checksum.*(mismatch|does not match)",
            "checksum mismatch",
        ),
        (
            r"UnknownHost|Unknown host|Connection refused|Connect to .* failed|timed out|"
            r"No route to host|Network is unreachable|transfer failed",
            "a repository could not be reached",
        ),
        (r"Could not find artifact|was not found in|Missing:", "not found in any repository"),
    ):
        hit = next((ln for ln in lines if re.search(pattern, ln)), None)
        if hit:
            return f"{what} ({re.sub(r'https?://[^ )]*', '<url>', hit)[:300]})"
    errors = [ln for ln in lines if ln.startswith("[ERROR]")]
    return (errors[0] if errors else (lines[-1] if lines else "Maven failed with no output"))[:300]
