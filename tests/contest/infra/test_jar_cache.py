"""The shared JVM caches: every jar verified, installed atomically, fetched
under a machine-wide lock, a corrupt one fetched again at the next run, and a failed
resolution named for what failed.

The caches here are temporary ones (`spark.jars.ivy` through the configuration, a
temporary Maven repository), filled with PostgreSQL's JDBC driver 42.7.3 and jffi, small
jars the user's local Maven repository already holds (read there, never written)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from contest.errors import ConnectorError
from contest.infra import jarcache, maven, packages
from tests.support.config import REPO

SMALL = "org.postgresql:postgresql:42.7.3"  # in ~/.m2 already: Ivy resolves it offline
CONTEST = str(Path(sys.executable).with_name("contest"))


def corrupt(path: Path) -> None:
    """Zeros over the middle of the file, its size kept: the central directory still
    reads, an entry's data does not ("invalid stored block lengths", a CRC error)."""
    data = bytearray(path.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 4096] = bytes(4096)
    tmp = path.with_name(path.name + ".test-tmp")
    tmp.write_bytes(bytes(data))
    os.replace(tmp, path)


def a_jar(tmp_path: Path) -> Path:
    jar = tmp_path / "small.jar"
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as z:
        for i in range(20):
            z.writestr(f"c{i}.class", os.urandom(2048) + bytes(8192))
    return jar


# --- verification, atomic install, the lock: no JVM -------------------------------------


