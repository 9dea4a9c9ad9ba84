"""`pip install .` gives a working `contest` outside the checkout: the wheel is built and
installed into a fresh virtualenv, and the README tour runs with that `contest` from a
folder that is not the checkout (its dependencies are taken from the project's
environment, so nothing is downloaded)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.config import REPO, cli
from tests.test_readme import tour_commands

pytestmark = [pytest.mark.slow, pytest.mark.spark, pytest.mark.pg]


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("install")
    wheels = root / "wheels"
    built = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(REPO),
        ]
    )
    assert built.returncode == 0, built.stderr[-2000:]
    venv = root / "venv"
    assert _run([sys.executable, "-m", "venv", str(venv)]).returncode == 0
    py = venv / "bin" / "python"
    site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
    # The project's environment provides the dependencies; its .pth files (the editable
    # install of this checkout) are not processed from an added path.
    Path(site.stdout.strip(), "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wheel = next(wheels.glob("lakesoul_contest-*.whl"))
    inst = _run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)])
    assert inst.returncode == 0, inst.stderr[-2000:]
    return venv


def test_installed_package_runs_the_tour_outside_the_checkout(installed, cfg, pg, tmp_path):
    py = installed / "bin" / "python"
    where = _run(
        [
            str(py),
            "-c",
            "import contest, meta.schema as s; print(contest.__file__); "
            "print(s.schema_sql('lakesoul_meta.sql')[:20]); "
            "from contest.data.workload import named, workload_settings as w; "
            "print(named(), w('cdc-trickle')['workload.batches'])",
        ],
        cwd=tmp_path,
    )
    assert where.returncode == 0, where.stderr
    assert str(installed) in where.stdout and str(REPO) not in where.stdout
    assert "'cdc-trickle'" in where.stdout and "'wide'" in where.stdout  # shipped workloads
    env = {**os.environ, "PATH": f"{installed / 'bin'}:{os.environ['PATH']}"}
    for argv in tour_commands():
        proc = _run(
            [str(installed / "bin" / "contest"), *cli(cfg, *argv[1:])], cwd=tmp_path, env=env
        )
        assert proc.returncode == 0, f"{' '.join(argv)}: {proc.stderr[-2000:]}"
    assert (tmp_path / ".work" / "tour" / "result" / "_SUCCESS").is_file()
