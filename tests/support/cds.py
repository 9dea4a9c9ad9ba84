"""The test run's class-data archive (the JVM's AppCDS): the Spark, Scala and Hadoop
classes a small job loads, dumped once per checkout by one spark-submit
(jobs/cds_training.py) and mapped by every later test JVM instead of being loaded and
verified again. A test's Spark driver lives a few seconds, and on tiny data loading its
classes is much of its CPU: measured on this project's 2-core machine (busy), a small
job's JVM took 4 CPU seconds instead of 7.5, test_evaluate_optimized_end_to_end's four
jobs 26 instead of 40. What a JVM computes is the same; a JVM
whose class path does not start with the archive's (LakeSoul's jobs put Arrow 15 ahead
of Spark's jars) silently uses the JDK's own archive only, as without this.

The archive's name holds a digest of the JVM and of Spark's jars (names, sizes, times):
a new JDK or Spark builds a new one. A failed build leaves the run without it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Unified logging prints a warning on stdout when a JVM cannot use the archive (another
# class path): a job's stdout is its report, so these tags say nothing.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
TRAINING = Path(__file__).resolve().parent / "jobs" / "cds_training.py"


def _spark_jars() -> Path | None:
    try:
        import pyspark
    except ImportError:
        return None
    jars = Path(pyspark.__file__).resolve().parent / "jars"
    return jars if jars.is_dir() else None


def archive_key(jars: Path, java: Path) -> str:
    """A digest of what the archive was made from: the JVM and Spark's jars."""
    h = hashlib.sha256()
    for f in [java, *sorted(jars.glob("*.jar"))]:
        st = f.stat()
        h.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:16]


def archive_options(folder: Path, jvm_options: str, timeout_s: float = 600.0) -> str:
    """The JVM options that map the archive (built now if missing), or "" without one."""
    jars, found = _spark_jars(), shutil.which("java")
    if jars is None or found is None:
        return ""
    archive = folder / f"spark-{archive_key(jars, Path(found).resolve())}.jsa"
    if not archive.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{archive.name}.{os.getpid()}"
        bin_dir = Path(sys.executable).parent
        env = {
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
            "PYSPARK_PYTHON": sys.executable,
            "SPARK_SUBMIT_OPTS": f"{jvm_options} -XX:ArchiveClassesAtExit={partial}",
        }
        cmd = [str(bin_dir / "spark-submit"), str(TRAINING), str(folder / ".training-out")]
        try:
            done = subprocess.run(cmd, env=env, capture_output=True, timeout=timeout_s)
        except (OSError, subprocess.SubprocessError):
            done = None
        shutil.rmtree(folder / ".training-out", ignore_errors=True)
        if done is None or done.returncode != 0 or not partial.is_file():
            partial.unlink(missing_ok=True)
            return ""
        for old in folder.glob("spark-*.jsa"):  # an earlier JVM's or Spark's: never mapped
            old.unlink(missing_ok=True)
        partial.replace(archive)
    return f"-XX:SharedArchiveFile={archive} {QUIET}"
