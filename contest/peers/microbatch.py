"""What the harness's own `foreachBatch` sinks of the peer formats share (Delta's MERGE,
contest/peers/delta/stream.py; Hudi's upsert, contest/peers/hudi/merger.py; Paimon's
append, contest/peers/paimon/stream.py): the query id Spark keeps in the checkpoint,
which names the writer in the format's idempotence record (it stays the same across
restarts, the run id does not), the lookup of each micro-batch (`MicroBatch`: its files,
its record, whether it is a replay), and the report of each micro-batch to the stream
(contest/stream/peer.py), followed by the pause after a commit that lets the bench's
kills land between the table's commit and Spark's."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

from contest.config import Config
from contest.data.batches import natural_key
from contest.errors import DataError, RunError
from contest.infra.storage import filesystem

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# What a sink tells the stream of each micro-batch: (batch id, "committed" | "replayed" |
# "repaired" (recorded as committed, found not readable by the format's own reader,
# repaired its way and written again), table version, rows of the micro-batch, seconds,
# what a repair did).
OnBatch = Callable[[int, str, int, int, float, str], None]


class MicroBatchSink:
    """The function given to `foreachBatch` (called with the micro-batch and its id);
    subclasses apply the batch and call `told`."""

    # Where the micro-batches' records go, under the table's folder (SourceRecords).
    ledger_dir = "_contest_stream"

    def __init__(self, cfg: Config, table: Path, checkpoint: str, on_batch: OnBatch | None):
        self.cfg, self.table, self.checkpoint, self.on_batch = cfg, table, checkpoint, on_batch
        self._query_id: str | None = None

    @property
    def ledger(self) -> SourceRecords:
        return SourceRecords(Path(self.table) / self.ledger_dir)

    def lookup(self, df: DataFrame, batch_id: int) -> MicroBatch:
        """The micro-batch `foreachBatch` was called with, as every format's sink looks
        it up: its query and id, its source files and the ledger's records."""
        files = batch_files(df)
        return MicroBatch(
            self.query_id(), int(batch_id), files, self.ledger.entries(), str(self.table)
        )

    def query_id(self) -> str:
        """The query id in `<checkpoint>/metadata` (`{"id": ...}`, Spark writes it when
        the query first starts)."""
        if self._query_id is None:
            fs, base = filesystem(self.checkpoint)
            try:
                with fs.open_input_stream(f"{base}/metadata") as fh:
                    self._query_id = str(json.loads(fh.read().decode().splitlines()[0])["id"])
            except (OSError, IndexError, KeyError, ValueError) as exc:
                raise RunError(
                    f"{self.checkpoint}/metadata: no query id in Spark's checkpoint "
                    f"({type(exc).__name__}: {exc})"
                ) from None
        return self._query_id

    def told(
        self, batch_id: int, status: str, version: int, rows: int, started: float, note: str = ""
    ) -> None:
        """Report the micro-batch (`started`: its `time.perf_counter()`; `note`: what a
        repair did); after a commit, wait `stream.pause_after_commit_s` (a crash then: a
        replay of the batch)."""
        if self.on_batch is not None:
            seconds = time.perf_counter() - started
            self.on_batch(batch_id, status, version, rows, seconds, note)
        if status != "replayed" and self.cfg.stream.pause_after_commit_s:
            time.sleep(self.cfg.stream.pause_after_commit_s)


# -- which files each micro-batch consumed (a guard the formats do not give) ----------


@dataclass(frozen=True)
class SourceRecord:
    """A micro-batch's source files (real paths), recorded before its table commit;
    `after`: what the format needs to tell afterwards whether that commit landed (Hudi:
    the last completed instant before it)."""

    query: str
    batch: int
    files: tuple[str, ...]
    after: str = ""


@dataclass(frozen=True)
class MicroBatch:
    """One micro-batch as its sink found it (`MicroBatchSink.lookup`): its query (the
    checkpoint's id) and batch id, its source files, the ledger's records, its table."""

    query: str
    batch: int
    files: list[str]
    entries: list[SourceRecord]
    table: str

    @property
    def own(self) -> SourceRecord | None:
        """Its own record, which a run before this one wrote (a replay has one)."""
        return own_record(self.entries, self.query, self.batch)

    def replayed(self, committed: Callable[[SourceRecord], bool]) -> bool:
        """A replay of a committed micro-batch (skip it), or refused: `check_batch`."""
        return check_batch(self.entries, committed, self.query, self.batch, self.files, self.table)

    def record(self, after: str = "") -> SourceRecord:
        """Its record, written before the table's commit (`after`: the format's)."""
        return SourceRecord(self.query, self.batch, tuple(self.files), after)


