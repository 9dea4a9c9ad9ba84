"""A class-data-sharing archive (AppCDS) of the classes a Spark job's JVMs load, made
once per checkout and used by the timed jobs when `spark.cds` is on.

Every timed job is a whole `spark-submit`: two JVMs (Spark's launcher, which only
builds the command, then the driver) that each load and verify their classes from the
jars again, ~12,000 of them for the driver. `build` runs a small Spark job once with
`-XX:ArchiveClassesAtExit` on both JVMs (Java 13+: a dynamic archive over the JDK's
own), checks each archive maps (`-Xshare:on`), and only then moves it into place with
a stamp: Java's build and every jar of Spark, by name, size and time. A timed job
passes `-XX:SharedArchiveFile` only while the stamp matches (`current`), so a new Java
or other Spark jars never meet an old archive; and the JVM itself (`-Xshare:auto`, the
default) runs without an archive it cannot use, silently with the logging below. A
file cut short is the one case the JVM does not survive (it maps past the end), which
is why an archive is only ever renamed into place whole and its size is in the stamp.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from contest.config import Config
from contest.errors import RunError

# Which JVM reads which archive: spark-class starts the launcher with
# SPARK_LAUNCHER_OPTS, spark-submit the driver with --driver-java-options.
ROLES = ("launcher", "driver")
STAMP = "stamp.json"
# A stale or foreign archive is a warning on the JVM's stdout, and the launcher's stdout
# is the command spark-class runs: keep CDS's own messages off.
QUIET = "-Xlog:cds=off,cds+dynamic=off,class+path=off"


@dataclass(frozen=True)
class Archives:
    launcher: Path
    driver: Path

    def java_option(self, role: str) -> str:
        """The JVM options that map the `role` JVM's archive."""
        return f"-XX:SharedArchiveFile={getattr(self, role)} -Xshare:auto {QUIET}"


def folder(cfg: Config) -> Path:
    """Where the checkout keeps its archives: under the state folder (its own Spark)."""
    return cfg.state_path.absolute() / "cds"


def spark_home(env: Mapping[str, str]) -> Path:
    """The Spark a spark-submit with `env` runs: SPARK_HOME, else pyspark's own."""
    if env.get("SPARK_HOME"):
        return Path(env["SPARK_HOME"])
    import pyspark  # deferred: pyspark is slow to import (JVM-backed); only where Spark runs

    return Path(pyspark.__file__).resolve().parent


def conf_dir(env: Mapping[str, str], home: Path) -> str:
    """The configuration folder the driver's class path begins with."""
    return env.get("SPARK_CONF_DIR") or str(home / "conf")


def java_binary(env: Mapping[str, str]) -> Path | None:
    """The java spark-class runs: JAVA_HOME's, else the first on PATH."""
    if env.get("JAVA_HOME"):
        return Path(env["JAVA_HOME"]) / "bin" / "java"
    found = shutil.which("java", path=env.get("PATH"))
    return Path(found) if found else None


def fingerprint(env: Mapping[str, str]) -> str | None:
    """Java's build and Spark's jars (name, size, time), hashed; None without a java.
    What an archive was made from: any change makes it stale."""
    java = java_binary(env)
    if java is None or not java.exists():
        return None
    java = java.resolve()
    h = hashlib.sha256()
    runtime = [java, *sorted(java.parent.parent.glob("lib/server/libjvm.*"))]
    jars = sorted((spark_home(env) / "jars").glob("*.jar"))
    for path in (*runtime, *jars):
        st = path.stat()
        h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def current(cfg: Config, env: Mapping[str, str]) -> Archives | None:
    """The archives when they match this Java and Spark (and are whole), else None."""
    where = folder(cfg)
    try:
        stamp = json.loads((where / STAMP).read_text())
        sizes = {r: (where / f"{r}.jsa").stat().st_size for r in ROLES}
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("sizes") != sizes:
        return None
    if stamp.get("fingerprint") != fingerprint(env):
        return None
    return Archives(*(where / f"{r}.jsa" for r in ROLES))


