"""Result folders that never destroy what the tool did not make.

A read writes into a fresh hidden folder beside the target and moves it into place
only when complete (`_SUCCESS` and the tool's own marker written last). The hidden
folder (`.<name>.staging-<8 hex>`, holding `_CONTEST_STAGING` and the result in
`result/`) is the only kind, with `.<name>.old-<8 hex>` holding a previous result,
that the clean-up after a killed read removes: a folder without the tool's marker
or with another name is never touched, whatever it is called. An existing
target is replaced only when it is empty or a previous result of this tool, or with
`overwrite`; a target inside a table's folder is refused. A killed read leaves the
old result (or, killed between the two renames, none and the old one beside it,
hidden) and never a partial result without `_SUCCESS`.

An object-store target (`s3://bucket/prefix`) has no rename: contest/read/remote_output.py
stages and copies it, with the same rules and its own guarantee (see there).
"""

from __future__ import annotations

import json
import re
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
STAGING_MARKER = "_CONTEST_STAGING"
SUCCESS_MARKER = "_SUCCESS"


@dataclass(frozen=True)
class Output:
    target: Path
    staging: Path  # where the read writes; moved to `target` by `publish`

    @property
    def holder(self) -> Path:
        """The hidden folder with the tool's marker that holds `staging`."""
        return self.staging.parent


def own_sibling(target: Path, folder: Path) -> str | None:
    """'staging' or 'old' when `folder` has a name this tool gives the folders beside
    `target`, None otherwise."""
    m = re.fullmatch(rf"\.{re.escape(target.name)}\.(staging|old)-[0-9a-f]{{8}}", folder.name)
    return m.group(1) if m else None


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
    holder = target.parent / f".{target.name}.staging-{secrets.token_hex(4)}"
    holder.mkdir()
    (holder / STAGING_MARKER).write_text(json.dumps({"target": str(target)}) + "\n")
    return Output(target, holder / "result")


def recover(target: Path, stale_s: float = 600.0) -> None:
    """Clean up after a killed read: put back a previous result that was moved aside
    (killed between the two renames), and remove staging folders left long enough ago
    that no read is still writing them. Only folders with a name this tool generates
    and its marker inside are touched."""
    siblings = [p for p in target.parent.iterdir() if p.is_dir() and own_sibling(target, p)]
    olds = [p for p in siblings if own_sibling(target, p) == "old" and is_previous_result(p)]
    if not target.exists() and olds:
        newest = max(olds, key=lambda p: p.stat().st_mtime)
        newest.rename(target)
        olds.remove(newest)
    now = time.time()
    stale = [
        p
        for p in siblings
        if own_sibling(target, p) == "staging"
        and (p / STAGING_MARKER).is_file()
        and now - (p / STAGING_MARKER).stat().st_mtime > stale_s
    ]
    for p in olds + stale:
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
    shutil.rmtree(out.holder, ignore_errors=True)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def discard(out: Output | RemoteOutput) -> None:
    if isinstance(out, RemoteOutput):
        discard_remote(out)
        return
    shutil.rmtree(out.holder, ignore_errors=True)
