"""Result folders in an object store (`s3://bucket/prefix`), which cannot rename a folder.

The read's tasks write into a staging prefix beside the target,
`<parent>/.<name>.staging-<token>/`. `publish` then, in this order:

1. writes `_SUCCESS`, then `_CONTEST_RESULT`, into the staging prefix (last there);
2. writes the target's `_CONTEST_RESULT` saying "publishing": from now on the target
   is this tool's, whatever it held (a retry replaces it without --overwrite);
3. deletes the target's `_SUCCESS`: from now on the target reads as incomplete;
4. deletes every other object under the target;
5. copies the staged objects into the target, server side (all but the markers and
   hidden ones, `_*` and `.*`, which no reader of results reads);
6. writes the target's `_CONTEST_RESULT` with the read's facts, then `_SUCCESS`, last;
7. deletes the staging prefix.

What a kill leaves:

- before 2 (the read itself, or step 1): the target as it was (a previous result stays
  complete and readable); the staging prefix, removed by a later read of the same
  target once no object in it changed for `STALE_S`.
- 2: the old objects, complete, with a "publishing" marker.
- 3 to 6, before `_SUCCESS` is written: a target without `_SUCCESS`, which
  `contest check` refuses as incomplete; it holds `_CONTEST_RESULT`, so running the
  read again replaces it. Never `_SUCCESS` beside partial or mixed data: the old
  `_SUCCESS` is gone before any object changes, the new one comes after every copy.
- after 6: a complete result, and a stale staging prefix removed later.

Unlike a local folder (contest/read/output.py), the previous result is lost from step 4
on when a kill comes before 6: an object store cannot swap a folder in one step. A
reader that starts while a publish runs must check `_SUCCESS` (as `contest check`
does), and may still see objects change under it.
"""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass

from contest.errors import UsageError
from contest.infra.folders import Entry, base_name, join, kind, list_files, parent, remove_tree
from contest.infra.storage import filesystem, is_object_store

RESULT_MARKER = "_CONTEST_RESULT"
SUCCESS_MARKER = "_SUCCESS"
STALE_S = 600.0  # a staging prefix unchanged this long belongs to no running read
PUBLISHING = "publishing"


@dataclass(frozen=True)
class RemoteOutput:
    target: str  # s3://bucket/prefix, without a trailing /
    staging: str  # where the read writes; published to `target` by `publish`


def _key(uri: str) -> list[str]:
    """bucket and key parts of an object-store URI (s3:// and s3a:// name the same)."""
    return [p for p in uri.split("://", 1)[1].split("/") if p]


def overlaps(a: str, b: str) -> bool:
    """Two object-store folders overlap when one is the other or lies inside it."""
    ka, kb = _key(a), _key(b)
    n = min(len(ka), len(kb))
    return ka[:n] == kb[:n]


def is_previous_result(target: str) -> bool:
    return kind(join(target, RESULT_MARKER)) == "file"


def prepare(out_dir: str, table_paths: Iterable[str], overwrite: bool = False) -> RemoteOutput:
    """Check the target and choose the staging prefix; only stale staging prefixes of
    earlier reads are removed."""
    target = out_dir.rstrip("/")
    key = _key(target)
    if len(key) < 2:
        raise UsageError(f"--out {out_dir}: name a folder inside a bucket (s3://bucket/folder)")
    for tp in table_paths:
        if is_object_store(tp) and overlaps(target, tp):
            raise UsageError(
                f"--out {target}: overlaps the folder of a table ({tp}); "
                "choose a folder outside every table"
            )
    scheme = target.split("://", 1)[0]
    if kind(f"{scheme}://{key[0]}") is None:
        raise UsageError(f"--out {target}: the object store has no bucket {key[0]}")
    what = kind(target)
    if what == "file":
        raise UsageError(f"--out {target}: exists and is not a folder")
    if (
        what == "folder"
        and list_files(target, recursive=True)
        and not is_previous_result(target)
        and not overwrite
    ):
        raise UsageError(
            f"--out {target}: holds files that are not a previous result of "
            "this tool; choose another folder, or --overwrite to replace them"
        )
    recover(target)
    staging = join(parent(target), f".{base_name(target)}.staging-{secrets.token_hex(4)}")
    return RemoteOutput(target, staging)


def recover(target: str, stale_s: float = STALE_S) -> None:
    """Remove the staging prefixes of earlier reads of `target` in which no object
    changed for `stale_s` (their read was killed or failed)."""
    own = re.compile(rf"\.{re.escape(base_name(target))}\.staging-[0-9a-f]{{8}}")
    now_ns = time.time_ns()
    for sibling in list_files(parent(target), folders=True):
        if not own.fullmatch(sibling.name):  # a name this tool did not generate
            continue
        newest = max((e.mtime_ns for e in list_files(sibling.uri, recursive=True)), default=0)
        if now_ns - newest > stale_s * 1e9:
            remove_tree(sibling.uri)


def _write_text(uri: str, text: str) -> None:
    fs, path = filesystem(uri)
    with fs.open_output_stream(path) as fh:
        fh.write(text.encode())


def _delete(entries: Iterable[Entry]) -> None:
    for e in entries:
        fs, path = filesystem(e.uri)
        try:
            fs.delete_file(path)
        except FileNotFoundError:
            pass


def mark_staged(out: RemoteOutput, info: dict) -> str:
    """Step 1: the staging prefix's markers, `_SUCCESS` then `_CONTEST_RESULT`; returns
    the marker's text."""
    text = json.dumps({**info, "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n"
    _write_text(join(out.staging, SUCCESS_MARKER), "")
    _write_text(join(out.staging, RESULT_MARKER), text)
    return text


def clear_target(out: RemoteOutput) -> None:
    """Steps 2-4: claim the target, make it incomplete, then empty it (markers kept)."""
    _write_text(join(out.target, RESULT_MARKER), json.dumps({"state": PUBLISHING}) + "\n")
    _delete(e for e in list_files(out.target) if e.name == SUCCESS_MARKER)
    _delete(e for e in list_files(out.target, recursive=True) if e.name != RESULT_MARKER)


def copy_staged(out: RemoteOutput) -> None:
    """Step 5: every staged object but the markers and hidden ones, into the target."""
    fs, _ = filesystem(out.target)
    for e in list_files(out.staging, recursive=True):
        if any(part.startswith(("_", ".")) for part in e.name.split("/")):
            continue  # the markers, and what no reader reads (Spark's _temporary)
        _, src = filesystem(e.uri)
        _, dst = filesystem(join(out.target, e.name))
        fs.copy_file(src, dst)


def mark_complete(out: RemoteOutput, text: str) -> None:
    """Step 6: the target's facts, then `_SUCCESS`, last of all."""
    _write_text(join(out.target, RESULT_MARKER), text)
    _write_text(join(out.target, SUCCESS_MARKER), "")


def publish(out: RemoteOutput, info: dict) -> None:
    """Mark the staged result complete and copy it into place (the module's steps)."""
    text = mark_staged(out, info)
    clear_target(out)
    copy_staged(out)
    mark_complete(out, text)
    discard(out)


def discard(out: RemoteOutput) -> None:
    try:
        remove_tree(out.staging)
    except OSError:
        pass  # left for `recover`