def build(cfg: Config, env: Mapping[str, str], force: bool = False) -> Archives:
    """Make the archives (unless current and not `force`): a small Spark job with both
    JVMs dumping their classes at exit, each archive checked, then moved into place."""
    if not force and (have := current(cfg, env)) is not None:
        return have
    print_ = fingerprint(env)
    if print_ is None:
        raise RunError("no java found (JAVA_HOME or PATH): no class-data archive made")
    where = folder(cfg)
    where.mkdir(parents=True, exist_ok=True)
    (where / STAMP).unlink(missing_ok=True)  # from here on, no job uses the old files
    tmp = {r: where / f"{r}.jsa.tmp" for r in ROLES}
    for path in tmp.values():
        path.unlink(missing_ok=True)
    run_env = dict(env)
    # A JVM that maps an archive already cannot dump one (an environment that carries a
    # SharedArchiveFile, as the tests' does): the job runs without any.
    for var in ("SPARK_LAUNCHER_OPTS", "SPARK_SUBMIT_OPTS"):
        run_env[var] = without_archives(env.get(var, ""))
    run_env["SPARK_LAUNCHER_OPTS"] = (
        f"{run_env['SPARK_LAUNCHER_OPTS']} -XX:ArchiveClassesAtExit={tmp['launcher']}"
    ).strip()
    run_env.setdefault("PYSPARK_PYTHON", sys.executable)
    run_env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    run_env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    home = spark_home(env)
    log = where / "build.log"
    cmd = [
        str(home / "bin" / "spark-submit"),
        "--master",
        "local[2]",
        "--driver-java-options",
        f"-XX:ArchiveClassesAtExit={tmp['driver']}",
        str(Path(__file__).with_name("cds_job.py")),
        str(where / "job"),
    ]
    with log.open("w") as out:
        done = subprocess.run(cmd, env=run_env, stdout=out, stderr=subprocess.STDOUT, cwd=where)
    shutil.rmtree(where / "job", ignore_errors=True)
    missing = [r for r, p in tmp.items() if not p.is_file()]
    if done.returncode != 0 or missing:
        raise RunError(
            f"the class-data archive job exited {done.returncode}"
            + (f", no {' or '.join(missing)} archive" if missing else "")
            + f" (log {log})"
        )
    java = str(java_binary(env))
    for role, path in tmp.items():
        # Each JVM's class path as spark-class and the launcher give it.
        jars = str(home / "jars" / "*")
        path_ = jars if role == "launcher" else f"{conf_dir(env, home)}:{jars}"
        check = [java, "-Xshare:on", f"-XX:SharedArchiveFile={path}", "-cp", path_, "-version"]
        ok = subprocess.run(check, capture_output=True, text=True)
        if ok.returncode != 0:
            path.unlink(missing_ok=True)
            raise RunError(f"the {role} archive does not map: {ok.stderr.strip()[-300:]}")
    for role, path in tmp.items():
        os.replace(path, where / f"{role}.jsa")
    sizes = {r: (where / f"{r}.jsa").stat().st_size for r in ROLES}
    (where / f"{STAMP}.tmp").write_text(json.dumps({"fingerprint": print_, "sizes": sizes}))
    os.replace(where / f"{STAMP}.tmp", where / STAMP)
    return Archives(*(where / f"{r}.jsa" for r in ROLES))


def without_archives(options: str) -> str:
    """JVM options with every class-data archive option taken out."""
    return " ".join(
        o for o in options.split() if not o.startswith(("-XX:SharedArchiveFile=", "-Xshare:"))
    )


def submit_env(cfg: Config, env: Mapping[str, str]) -> tuple[dict[str, str], str]:
    """A timed spark-submit's environment and extra driver options under `spark.cds`:
    the launcher's archive in SPARK_LAUNCHER_OPTS, the driver's option; unchanged when
    cds is off or the archives are missing or stale."""
    out = dict(env)
    archives = current(cfg, env) if cfg.spark.cds else None
    if archives is None:
        return out, ""
    launcher = archives.java_option("launcher")
    out["SPARK_LAUNCHER_OPTS"] = f"{env.get('SPARK_LAUNCHER_OPTS', '')} {launcher}".strip()
    return out, archives.java_option("driver")
