"""The package zip executors import from: every module and data file, and nothing
from the checkout."""

import json
import zipfile
from pathlib import Path

import pytest

import contest
import meta
from contest.infra.archive import build_py_files
from tests.support.config import REPO


def test_the_zip_holds_every_package_file(tmp_path):
    names = set(zipfile.ZipFile(build_py_files(tmp_path)).namelist())
    for pkg, prefix in ((contest, "contest"), (meta, "meta")):
        root = Path(pkg.__path__[0])
        for py in root.rglob("*.py"):
            assert f"{prefix}/{py.relative_to(root).as_posix()}" in names
    assert "contest/infra/log4j2.properties" in names
    sql = {n for n in names if n.startswith("meta/sql/") and n.endswith(".sql")}
    assert sql and sql == {f"meta/sql/{p.name}" for p in (REPO / "sql").glob("*.sql")}
    assert not any("__pycache__" in n for n in names)
    assert build_py_files(tmp_path) == build_py_files(tmp_path)  # built once per content


@pytest.mark.slow
@pytest.mark.spark
def test_executors_import_the_zip_not_the_checkout(cfg, standalone, tmp_path):
    import subprocess

    from contest.evaluation.jobs import child_env
    from tests.support.cluster import submit_script

    proc = submit_script(
        cfg, REPO / "tests" / "support" / "jobs" / "where_imported.py", standalone, tmp_path
    )
    out = subprocess.run(
        proc, capture_output=True, text=True, cwd=tmp_path, env=child_env(cfg), timeout=600
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert len(seen) == 2
    for task in seen:
        assert ".zip/contest/infra/storage.py" in task["contest"]
        assert not task["contest"].startswith(str(REPO))
        assert Path(task["cwd"]) != REPO and "work" in task["cwd"]
        assert any(name.endswith(".sql") for name in task["sql"])
