"""A peer format's stream under test (contest/stream/peer.py's sinks): its stage (no
LakeSoul table), which files each of Spark's micro-batches read (the checkpoint's logs),
the table read merged by the format's own reader, and its comparison with the oracle
over every fed file. The stream kill trials and the stream bench's peer cases share it.
"""

from __future__ import annotations

import json
import shutil
from contextlib import suppress
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow.parquet as pq

from contest.config import Config, override, to_toml, unless_set
from contest.data.batches import Batch
from contest.data.changes import changes_of
from contest.data.oracle import expected_rows
from contest.evaluation.jobs import child_env
from contest.evaluation.strategies import stream_preset
from contest.infra.proc import spawn, wait_bounded
from contest.peers import formats
from contest.trials.stream.stage import CHILD_TIMEOUT_S, Stage, child_config, read_text


def peer_stage(
    cfg: Config,
    root: Path,
    fmt: str,
    cores: int,
    master: str = "",
    suffix: str = "",
    sink: str = "",
) -> Stage:
    """A fresh folder for the format's stream through `sink` (empty: its default; a
    previous sitting's folder, of this bench, replaced); no LakeSoul table. The child
    runs on `master` when given."""
    name = f"stream_bench_{fmt.replace('-', '_')}{suffix}"
    folder = root / name
    shutil.rmtree(folder, ignore_errors=True)  # this bench's own folder of a sitting before
    folder.mkdir(parents=True)
    config_file = folder / "child.toml"
    # The child's config file holds every key, so it carries the format's strategy
    # preset itself (a preset the child applied under it would lose to the file's
    # defaults) where the user left a key at its default, and the sink, checked
    # against the format.
    chosen = unless_set(cfg, stream_preset(fmt)) | ({"stream.sink": sink} if sink else {})
    config_file.write_text(to_toml(override(child_config(cfg, cores, master), chosen)))
    return Stage(cfg, None, root, name, config_file, child_env(cfg), fmt)


def batch_files(checkpoint: Path) -> dict[int, set[str]]:
    """The file source's batch id -> the names of the files it took: its log in the
    checkpoint (`sources/0/<batch>`, compacted every few batches into `.compact`
    files, one JSON line per file with its path and batchId)."""
    out: dict[int, set[str]] = {}
    folder = checkpoint / "sources" / "0"
    for path in folder.iterdir() if folder.is_dir() else ():
        if path.name.startswith("."):
            continue
        for line in read_text(path).splitlines()[1:]:
            try:
                entry = json.loads(line)
                name = Path(unquote(urlparse(entry["path"]).path)).name
                out.setdefault(int(entry["batchId"]), set()).add(name)
            except (ValueError, KeyError, TypeError):
                continue  # a line being written
    return out


def micro_batch_files(checkpoint: Path) -> dict[int, set[str]]:
    """Spark's micro-batch id -> the names of the files it read. The file source's log
    numbers its own batches, which are not Spark's: a query killed after the source
    logged a batch but before Spark's offset log took it leaves a source batch that
    the next run's micro-batch folds into its own. Spark's offset log (`offsets/<id>`,
    the source's `logOffset` on its last line) says which source batches each
    micro-batch covered: those after the previous micro-batch's offset, up to its own."""
    source = batch_files(checkpoint)
    offsets: dict[int, int] = {}
    folder = checkpoint / "offsets"
    for path in folder.iterdir() if folder.is_dir() else ():
        if path.name.isdigit():
            with suppress(ValueError, KeyError, TypeError, IndexError):
                lines = read_text(path).strip().splitlines()
                offsets[int(path.name)] = int(json.loads(lines[-1])["logOffset"])
    out: dict[int, set[str]] = {}
    done = -1  # the source batches taken by earlier micro-batches
    for batch in sorted(offsets):
        files = set().union(*(source.get(b, set()) for b in range(done + 1, offsets[batch] + 1)))
        if files:
            out[batch] = files
        done = max(done, offsets[batch])
    return out


def micro_batches_with_files(checkpoint: Path) -> set[int]:
    """Spark's ids of the micro-batches that read files (see `micro_batch_files`)."""
    return set(micro_batch_files(checkpoint))


def read_peer(stage: Stage, fmt: str, out: Path) -> list[dict]:
    """The table read merged by the format's own reader (`contest read`), sorted by uuid."""
    cmd = [
        *stage.command()[:5],  # python -m contest.cli.main --config FILE
        "--set",
        f"peer.format={formats.for_stream(fmt).name}",
        "read",
        "--table",
        str(stage.table_path),
        "--out",
        str(out),
        "--overwrite",
    ]
    log = stage.root / stage.name / "logs" / "read.log"
    code = wait_bounded(spawn(cmd, log, stage.env, stage.root), CHILD_TIMEOUT_S)
    if code != 0:
        raise RuntimeError(f"contest read exited {code}: see {log.with_suffix('.err')}")
    rows = pq.read_table(out).to_pylist()
    return sorted(rows, key=lambda r: r["uuid"])


def compare(actual: list[dict], expected: list[dict]) -> dict[str, Any]:
    """Keys counted twice (requests above the oracle's), keys lost (missing or below),
    other differing rows."""
    have = {r["uuid"]: r for r in actual}
    double = lost = other = 0
    for row in expected:
        got = have.pop(row["uuid"], None)
        if got is None:
            lost += 1
        elif (got["requests"] or 0) > (row["requests"] or 0):
            double += 1
        elif (got["requests"] or 0) < (row["requests"] or 0):
            lost += 1
        elif got != row:
            other += 1
    return {"double_keys": double, "lost_keys": lost, "other_keys": other + len(have)}


def expected_over(stage: Stage, fed: list[Path]) -> list[dict]:
    """The oracle's rows over every fed file, in the feed's order (its file names)."""
    ordered = sorted(fed, key=lambda p: p.name)
    return expected_rows(
        [Batch(i, str(p), 0, 0, i) for i, p in enumerate(ordered)],
        changes=changes_of(stage.cfg),
    )
