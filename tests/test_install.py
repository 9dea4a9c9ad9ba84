"""`pip install .` gives a working `contest` outside the checkout: the wheel is built and
installed into a fresh virtualenv, every module of `contest` and `meta` imports from it,
and the README tour runs with that `contest` from a folder that is not the checkout (its
dependencies are taken from the project's environment, so nothing is downloaded)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.config import REPO, cli
from tests.support.doc_examples import tour_commands

pytestmark = pytest.mark.slow

# Run by the installed interpreter: every module under the installed `contest` and `meta`
# (walked from where they are installed, so the checkout plays no part), imported.
IMPORT_ALL = """
import importlib, json, pkgutil
found, failed = {}, {}
def note(name):
    failed[name] = "walk could not import it"
for top in ("contest", "meta"):
    pkg = importlib.import_module(top)
    found[top] = pkg.__file__
    for info in pkgutil.walk_packages(pkg.__path__, top + ".", onerror=note):
        found[info.name] = None
for name in found:
    try:
        found[name] = importlib.import_module(name).__file__
    except Exception as exc:
        failed[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps({"found": found, "failed": failed}))
"""


def checkout_modules() -> set[str]:
    """Every module of the checkout's `contest` and `meta` (sql/ ships as `meta.sql`,
    workloads/ as `contest.workloads`)."""
    names = set()
    for top in ("contest", "meta"):
        for path in (REPO / top).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            names.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names | {"meta.sql", "contest.workloads"}


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)


# What the wheel is built from. A copy, because setuptools reuses the checkout's build/
# folder: a package left out of the wheel would still ship from an earlier build there.
SOURCES = ("pyproject.toml", "setup.py", "contest", "meta", "sql", "workloads")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("install")
    src = root / "src"
    src.mkdir()
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / name, src / name)
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
            str(src),
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


def test_every_module_imports_from_the_installed_wheel(installed, tmp_path):
    proc = _run([str(installed / "bin" / "python"), "-c", IMPORT_ALL], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["failed"] == {}
    assert set(out["found"]) == checkout_modules()
    site = str(installed)
    outside = {name: f for name, f in out["found"].items() if not f.startswith(site)}
    assert outside == {}, "imported from outside the installed wheel"


@pytest.mark.spark  # the tour's commands run Spark in their own processes
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