class SourceRecords:
    """One JSON file a micro-batch in a folder beside the table's data, written (by
    rename, whole) before the table's commit. Whether the batch committed is the
    format's own record (Delta's transaction of the query, Hudi's timeline): an entry of
    a batch that never committed guards nothing."""

    def __init__(self, folder: Path):
        self.folder = folder

    def write(self, entry: SourceRecord) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"{entry.query}-{entry.batch}.json"
        tmp = self.folder / f".{name}.tmp"
        tmp.write_text(json.dumps(asdict(entry)))
        tmp.replace(self.folder / name)

    def entries(self) -> list[SourceRecord]:
        out = []
        for path in sorted(self.folder.glob("*.json")) if self.folder.is_dir() else []:
            try:
                d = json.loads(path.read_text())
                out.append(SourceRecord(d["query"], int(d["batch"]), tuple(d["files"]), d["after"]))
            except (OSError, ValueError, KeyError) as exc:
                raise RunError(f"{path}: not a micro-batch record ({exc})") from None
        return out


def real_path(path: str) -> str:
    """A local source file by its real path (a symlinked folder names the same file), a
    URI as it is."""
    parsed = urlparse(path)
    if parsed.scheme not in ("", "file"):
        return path
    return os.path.realpath(unquote(parsed.path))


def batch_files(df: DataFrame) -> list[str]:
    """The real paths of a micro-batch's source files, in natural name order (footers
    only)."""
    from pyspark.sql import functions as F  # deferred: slow to import

    rows = df.select(F.input_file_name().alias("f")).distinct().collect()
    return sorted({real_path(r["f"]) for r in rows if r["f"]}, key=name_order)


def name_order(path: str) -> tuple[tuple, str]:
    """A source file's place: its name in natural order (part-2 before part-10, as the
    batch commands take a folder's files), then its whole path."""
    return (natural_key(path.rsplit("/", 1)[-1]), path)


def own_record(entries: Sequence[SourceRecord], query: str, batch: int) -> SourceRecord | None:
    """The record of micro-batch (`query`, `batch`), if one was written."""
    return next((e for e in entries if e.query == query and e.batch == batch), None)


def check_batch(
    entries: Sequence[SourceRecord],
    committed: Callable[[SourceRecord], bool],
    query: str,
    batch: int,
    files: Sequence[str],
    table: str,
) -> bool:
    """Whether micro-batch (`query`, `batch`) of `files` is a replay of a committed one
    (True: skip it). Raises, naming the files, when it is the same batch id with other
    files (a checkpoint restored or edited: Spark planned new files under a committed
    id), when a file was committed by another micro-batch (a new checkpoint over the
    same folder, or through a symlink), or when a file sorts before one the query
    committed already (it landed late: applied now, its rows would come after that
    file's)."""
    own = own_record(entries, query, batch)
    if own is None and committed(SourceRecord(query, batch, ())):
        return True  # committed before the harness kept records: a replay
    if own is not None and committed(own):
        check_replay(query, batch, own.files, files)
        return True
    mine = set(files)
    last = ""
    for e in entries:
        if e is own or not committed(e):
            continue
        clash = sorted(mine.intersection(e.files))
        if clash:
            raise RunError(
                f"{clash[0]} was committed to {table} by batch {e.batch} of query {e.query}, "
                f"and batch {batch} of query {query} read it again (a new checkpoint over "
                "the same source folder, or through a link to it?): nothing committed; "
                "restart from the checkpoint that consumed it"
            )
        if e.query == query:
            last = max([last, *e.files], key=name_order)
    check_order(files, last)
    return False


def check_replay(query: str, batch: int, recorded: Sequence[str], files: Sequence[str]) -> None:
    """A committed batch id planned again: the same files are a replay; other files
    (the checkpoint lost the batch's commit and offset entries, new files landed) would
    be lost if skipped and counted twice if applied with the old ones."""
    was = {real_path(p) for p in recorded}
    now = {real_path(p) for p in files}
    if now != was:
        raise RunError(
            f"batch {batch} of query {query} was committed with {', '.join(sorted(was))}, "
            f"and Spark planned it again with {', '.join(sorted(now)) or 'no file'} (a "
            "checkpoint restored from an older copy, or its offsets edited?): nothing "
            "committed; restore the checkpoint that committed it"
        )


def check_order(files: Sequence[str], last: str) -> None:
    """Refuse a file whose name sorts before `last`, the last file the query committed
    (source files apply in name order: a late one would apply after later ones)."""
    late = [p for p in files if last and name_order(p) < name_order(last)]
    if late:
        raise DataError(
            f"{late[0]}: landed after {last} was committed: its rows would apply after "
            "that file's, out of name order; nothing committed (give it a name after "
            f"{last.rsplit('/', 1)[-1]}, or stream it into a new table)"
        )
