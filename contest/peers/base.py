"""What a peer table format is to the harness: one object per format, implementing
`PeerFormat`, registered by its folder under contest/peers (contest/peers/registry.py)
with its JVM libraries, presets and streaming name.

A format says the Spark settings that must be in place when the session starts and those a running
session takes, the properties its table is created with, how one batch is applied, how
the table is read merged, its commit's own numbers, how it compacts and which files a
read of it opens, and which of the `peer.*` options it accepts. The write, read and
compact jobs (`contest/peers/write.py`, `read.py`, `compact.py`) hold everything the
formats share: the batch loop, reports, the table folder's files, the result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from contest.config import Config, PeerConfig
from contest.data.batches import SCHEMA, Batch
from contest.errors import ConfigError, ReadError, SchemaEvolutionError, unwrap_spark_error
from contest.peers.microbatch import OnBatch

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import DataStreamWriter
    from pyspark.sql.types import StructType

# Parquet codec names as the formats spell them ("none" is the harness's own spelling).
_CODEC_NAMES = {"none": "uncompressed"}


# `stream.sink`'s names: the format's own documented streaming sink, or the harness's
# `foreachBatch` (where the format's own cannot apply the contract exactly once).
OWN_SINK = "own"
HARNESS_SINK = "foreach-batch"

StreamWriter = Callable[..., "DataStreamWriter"]


@dataclass(frozen=True)
class StreamSink:
    """One way a format's stream writes its micro-batches, found by `stream.sink`; a
    results row names it, so the format's own sink and the harness's wrapper are never
    one row. `write(spark, cfg, table, rows, checkpoint, on_batch)` gives the query's
    writer (see `PeerFormat.stream_writer`)."""

    name: str
    label: str
    write: StreamWriter


def error_line(exc: BaseException) -> str:
    """A Spark or format failure's own words, in one line (Spark's wrapper unwrapped)."""
    cause = unwrap_spark_error(exc) or exc
    lines = [ln.strip() for ln in str(cause).splitlines() if ln.strip()]
    return lines[0][:500] if lines else type(cause).__name__


def stream_schema(longs: Sequence[str] = ()) -> StructType:
    """The schema a format creates its stream's table with before the query starts: the
    source's columns (int64 a long, the rest strings), then `longs` as longs."""
    from pyspark.sql.types import (  # deferred: slow to import
        LongType,
        StringType,
        StructField,
        StructType,
    )

    fields = [
        StructField(f.name, LongType() if str(f.type) == "int64" else StringType()) for f in SCHEMA
    ]
    return StructType(fields + [StructField(c, LongType()) for c in longs])


def codec_name(name: str) -> str:
    return _CODEC_NAMES.get(name, name)


def quoted(path: Path) -> str:
    """A path as a back-quoted SQL identifier (`delta.`/path``)."""
    return "`" + str(path).replace("`", "``") + "`"


@dataclass(frozen=True)
class Layout:
    """The files a read of the table's current snapshot opens, as the format's own
    metadata lists them (files a compaction replaced but nothing removed yet are not
    in it). `buckets`: the units a read merges apart (Hudi file groups, Paimon
    buckets); a table without any (Delta, Iceberg) is one."""

    data_files: int
    delete_files: int = 0  # Iceberg delete files, Delta data files with a deletion vector
    log_files: int = 0  # Hudi log files
    buckets: int = 1

    @property
    def files(self) -> int:
        return self.data_files + self.delete_files + self.log_files

    @property
    def files_per_bucket(self) -> float | None:
        return round(self.files / self.buckets, 2) if self.buckets else None

    def to_dict(self) -> dict[str, int | float | None]:
        return {
            "data_files": self.data_files,
            "delete_files": self.delete_files,
            "log_files": self.log_files,
            "buckets": self.buckets,
            "files_per_bucket": self.files_per_bucket,
        }