def test_a_corrupt_truncated_or_mismatching_jar_is_found(tmp_path):
    jar = a_jar(tmp_path)
    assert jarcache.problem(jar) is None
    assert jarcache.problem(tmp_path / "absent.jar") == "missing"
    broken = tmp_path / "broken.jar"
    shutil.copy(jar, broken)
    corrupt(broken)
    assert "not a whole jar" in (jarcache.problem(broken) or "")
    cut = tmp_path / "cut.jar"
    cut.write_bytes(jar.read_bytes()[: jar.stat().st_size // 2])
    assert "not a whole jar" in (jarcache.problem(cut) or "")
    # Maven's `.sha1` beside a jar is the repository's checksum: a whole zip that is not
    # the repository's file is found too.
    (tmp_path / "small.jar.sha1").write_text("0" * 40 + "\n")
    assert "checksum mismatch" in (jarcache.problem(jar) or "")


def test_a_verified_jar_is_remembered_until_it_changes(tmp_path):
    jar = a_jar(tmp_path)
    memo = jarcache.Memo(tmp_path)
    assert jarcache.problem(jar, memo) is None
    memo.save()
    again = jarcache.Memo(tmp_path)
    st = jar.stat()
    assert again.get(jar) == [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    data = bytearray(jar.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 4096] = bytes(4096)
    jar.write_bytes(bytes(data))  # in place, its modification time put back as Ivy does
    os.utime(jar, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert jar.stat().st_size == st.st_size and jar.stat().st_mtime_ns == st.st_mtime_ns
    assert "not a whole jar" in (jarcache.problem(jar, again) or "")


def test_install_is_verified_and_atomic(tmp_path):
    good, dest = a_jar(tmp_path), tmp_path / "repo" / "x" / "x-1.jar"
    dest.parent.mkdir(parents=True)
    shutil.copy(good, dest)
    corrupt(dest)
    bad_source = tmp_path / "bad.jar"
    shutil.copy(good, bad_source)
    corrupt(bad_source)
    before = dest.read_bytes()
    with pytest.raises(ConnectorError, match="not a whole jar"):
        jarcache.install(bad_source, dest)
    assert dest.read_bytes() == before  # a failed install leaves the old file
    jarcache.install(good, dest)
    assert dest.read_bytes() == good.read_bytes()
    assert sorted(p.name for p in dest.parent.iterdir()) == ["x-1.jar"]  # no temp left


HOLD = """
import sys, time
from pathlib import Path
from contest.infra import jarcache
with jarcache.lock(Path(sys.argv[1]), "holding for the test"):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def test_the_cache_lock_is_machine_wide_and_says_whom_it_waits_for(tmp_path, capfd):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path), "4"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ConnectorError, match=rf"still held .*pid {holder.pid}"):
            with jarcache.lock(tmp_path, "second set-up", wait_s=0.5):
                pass
        with jarcache.lock(tmp_path, "second set-up", wait_s=60):
            # Got it once the holder let go: the holder is past its hold, ending (its
            # exit may trail its release by a moment on a loaded machine).
            assert holder.wait(timeout=60) == 0
            with jarcache.lock(tmp_path, "nested"):  # re-entrant in one process
                pass
    finally:
        holder.kill()
        holder.wait()
    err = capfd.readouterr().err
    assert f"second set-up: waiting for another set-up (pid {holder.pid}" in err


IVY_OUTPUT = """\
:: resolving dependencies :: org.apache.spark#spark-submit-parent-1;1.0
\tconfs: [default]
\tfound org.casbin#jcasbin;1.81.0 in central
:: resolution report :: resolve 812ms :: artifacts dl 3ms
\t\tmodule not found: com.dmetasoul#lakesoul-io-java;2.6.2
\t==== local-m2-cache: tried
\t==== third-party: tried
Server access error at url https://packages.example.invalid/x.pom \
(java.net.UnknownHostException: packages.example.invalid)
\t\t::::::::::::::::::::::::::::::::::::::::::::::
\t\t::          UNRESOLVED DEPENDENCIES         ::
\t\t::::::::::::::::::::::::::::::::::::::::::::::
\t\t:: com.dmetasoul#lakesoul-io-java;2.6.2: not found
\t\t::::::::::::::::::::::::::::::::::::::::::::::
Exception in thread "main" java.lang.RuntimeException: [unresolved dependency: \
com.dmetasoul#lakesoul-io-java;2.6.2: not found]
"""


def test_a_resolution_error_names_what_failed():
    # The artifact no repository has, not the host a third-party resolver could not reach.
    why = packages.resolution_failure(IVY_OUTPUT)
    assert why.startswith("com.dmetasoul:lakesoul-io-java:2.6.2: not found in any repository")
    assert "could not be reached: java.net.UnknownHostException" in why
    checksum = (
        "\t[FAILED     ] org.postgresql#postgresql;42.7.3!postgresql.jar: invalid sha1: "
        "expected=aa computed=bb (2ms)\n"
    )
    assert packages.resolution_failure(checksum).startswith("checksum mismatch: ")
    unreachable = "Server access error at url https://x.invalid/a (java.net.ConnectException)\n"
    assert packages.resolution_failure(unreachable) == (
        "no repository could be reached (java.net.ConnectException)"
    )
    retrieve = (
        'Exception in thread "main" java.lang.RuntimeException: problem during retrieve of '
        "org.apache.spark#spark-submit-parent-1: java.io.IOException: No space left on device\n"
    )
    assert "copying into the Ivy jars folder failed" in packages.resolution_failure(retrieve)
    other = 'Exception in thread "main" java.lang.IllegalStateException: boom\n\tat x.y(Z)\n'
    why = packages.resolution_failure(other)
    assert "IllegalStateException: boom" in why and "did not serve" not in why
    maven_missing = "[ERROR] Failed to execute goal: Could not find artifact a:b:jar:1 in x\n"
    assert maven.maven_failure(maven_missing).startswith("not found in any repository")
    maven_sum = "[ERROR] ... Checksum validation failed, expected aa but is bb\n"
    assert maven.maven_failure(maven_sum).startswith("checksum mismatch")
    maven_host = "[ERROR] Could not transfer artifact a:b:jar:1: Unknown host x.invalid\n"
    assert maven.maven_failure(maven_host).startswith("a repository could not be reached")


# --- Spark's Ivy and Maven, on temporary caches -------------------------------------------


def fetch_cmd(ivy: Path, *args: str) -> list[str]:
    return [CONTEST, "--set", f"spark.conf.spark.jars.ivy={ivy}", "packages", "fetch", *args]


@pytest.mark.spark
def test_two_fetches_at_once_into_one_cache_both_succeed(tmp_path):
    ivy = tmp_path / "ivy"
    cmd = fetch_cmd(ivy, "--coordinates", SMALL)
    procs = [
        subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [(p.wait(timeout=600), *p.communicate()) for p in procs]
    for rc, out, err in outs:
        assert rc == 0, err[-2000:]
        assert json.loads(out.splitlines()[-1]) == {"fetched": ["given"]}
    # The second waited for the first (the lock), instead of racing it in the cache.
    assert sum("waiting for another set-up" in err for _, _, err in outs) == 1
    jar = packages.ivy_jar(SMALL, ivy=ivy)
    assert jarcache.problem(jar) is None
    assert packages.missing([SMALL], ivy) == []


@pytest.mark.spark
def test_a_corrupt_jar_in_ivys_cache_is_fetched_again_by_the_next_fetch(tmp_path):
    ivy = tmp_path / "ivy"
    first = subprocess.run(fetch_cmd(ivy, "--coordinates", SMALL), cwd=REPO, capture_output=True)
    assert first.returncode == 0, first.stderr[-2000:]
    jar = packages.ivy_jar(SMALL, ivy=ivy)
    cached = ivy / "cache" / "org.postgresql" / "postgresql" / "jars" / "postgresql-42.7.3.jar"
    # A dependency the resolution retrieved (the driver's checker-qual) is checked too.
    dep = next(p for p in packages.checked_jars([SMALL], ivy) if "checker-qual" in p.name)
    good, good_dep = jar.read_bytes(), dep.read_bytes()
    corrupt(dep)
    assert packages.missing([SMALL], ivy) == [SMALL]
    # What a set-up killed mid-way (kill -9) left: its temporary copy, a jar set aside.
    left = [jar.with_name(f".{jar.name}.99999.tmp"), jar.with_name(f".{jar.name}.corrupt")]
    for path in left:
        path.write_bytes(b"partial")
    for path in (jar, cached):  # both: the retrieved copy and Ivy's own
        corrupt(path)
    # What ./build.sh runs: the corrupt jar counts as missing, and is replaced.
    assert packages.missing([SMALL], ivy) == [SMALL]
    heal = subprocess.run(
        fetch_cmd(ivy, "--missing", "--coordinates", SMALL), cwd=REPO, capture_output=True
    )
    assert heal.returncode == 0, heal.stderr[-2000:]
    assert jar.read_bytes() == good and cached.read_bytes() == good
    assert dep.read_bytes() == good_dep
    assert not any(p.exists() for p in left)
    assert not list(jar.parent.glob(".*corrupt")) and not list(cached.parent.glob(".*corrupt"))
    again = subprocess.run(
        fetch_cmd(ivy, "--missing", "--coordinates", SMALL),
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0 and json.loads(again.stdout) == {"fetched": []}
    # The Hudi bundle's way into the Maven repository: from the Ivy jar, atomically; a
    # corrupt copy there is replaced.
    repo = tmp_path / "m2"
    art = maven.Artifact(SMALL, "test", from_ivy=True)
    dest = maven.jar_path(SMALL, repo)
    dest.parent.mkdir(parents=True)
    dest.write_bytes(good)
    corrupt(dest)
    maven.install_from_ivy(art, repo, ivy)
    assert dest.read_bytes() == good and dest.with_suffix(".pom").is_file()


@pytest.fixture
def mirror_settings(tmp_path) -> Path:
    """Maven settings whose only repository is the user's local Maven repository, read as
    a remote one (file://, with its .sha1 files): Maven fetches as from any repository,
    without the network, and the user's repository is not written."""
    settings = tmp_path / "settings.xml"
    settings.write_text(
        textwrap.dedent(f"""\
            <settings><mirrors><mirror><id>local-as-remote</id><mirrorOf>*</mirrorOf>
            <url>{maven.repository().as_uri()}</url></mirror></mirrors></settings>
            """)
    )
    return settings


@pytest.mark.jvm  # Maven
@pytest.mark.skipif(shutil.which("mvn") is None, reason="Maven is not installed")
def test_a_corrupt_jar_in_the_maven_repository_is_fetched_again(tmp_path, mirror_settings):
    if jarcache.problem(maven.jar_path(maven.ARTIFACTS["jffi"].coordinate)) is not None:
        pytest.skip("jffi is not in the local Maven repository (./build.sh setup fetches it)")
    repo = tmp_path / "repo"
    jar = maven.ensure("jffi", repo=repo, settings=mirror_settings)
    good = jar.read_bytes()
    assert maven.problem("jffi", repo) is None
    corrupt(jar)
    assert "checksum mismatch" in (maven.problem("jffi", repo) or "")
    assert maven.ensure("jffi", repo=repo, settings=mirror_settings) == jar
    assert jar.read_bytes() == good and maven.problem("jffi", repo) is None
    assert not list(jar.parent.glob(".*"))  # nothing set aside is left
