"""JVM libraries, loaded the way users load them: `spark.jars.packages` with pinned
coordinates, resolved by Spark's Ivy into `~/.ivy2`. `contest packages fetch` (which
`./build.sh` runs) resolves them ahead, so no timed run downloads anything and a machine
without network still runs once they are fetched. A library that cannot be resolved is
one line naming its coordinates and the pre-fetch command, not a Java trace.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from contest.config import Config
from contest.errors import ConnectorError
from contest.infra import jarcache
from contest.infra.storage import is_object_store
from meta.distributed import JDBC_PACKAGE

S3A_PACKAGE = "org.apache.hadoop:hadoop-aws:3.3.4"

# The harness's own named sets of coordinates; LakeSoul's libraries are in lakesoul_jvm.py,
# each table format's in its folder under contest/peers (contest/peers/registry.py lists
# them all for `contest packages fetch`).
PACKAGES: dict[str, tuple[str, ...]] = {
    # PostgreSQL's JDBC driver: the distributed metadata replay reads commits through it.
    "jdbc": (JDBC_PACKAGE,),
    # Hadoop's s3a (the version of pyspark's Hadoop client jars, 3.3.4; brings the AWS
    # SDK bundle): Spark's own readers and writers on s3:// paths.
    "s3": (S3A_PACKAGE,),
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


def ivy_home(cfg: Config | None = None) -> Path:
    """Spark's Ivy home: `spark.jars.ivy` when the configuration sets it (through
    spark.conf), else ~/.ivy2. Its jars/ and cache/ are shared by every checkout."""
    if cfg is not None and cfg.spark.conf.get("spark.jars.ivy"):
        return Path(cfg.spark.conf["spark.jars.ivy"]).expanduser().absolute()
    return Path.home() / ".ivy2"


def _parts(coordinate: str) -> tuple[str, str, str]:
    parts = coordinate.split(":")
    if len(parts) != 3 or not all(parts):
        raise ConnectorError(f"not Maven coordinates (group:artifact:version): {coordinate!r}")
    return parts[0], parts[1], parts[2]


def ivy_jar(coordinate: str, home: Path | None = None, ivy: Path | None = None) -> Path:
    """Where Spark's Ivy keeps a resolved artifact's jar (under `ivy`, else the Ivy home
    of the user `home`)."""
    group, artifact, version = _parts(coordinate)
    root = ivy or (home or Path.home()) / ".ivy2"
    return root / "jars" / f"{group}_{artifact}-{version}.jar"


def checked_jars(coords: Sequence[str], ivy: Path) -> list[Path]:
    """The jars that make a set fetched: its own, and every jar its last resolution
    retrieved (recorded then), so a corrupt dependency is found too."""
    jars = [ivy_jar(c, ivy=ivy) for c in coords]
    try:
        recorded = _record(coords, ivy).read_text().split()
    except FileNotFoundError:
        recorded = []
    return list(dict.fromkeys([*jars, *(ivy / "jars" / name for name in recorded)]))


UNCHECKED = "unchecked"  # no record of the last resolution: its dependencies unknown


def problems(coords: Sequence[str], ivy: Path | None = None) -> dict[Path, str]:
    """Each jar of `coords` that is missing or unusable, with the reason; the record of
    the set's resolution as UNCHECKED when there is none yet (fetched before jars were
    verified: resolved again, from the cache, to learn and check its dependencies)."""
    root = ivy or ivy_home()
    memo = jarcache.Memo(root)
    found = {p: r for p in checked_jars(coords, root) if (r := jarcache.problem(p, memo))}
    memo.save()
    if not _record(coords, root).is_file():
        found[_record(coords, root)] = UNCHECKED
    return found


def missing(coords: Sequence[str], ivy: Path | None = None) -> list[str]:
    """The coordinates whose jars (or their dependencies' jars) are missing or corrupt."""
    root = ivy or ivy_home()
    bad = problems(coords, root)
    if not bad:
        return []
    own = [c for c in coords if ivy_jar(c, ivy=root) in bad]
    return own or list(coords)


def local_jars(
    coords: Sequence[str], excludes: Sequence[str] = (), ivy: Path | None = None
) -> list[Path]:
    """The jars Spark's Ivy resolves `coords` to (their own and every dependency's, the
    excluded left out), by path, fetched and verified first when they are not: what a
    timed job loads with `--jars`, so that no timed job resolves anything."""
    root = ivy or ivy_home()
    if problems(coords, root):
        fetch(coords, excludes, root, only_missing=True)
    return [p for p in checked_jars(coords, root) if p.is_file()]


def fetch_command(coords: Sequence[str]) -> str:
    return f"contest packages fetch --coordinates {','.join(coords)}"


_RESOLVE = (
    "from pyspark.sql import SparkSession\n"
    "import sys\n"
    "b = SparkSession.builder.master('local[1]').appName('contest-fetch')\n"
    "b = b.config('spark.jars.packages', sys.argv[1]).config('spark.ui.enabled', 'false')\n"
    "b = b.config('spark.jars.ivy', sys.argv[3])\n"
    "if sys.argv[2]:\n"
    "    b = b.config('spark.jars.excludes', sys.argv[2])\n"
    "b.getOrCreate().stop()\n"
)


def fetch(
    coords: Sequence[str],
    excludes: Sequence[str] = (),
    ivy: Path | None = None,
    only_missing: bool = False,
) -> None:
    """Resolve `coords` (and their dependencies) into the Ivy cache the way Spark does
    at session start (a short Spark driver with `spark.jars.packages`), holding the
    cache's lock; then verify every jar retrieved. A jar found corrupt (before, or after
    the download) is set aside and fetched again once. `only_missing`: nothing is done
    when, once the lock is held, every jar is there and whole (another set-up fetched
    them while this one waited)."""
    if not coords:
        return
    root = ivy or ivy_home()
    with jarcache.lock(root, f"fetching {', '.join(coords)}"):
        if only_missing and not missing(coords, root):
            return
        suspects: dict[Path, str] = {}
        for _attempt in (1, 2):
            memo = jarcache.Memo(root)
            for p in checked_jars(coords, root):
                if (r := jarcache.problem(p, memo)) not in (None, "missing"):
                    suspects[p] = r or ""
            with jarcache.set_aside(_with_sources(suspects, root)):
                stderr = _resolve(coords, excludes, root)
                retrieved = resolved_jars(stderr, root)
                absent = [c for c in coords if not ivy_jar(c, ivy=root).is_file()]
                if absent:
                    raise ConnectorError(
                        f"cannot resolve {', '.join(absent)}: Ivy resolved it but "
                        f"retrieved no jar into {root / 'jars'}"
                    )
                suspects = {
                    p: r
                    for p in dict.fromkeys([*(ivy_jar(c, ivy=root) for c in coords), *retrieved])
                    if (r := jarcache.problem(p, memo))
                }
            memo.save()
            if not suspects:
                jarcache.sweep(checked_jars(coords, root))
                names = sorted(p.name for p in retrieved)
                jarcache.write_atomic(_record(coords, root), ("\n".join(names) + "\n").encode())
                return
        path, reason = next(iter(suspects.items()))
        raise ConnectorError(
            f"cannot fetch {', '.join(coords)}: {path} is {reason} even after fetching it "
            "again (the repository serves a broken file, or the disk is full)"
        )


def _resolve(coords: Sequence[str], excludes: Sequence[str], ivy: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", _RESOLVE, ",".join(coords), ",".join(excludes), str(ivy)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if proc.returncode != 0:
        raise ConnectorError(
            f"cannot resolve {', '.join(coords)}: {resolution_failure(proc.stderr)}"
        )
    return proc.stderr


def _record(coords: Sequence[str], ivy: Path) -> Path:
    key = hashlib.sha1(",".join(sorted(coords)).encode()).hexdigest()[:16]
    return ivy / jarcache.TOOL_DIR / "resolved" / f"{key}.jars"


_FOUND = re.compile(r"^\s*found (\S+)#(\S+);(\S+) in \S+")


def resolved_jars(stderr: str, ivy: Path) -> list[Path]:
    """The jars Ivy retrieved for a resolution, from its `found group#artifact;version`
    lines (classified jars such as jffi's `-native` included)."""
    out: list[Path] = []
    for line in stderr.splitlines():
        m = _FOUND.match(line)
        if m:
            group, artifact, version = m.groups()
            stem = f"{group}_{artifact}-{version}"
            out.extend(sorted((ivy / "jars").glob(f"{stem}.jar")))
            out.extend(sorted((ivy / "jars").glob(f"{stem}-*.jar")))
    return list(dict.fromkeys(out))


def _with_sources(bad: dict[Path, str], ivy: Path) -> list[Path]:
    """The corrupt retrieved jars, with the copies Ivy would retrieve them from again
    when those are corrupt too: Ivy's own cache, and the local Maven repository (Spark's
    first resolver), where a jar the set-up installed can be the broken one."""
    out: list[Path] = []
    for path in bad:
        out.append(path)
        for source in _sources(path, ivy):
            if jarcache.problem(source) not in (None, "missing"):
                out.append(source)
    return out


def _sources(retrieved: Path, ivy: Path) -> list[Path]:
    """Ivy's cached copy of a retrieved jar (`group_artifact-version.jar` is
    `cache/group/artifact/jars/artifact-version.jar`), and the local Maven repository's."""
    group, _, rest = retrieved.name.partition("_")
    maven = jarcache.maven_repository()
    out = []
    for folder in sorted((ivy / "cache" / group).glob("*/*s")):
        artifact = folder.parent.name
        if rest.startswith(artifact + "-") and (folder / rest).is_file():
            out.append(folder / rest)
            out.extend(sorted(maven.joinpath(*group.split("."), artifact).glob(f"*/{rest}")))
    return out


_JAVA_EXCEPTION = re.compile(r"(?:[\w$]+\.)+[\w$]*(?:Exception|Error)\b(?::.*)?$")


def resolution_failure(stderr: str) -> str:
    """What actually failed in a Spark/Ivy resolution, from its output: an artifact no
    repository has, a download whose checksum does not match, a repository that could
    not be reached, a copy into the jars folder; never a guess."""
    lines = [ln.strip() for ln in stderr.splitlines()]
    unresolved = [
        m.group(1).replace("#", ":").replace(";", ":")
        for ln in lines
        if (m := re.match(r"^:: (\S+#\S+;\S+): (not found|.*)$", ln))
    ]
    failed = [ln for ln in lines if ln.startswith("[FAILED")]
    checksum = [ln for ln in failed if "invalid sha1" in ln or "invalid md5" in ln]
    unreachable = sorted(
        {
            m.group(1)
            for ln in lines
            if (m := re.search(r"\((java\.net\.\w+|javax\.net\.ssl\.\w+)(?::[^)]*)?\)", ln))
        }
    )
    if checksum:
        return "checksum mismatch: " + _short(checksum[0])
    if unresolved:
        why = f"{', '.join(unresolved)}: not found in any repository"
        if unreachable:
            why += f" (a repository could not be reached: {', '.join(unreachable)})"
        return why
    if failed:
        return "download failed: " + _short(failed[0])
    retrieve = next((ln for ln in lines if "problem during retrieve" in ln), None)
    if retrieve:
        return "copying into the Ivy jars folder failed: " + _short(retrieve)
    if unreachable:
        return f"no repository could be reached ({', '.join(unreachable)})"
    exc = [m.group(0) for ln in lines if (m := _JAVA_EXCEPTION.search(ln))]
    if exc:
        return _short(exc[-1])
    last = next((ln for ln in reversed(lines) if ln), "no output")
    return f"Spark's resolver exited with an error: {_short(last)}"


def _short(line: str) -> str:
    return re.sub(r"https?://\S+", "<url>", line)[:300]


def require(coords: Sequence[str], ivy: Path | None = None) -> None:
    """Fail in one line, before a session starts, when a library is neither in the Ivy
    cache (whole) nor resolvable now."""
    absent = missing(coords, ivy)
    if not absent:
        return
    try:
        fetch(absent, ivy=ivy)
    except ConnectorError as exc:
        raise ConnectorError(
            f"{exc}; pre-fetch with `{fetch_command(absent)}` where a Maven repository is reachable"
        ) from None


def for_paths(*paths: object) -> tuple[str, ...]:
    """What Spark's own readers and writers need for these paths: Hadoop's s3a when one
    of them is in the object store (a batch read with spark.read.parquet, a result
    written by Spark's writer), nothing otherwise."""
    return coordinates(["s3"]) if any(is_object_store(p) for p in paths) else ()
