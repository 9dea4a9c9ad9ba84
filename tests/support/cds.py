"""The test run's class-data archives (AppCDS): the product's own
(`contest/infra/cds.py`, `contest cds build`), made once per checkout under the tests'
state folder and mapped by every later test JVM instead of loading and verifying Spark's,
Scala's and Hadoop's classes again. A test's Spark driver lives a few seconds, and on
tiny data loading its classes is much of its CPU: measured on this project's 2-core
machine, a small job's JVM took about 4 CPU seconds instead of 7.5. What a JVM computes
is the same; a JVM whose class path does not start with the archive's (LakeSoul's jobs
put Arrow 15 ahead of Spark's jars) runs without it, silently. A new JDK or Spark makes
new archives (the product's stamp); a failed build leaves the run without them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from filelock import FileLock


def archive_options(state: Path, jvm_options: str) -> tuple[str, str]:
    """(the driver's, the launcher's) JVM options that map the archives, built now when
    missing or stale; ("", "") without them."""
    from dataclasses import replace

    from contest.config import Config
    from contest.errors import HarnessError
    from contest.infra import cds

    cfg = replace(Config(), state_dir=str(state))
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_SUBMIT_OPTS": jvm_options,
    }
    try:
        # pytest-xdist's workers: one builds, the other waits and finds them built.
        state.mkdir(parents=True, exist_ok=True)
        with FileLock(state / "cds.lock"):
            archives = cds.build(cfg, env)
    except (HarnessError, OSError):
        return "", ""
    return archives.java_option("driver"), archives.java_option("launcher")