class PeerFormat:
    """One peer table format. Subclasses set the class attributes and implement
    `apply_batch` and `read`; the other methods have the common defaults."""

    # The value of peer.format that selects it.
    name: ClassVar[str] = ""
    # Parquet codecs peer.codec may name for it ("" = the format's own default).
    codecs: ClassVar[tuple[str, ...]] = ("",)
    # The entry that marks a folder as one of its tables (a replaced folder must have it).
    marker: ClassVar[str] = ""
    # Folders of its table that hold log and metadata, not data (left out of file counts).
    metadata_dirs: ClassVar[tuple[str, ...]] = ()
    # Whether batches after the first may be applied concurrently, committing in any
    # order (the format orders a key's versions by the batch's version itself).
    concurrent_batches: ClassVar[bool] = False
    # The format whose streaming sink a stream of this one uses ("" = its own).
    stream_format: ClassVar[str] = ""
    # Whether its stream sink takes change data (contest/stream/peer.py refuses a change
    # stream into the others before any work), one source file a micro-batch.
    stream_changes: ClassVar[bool] = False
    # The engines its upsert and read merge with (the operator registry's ENGINES,
    # contest/data/operators.py): a workload's operator that one of them cannot
    # express is refused before any work. Default: Spark SQL (collapse and MERGE INTO).
    merge_engines: ClassVar[tuple[str, ...]] = ("spark",)

    def validate(self, peer: PeerConfig) -> None:
        """Refuse values of the options this format owns, in one line naming the key.
        Run whichever format is selected: a bad value is a mistake wherever it is set."""

    def check_codec(self, peer: PeerConfig) -> None:
        """Refuse a codec this format cannot write (when it is the selected format)."""
        if peer.codec not in self.codecs:
            raise ConfigError(
                f"peer.codec: {peer.codec!r} is not one of "
                f"{', '.join(c or '(default)' for c in self.codecs)} for {self.name}"
            )

    def start_conf(self, cfg: Config) -> dict[str, str]:
        """Settings read when the session starts (extensions, catalogs, serializer)."""
        return {}

    def forget(self, cfg: Config, table: Path) -> None:
        """Remove what this table keeps outside its folder (a catalog's entry for exactly
        this table, nothing else), as its run is dropped; the folder is the caller's.
        Default: nothing (the table is its folder)."""

    def runtime_conf(self, cfg: Config, table: Path) -> dict[str, str]:
        """SQL settings a running session takes, set before the table is touched."""
        if cfg.peer.broadcast_bytes:
            return {"spark.sql.autoBroadcastJoinThreshold": str(cfg.peer.broadcast_bytes)}
        return {}

    def table_properties(self, cfg: Config) -> dict[str, str]:
        """Properties the table is created with: the format's, then peer.table's."""
        return dict(cfg.peer.table)

    def apply_batch(
        self, spark: SparkSession, cfg: Config, table: Path, batch: Batch, first: bool
    ) -> str:
        """Apply one batch (the first creates the table); returns the operation's name."""
        raise NotImplementedError

    def commit_metrics(self, spark: SparkSession, table: Path) -> dict[str, int]:
        """The format's own numbers for the commit just made (none by default)."""
        return {}

    def read(self, spark: SparkSession, cfg: Config, table: Path) -> DataFrame:
        """The table's current snapshot as the format's reader merges it."""
        raise NotImplementedError

    # -- maintenance (contest/peers/compact.py) ----------------------------------------

    def compact(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        """Compact the table the way the format's documentation recommends, so a read
        opens fewer files and merges less; the format's own numbers of it."""
        raise ConfigError(f"peer.format: {self.name} has no compaction in this harness")

    def layout(self, spark: SparkSession, cfg: Config, table: Path) -> Layout:
        """The files of the table's current snapshot (before and after a compaction)."""
        raise NotImplementedError

    # -- streaming (contest/stream/peer.py) -------------------------------------------

    def stream_prepare(self, spark: SparkSession, cfg: Config, table: Path) -> None:
        """Create the table before the query starts, when the format's sink does not."""

    def stream_writer(
        self,
        spark: SparkSession,
        cfg: Config,
        table: Path,
        rows: DataFrame,
        checkpoint: str,
        on_batch: OnBatch | None = None,
    ) -> DataStreamWriter:
        """The query's sink, made exactly once the way the format's documentation says.
        `rows`: the source's rows with `_ver` (the source file's feed number) and `_pos`
        (the row's index in its file), which order a key's rows as the oracle does. A
        `foreachBatch` sink of the harness's tells `on_batch` (batch id, "committed",
        "replayed" or "repaired", table version, rows, seconds, what a repair did); a
        format's own sink tells nothing. By default the harness's `foreachBatch` with the
        format's `batch_sink`."""
        return rows.writeStream.foreachBatch(self.batch_sink(cfg, table, checkpoint, on_batch))

    def batch_sink(
        self, cfg: Config, table: Path, checkpoint: str, on_batch: OnBatch | None
    ) -> Callable[[DataFrame, int], None]:
        """The function the harness's `foreachBatch` calls with each micro-batch (a
        `MicroBatchSink` of contest/peers/microbatch.py): a format gives only this,
        `stream_writer` wraps it the one way."""
        raise ConfigError(f"peer.format: {self.name} has no streaming sink in this harness")

    def own_stream_writer(
        self,
        spark: SparkSession,
        cfg: Config,
        table: Path,
        rows: DataFrame,
        checkpoint: str,
        on_batch: OnBatch | None = None,
    ) -> DataStreamWriter:
        """The format's own documented streaming sink: the rows, source and options
        `own_stream` gives, appended to the table's folder (the sink records the batch
        id itself and tells nothing)."""
        source, out, options = self.own_stream(cfg, table, rows)
        return out.writeStream.format(source).options(**options).outputMode("append")

    def own_stream(
        self, cfg: Config, table: Path, rows: DataFrame
    ) -> tuple[str, DataFrame, dict[str, str]]:
        """The format's own sink's source name, the rows it writes and its options (the
        table's folder as `path` among them)."""
        raise ConfigError(f"peer.format: {self.name} has no streaming sink of its own here")

    def stream_sinks(self) -> tuple[StreamSink, ...]:
        """The format's streaming sinks, its default (an empty `stream.sink`) first."""
        return ()

    def stream_sink(self, name: str = "") -> StreamSink:
        """The sink `stream.sink` names (empty: the default); one line naming the ones
        the format has otherwise."""
        sinks = self.stream_sinks()
        if not sinks:
            raise ConfigError(f"peer.format: {self.name} has no streaming sink in this harness")
        found = next((s for s in sinks if s.name == name or not name), None)
        if found is None:
            have = ", ".join(s.name for s in sinks)
            raise ConfigError(f"stream.sink: {self.name} has {have}, not {name!r}")
        return found

    def commit_count(self, table: Path) -> int:
        """Commits in the table's log that added data (a replay committed twice shows
        as one more commit than micro-batches)."""
        raise NotImplementedError

    def commit_records(self, table: Path) -> int:
        """The table's own commit records, counted from its folder (a kill trial kills
        the stream the moment a new one appears): every commit, creation included."""
        raise ConfigError(f"peer.format: {self.name} has no commit record in this harness")

    def commit_half_written(self, table: Path) -> bool:
        """Whether the table's newest commit record exists but is not written whole yet
        (what a kill at the boundary can leave)."""
        return False

    # -- history: reads as of a commit and of a range, under the newest schema ---------
    # Defaults refuse in one line naming the format: a refused read is recorded as
    # refused by the workload runner, never scored.

    def evolve(self, spark: SparkSession, cfg: Config, table: Path, batch: Batch) -> list[str]:
        """Before `batch` is applied to an existing table: bring the table's schema to
        the batch's by the format's own mechanism (add the columns the batch has and
        the table lacks; widen a column the batch widened, int -> bigint). What it did
        (["added tag string", "widened hits int->bigint"]); [] when nothing changed. A
        change the format refuses: SchemaEvolutionError, the format's own error in one
        line. The writer calls it only for a batch whose schema differs from the
        table's (`contest.peers.write.schema_changes`)."""
        raise SchemaEvolutionError(f"peer format {self.name}: no schema evolution in this harness")

    def commit_id(self, spark: SparkSession, table: Path) -> str:
        """The format's own id of the table's newest commit (Delta's version, Iceberg's
        snapshot id, Hudi's completed instant, Paimon's snapshot id); the writer records
        it in the batch ledger beside the batch's version (contest/peers/ledger.py)."""
        raise ReadError(f"peer format {self.name}: names no commits in this harness")

    def read_as_of(self, spark: SparkSession, cfg: Config, table: Path, commit: str) -> DataFrame:
        """The table as of that commit, merged by the format's reader. Columns a read
        lacks (added later) and integers narrower than int64 are put into the newest
        schema by the read job (contest/peers/read.py `newest_schema`); what the format
        cannot answer: ReadError, one line, the format's own words."""
        raise ReadError(f"peer format {self.name}: no read as of a version in this harness")

    def read_changes(
        self, spark: SparkSession, cfg: Config, table: Path, start: str | None, end: str
    ) -> DataFrame:
        """The oracle's change read: the rows of the batches committed after `start`
        (None: from the beginning) up to `end` only, merged by key with the workload's
        operators, through the format's own mechanism. When the mechanism's answer is
        not that (a change feed's post-images are the merged value as of `end`):
        ReadError saying so in one line. Never rows known not to be the answer."""
        raise ReadError(f"peer format {self.name}: no change read in this harness")

    def expire(self, spark: SparkSession, cfg: Config, table: Path) -> dict[str, int]:
        """The vacuumed start (a workload's `vacuum` phase, contest/peers/expire.py):
        the format's own cleanup of old versions, keeping only the newest; its numbers.
        Afterwards a read from an expired commit answers from what remains or raises
        ReadError naming the oldest commit it can start from."""
        raise ConfigError(f"peer.format: {self.name} has no snapshot expiry in this harness")
