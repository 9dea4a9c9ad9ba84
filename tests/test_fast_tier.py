"""The fast tier's selection and its guard (tests/support/fast_tier.py): what it leaves
out, and that a child that starts java or a PostgreSQL server is refused and traced back
to the test that started it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import fast_tier
from tests.support.config import REPO


def test_the_tier_leaves_out_every_real_component_and_the_slow():
    assert fast_tier.in_fast_tier(set()) and fast_tier.in_fast_tier({"parametrize"})
    for mark in ("spark", "jvm", "jars", "pg", "s3", "standalone", "slow", "browser"):
        assert not fast_tier.in_fast_tier({mark, "parametrize"}), mark


@pytest.mark.skipif(shutil.which("java") is None, reason="no java to stand in for")
def test_a_child_java_is_refused_and_named_after_the_test(tmp_path, monkeypatch):
    for name in ("PATH", "JAVA_HOME", fast_tier.LOG_VARIABLE):
        monkeypatch.setenv(name, os.environ.get(name, ""))  # restored after the test
    log = tmp_path / "calls.log"
    fast_tier.install_guard(tmp_path / "bin", log)
    test = "tests/x.py::test_y"
    env = {**os.environ, "PYTEST_CURRENT_TEST": f"{test} (call)"}
    ran = subprocess.run(
        ["java", "-cp", "nothing", "Main"], env=env, capture_output=True, text=True
    )
    assert ran.returncode == 97 and "fast tier starts no JVM" in ran.stderr
    initdb = subprocess.run(["initdb", "-D", str(tmp_path)], env=env, capture_output=True)
    assert initdb.returncode == 97 and not any(tmp_path.glob("PG_VERSION"))
    calls = fast_tier.calls_of(log, test)
    assert calls == ["java -cp nothing Main", f"initdb -D {tmp_path}"]
    assert fast_tier.calls_of(log, "tests/x.py::test_other") == []
    line = fast_tier.refusal(calls)
    assert "@pytest.mark.pg and @pytest.mark.spark" in line and "(+1 more)" in line
    # A machine's description asks java its version: answered, not refused or logged.
    version = subprocess.run(["java", "-version"], env=env, capture_output=True, text=True)
    assert version.returncode == 0 and "version" in version.stderr
    assert len(fast_tier.calls_of(log, test)) == 2


def test_a_guard_installed_beside_another_answers_java_version_from_the_real_java(
    tmp_path, monkeypatch
):
    # A child pytest of the tier installs a guard while the worker's is first on PATH:
    # its java must not point back to the worker's stand-in (an exec loop).
    for name in ("PATH", "JAVA_HOME", fast_tier.LOG_VARIABLE):
        monkeypatch.setenv(name, os.environ.get(name, ""))  # restored after the test
    fast_tier.install_guard(tmp_path / "worker" / "bin", tmp_path / "worker.log")
    fast_tier.install_guard(tmp_path / "child" / "bin", tmp_path / "child.log")
    real = fast_tier.real_program("java")
    assert real and not fast_tier.is_stand_in(Path(real))
    for guard in ("worker", "child"):
        assert real in (tmp_path / guard / "bin" / "java").read_text()
        assert fast_tier.is_stand_in(tmp_path / guard / "bin" / "java")
    version = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
    assert version.returncode == 0 and "version" in version.stderr


def test_fast_selects_no_marked_test_and_plain_pytest_selects_them_all():
    """--fast leaves out the marked tests of a module; without it every test runs (only
    ./build.sh chooses the tier). Collection only, in a child pytest."""
    module = "tests/contest/peers/test_native_end_to_end.py"

    def collected(*args: str) -> set[str]:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-n", "0",
             *args, module],
            capture_output=True, text=True, cwd=REPO, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout[-2000:]
        return {ln for ln in proc.stdout.splitlines() if ln.startswith(module)}

    every, fast = collected(), collected("--fast")
    marked = collected("-m", " or ".join(fast_tier.FAST_EXCLUDED))
    assert fast and marked and fast == every - marked
