"""The zip of the installed `contest` and `meta` packages (with meta.sql's schema files
and every other package file) that `spark-submit --py-files` ships to a cluster's
executors, so they import the code the driver runs and never a checkout."""

from __future__ import annotations

import hashlib
import importlib
import zipfile
from pathlib import Path

# Packages and where their files go inside the zip: those mapped from other folders
# (meta.sql from sql/, contest.workloads from workloads/) under their package names.
PACKAGES = {
    "contest": "contest",
    "meta": "meta",
    "meta.sql": "meta/sql",
    "contest.workloads": "contest/workloads",
}


def package_files() -> dict[str, Path]:
    """Archive name -> file, for every file of the packages (no caches)."""
    files: dict[str, Path] = {}
    for module, prefix in PACKAGES.items():
        folder = Path(importlib.import_module(module).__path__[0])
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                files[f"{prefix}/{path.relative_to(folder).as_posix()}"] = path
    return files


def build_py_files(folder: Path) -> Path:
    """`<folder>/contest-<digest>.zip`, built once per content."""
    files = package_files()
    digest = hashlib.sha256()
    for name, path in sorted(files.items()):
        digest.update(name.encode())
        digest.update(path.read_bytes())
    out = folder / f"contest-{digest.hexdigest()[:12]}.zip"
    if out.is_file():
        return out
    folder.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, path in sorted(files.items()):
            zf.write(path, name)
    tmp.replace(out)
    return out
