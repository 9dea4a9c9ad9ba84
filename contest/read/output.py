"""Result folders that never destroy what the tool did not make.

A read writes into a fresh hidden folder beside the target and moves it into place
only when complete (`_SUCCESS` and the tool's own marker written last). An existing
target is replaced only when it is empty or a previous result of this tool, or with
`overwrite`; a target inside a table's folder is refused. A killed read leaves the
old result (or, killed between the two renames, none and the old one beside it,
hidden) and never a partial result without `_SUCCESS`.

An object-store target (`s3://bucket/prefix`) has no rename: contest/read/remote_output.py
stages and copies it, with the same rules and its own guarantee (see there).
"""

from __future__ import annotations

import json
import secrets
import shutil
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from contest.errors import UsageError
from contest.infra.storage import is_object_store
from contest.read.remote_output import RemoteOutput
from contest.read.remote_output import discard as discard_remote
from contest.read.remote_output import prepare as prepare_remote
from contest.read.remote_output import publish as publish_remote

RESULT_MARKER = "_CONTEST_RESULT"
SUCCESS_MARKER = "_SUCCESS"


@dataclass(frozen=True)
class Output:
    target: Path
    staging: Path  # where the read writes; moved to `target` by `publish`


def _local(path: str) -> Path:
    if "://" in path and not path.startswith("file://"):
        raise UsageError(f"{path}: result folders are local paths or s3:// URIs")
    return Path(path.removeprefix("file://")).absolute()


def is_previous_result(folder: Path) -> bool:
    return (folder / RESULT_MARKER).is_file()


def prepare(
    out_dir: str, table_paths: Iterable[str], overwrite: bool = False
) -> Output | RemoteOutput:
    """Check the target and choose the staging folder; nothing is written or removed
    (but stale staging folders of killed reads)."""
    if is_object_store(out_dir):
        return prepare_remote(out_dir, list(table_paths), overwrite)
    target = _local(out_dir)
    for tp in table_paths:
        if "://" in tp and not tp.startswith("file://"):
            continue
        table = Path(tp.removeprefix("file://")).absolute()
        if target == table or table in target.parents or target in table.parents:
            raise UsageError(
                f"--out {target}: overlaps the folder of a table ({table}); "
                "choose a folder outside every table"
            )
    if target.exists() and not target.is_dir():
        raise UsageError(f"--out {target}: exists and is not a folder")
    if (
        target.is_dir()
        and any(target.iterdir())
        and not is_previous_result(target)
        and not overwrite
    ):
        raise UsageError(
            f"--out {target}: holds files that are not a previous result of "
            "this tool; choose another folder, or --overwrite to replace them"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    recover(target)
    staging = target.parent / f".{target.name}.staging-{secrets.token_hex(4)}"
    return Output(target, staging)


def recover(target: Path, stale_s: float = 600.0) -> None:
    """Clean up after a killed read: put back a previous result that was moved aside
    (killed between the two renames), and remove staging folders left long enough ago
    that no read is still writing them."""
    siblings = list(target.parent.glob(f".{target.name}.*-*"))
    olds = [p for p in siblings if ".old-" in p.name and is_previous_result(p)]
    if not target.exists() and olds:
        newest = max(olds, key=lambda p: p.stat().st_mtime)
        newest.rename(target)
    now = time.time()
    for p in siblings:
        if p.exists() and (".old-" in p.name or now - p.stat().st_mtime > stale_s):
            shutil.rmtree(p, ignore_errors=True)


def publish(out: Output | RemoteOutput, info: dict) -> None:
    """Mark the staged result complete and move it into place."""
    if isinstance(out, RemoteOutput):
        publish_remote(out, info)
        return
    (out.staging / SUCCESS_MARKER).touch()
    (out.staging / RESULT_MARKER).write_text(
        json.dumps({**info, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n"
    )
    old = None
    if out.target.exists():
        old = out.target.parent / f".{out.target.name}.old-{secrets.token_hex(4)}"
        out.target.rename(old)
    out.staging.rename(out.target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def discard(out: Output | RemoteOutput) -> None:
    if isinstance(out, RemoteOutput):
        discard_remote(out)
        return
    shutil.rmtree(out.staging, ignore_errors=True)
