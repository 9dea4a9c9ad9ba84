"""The class-data archive (contest/infra/cds.py): used only while it matches Java and
Spark's jars and is whole; a JVM given a missing, foreign, garbage or stale archive
runs as without one (the launcher's stdout, the command spark-class runs, unchanged)."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contest.config import Config
from contest.infra import cds


def _cfg(cfg: Config, state: Path, on: bool = True) -> Config:
    spark = dataclasses.replace(cfg.spark, cds=on)
    return dataclasses.replace(cfg, state_dir=str(state), spark=spark)


def _fake_spark(tmp: Path) -> dict[str, str]:
    home = tmp / "spark"
    (home / "jars").mkdir(parents=True)
    for name in ("a.jar", "b.jar"):
        (home / "jars" / name).write_bytes(b"jar " + name.encode())
    return dict(os.environ, SPARK_HOME=str(home))


def _stamp(cfg: Config, env: dict[str, str]) -> None:
    """Archives as `build` leaves them (their contents do not matter here)."""
    where = cds.folder(cfg)
    where.mkdir(parents=True)
    for role in cds.ROLES:
        (where / f"{role}.jsa").write_bytes(b"x" * 100)
    sizes = {r: 100 for r in cds.ROLES}
    (where / cds.STAMP).write_text(
        json.dumps({"fingerprint": cds.fingerprint(env), "sizes": sizes})
    )


def test_an_archive_is_used_only_while_it_matches_and_is_whole(cfg, tmp_path):
    env = _fake_spark(tmp_path)
    on = _cfg(cfg, tmp_path / "state")
    assert cds.current(on, env) is None  # never built
    assert cds.submit_env(on, env) == (env, "")
    _stamp(on, env)
    have = cds.current(on, env)
    assert have is not None and have.driver == cds.folder(on) / "driver.jsa"
    run_env, driver = cds.submit_env(on, env)
    assert driver == have.java_option("driver") and "-Xshare:auto" in driver
    assert have.java_option("launcher") in run_env["SPARK_LAUNCHER_OPTS"]
    # spark.cds off: nothing passed, current or not.
    assert cds.submit_env(_cfg(cfg, tmp_path / "state", on=False), env) == (env, "")
    # Another Spark jar (here: one touched): stale.
    jar = Path(env["SPARK_HOME"]) / "jars" / "b.jar"
    os.utime(jar, ns=(0, 0))
    assert cds.current(on, env) is None
    shutil.rmtree(cds.folder(on))
    _stamp(on, env)
    assert cds.current(on, env) is not None
    # A file cut short (the one case a JVM does not survive): not used.
    with (cds.folder(on) / "driver.jsa").open("r+b") as fh:
        fh.truncate(50)
    assert cds.current(on, env) is None
    # Another Java: stale.
    assert cds.current(on, dict(env, JAVA_HOME=str(tmp_path / "nojava"))) is None


@pytest.mark.spark
def test_the_launcher_runs_the_same_with_any_archive_or_none(tmp_path):
    """spark-class runs what the launcher JVM prints: with a missing, garbage, foreign or
    stale archive it prints the same command as with none, and so it does with one
    made for it."""
    env = dict(os.environ)
    home = cds.spark_home(env)
    java = str(cds.java_binary(env))
    jar = next((home / "jars").glob("spark-launcher_*.jar"))
    (tmp_path / "cp").mkdir()
    shutil.copy2(jar, tmp_path / "cp" / jar.name)
    path = str(tmp_path / "cp" / "*")
    main = ["org.apache.spark.launcher.Main", "org.apache.spark.deploy.SparkSubmit", "x.py"]
    env.update(SPARK_HOME=str(home), SPARK_SCALA_VERSION="2.12")  # as spark-class sets them

    def launch(*options: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [java, *options, "-cp", path, *main], capture_output=True, env=env, timeout=120
        )

    plain = launch()
    assert plain.returncode == 0 and b"SparkSubmit" in plain.stdout
    dumped = tmp_path / "launcher.jsa"
    assert launch(f"-XX:ArchiveClassesAtExit={dumped}").returncode == 0
    (tmp_path / "garbage.jsa").write_bytes(os.urandom(100_000))
    foreign = tmp_path / "foreign.jsa"  # another class path's archive
    subprocess.run([java, f"-XX:ArchiveClassesAtExit={foreign}", "-version"], check=True)

    def option(archive: Path) -> list[str]:
        return cds.Archives(archive, archive).java_option("launcher").split()

    for archive in (dumped, tmp_path / "missing.jsa", tmp_path / "garbage.jsa", foreign):
        got = launch(*option(archive))
        assert (got.returncode, got.stdout) == (0, plain.stdout), archive
    os.utime(tmp_path / "cp" / jar.name, ns=(0, 0))  # the jar changed: the archive is stale
    stale = launch(*option(dumped))
    assert (stale.returncode, stale.stdout) == (0, plain.stdout)


@pytest.mark.slow
@pytest.mark.spark
def test_build_makes_archives_a_spark_submit_starts_from(cfg, tmp_path):
    """`contest cds build` for real: both archives made and current, a second build
    makes nothing, and a spark-submit given them loads most of its classes from them."""
    env = dict(os.environ)
    on = _cfg(cfg, tmp_path / "state")
    made = cds.build(on, env)
    assert cds.current(on, env) == made
    stamp = (cds.folder(on) / cds.STAMP).stat().st_mtime_ns
    assert cds.build(on, env) == made
    assert (cds.folder(on) / cds.STAMP).stat().st_mtime_ns == stamp  # nothing made again
    run_env, driver = cds.submit_env(on, env)
    run_env.update(PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    loaded = tmp_path / "classes.txt"
    job = subprocess.run(
        [
            str(cds.spark_home(env) / "bin" / "spark-submit"),
            "--master",
            "local[1]",
            "--driver-java-options",
            f"{driver} -Xlog:class+load=info:file={loaded}",
            str(Path(cds.__file__).with_name("cds_job.py")),
            str(tmp_path / "job"),
        ],
        capture_output=True,
        env=run_env,
        cwd=tmp_path,
        timeout=600,
    )
    assert job.returncode == 0, job.stderr[-3000:]
    lines = loaded.read_text().splitlines()
    shared = sum("shared objects file" in line for line in lines)
    assert shared > len(lines) // 2, (shared, len(lines))
