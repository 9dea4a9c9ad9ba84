"""What a format's own native library is to the harness: a `PeerFormat` whose Write and
Read jobs are plain Python processes (contest/peers/native/job.py runs them), so a
module per library (`native.py` in its format's folder: contest/peers/delta/native.py,
...) implements three things: make the folder ready, apply one batch through the
library's own upsert or merge, read the table through the library's own reader. The
Spark methods of `PeerFormat` stay unimplemented: a native format is never handed to a
Spark job (its implementation's kind is NATIVE, contest/peers/registry.py). The
format's folder registers it with `native_implementation(native, ...)`.

Change data (row kinds, partial batches, other keys) reaches a library that declares it
(`changes`) as a batch collapsed by key with the delete rule (`write_changes`,
contest/peers/native/collapse.py); a library that declares none refuses it in one line
naming what it lacks, before any data is written (contest/peers/change_check.py).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar, Protocol

import pyarrow as pa

from contest.config import Config
from contest.data.changes import ChangeSupport
from contest.data.merge_engines import MergeEngine
from contest.errors import ConnectorError, UsageError
from contest.peers.base import PeerFormat
from contest.peers.native.collapse import ChangeRows
from contest.peers.registry import (
    NATIVE,
    NO_AUTO,
    NO_INTEROP,
    AutoMaintenance,
    FormatFamily,
    Implementation,
    Interop,
    Strategy,
)

# The format's own numbers for one commit (rows updated, files added, ...).
Metrics = dict[str, int]


class NativeFormat(PeerFormat):
    """One format's native library. Subclasses set `library` and `label` and implement
    `write_batch` and `read_table`; `marker` says which folder is one of its tables."""

    # The Python distribution it runs on (pinned in pyproject.toml).
    library: ClassVar[str] = ""
    # How its upsert and read merge, as a results row says it (what is the format's own
    # and what, if anything, is computed outside it).
    label: ClassVar[str] = ""
    # The change data its library takes (contest/data/changes.py), each by the library's
    # own operation named; by default none, the refusal naming what its library lacks.
    changes: ClassVar[ChangeSupport] = ChangeSupport(
        no_deletes="no change path is built for this library"
    )

    def prepare(self, cfg: Config, table: Path, replace: bool) -> None:
        """An empty or absent folder; with `replace`, one of its tables (its marker
        there) is removed first. Anything else is refused, naming the folder: nothing
        the tool did not create is deleted."""
        if not table.exists() or (table.is_dir() and not any(table.iterdir())):
            return
        if not replace:
            raise UsageError(f"--table {table}: exists and is not empty (--replace to replace it)")
        if not self.holds(cfg, table):
            raise UsageError(
                f"--table {table}: not a {self.name} table (no {self.marker}): not replaced"
            )
        shutil.rmtree(table)

    def holds(self, cfg: Config, table: Path) -> bool:
        """Whether the folder holds one of its tables."""
        return (table / self.marker).exists()

    def write_batch(
        self, cfg: Config, table: Path, rows: pa.Table, first: bool, threads: int
    ) -> tuple[str, Metrics]:
        """Apply one batch's rows (file order) through the library (the first creates
        the table); the operation's name and the library's own numbers for it."""
        raise NotImplementedError

    def write_changes(
        self,
        cfg: Config,
        table: Path,
        change: ChangeRows,
        schema: pa.Schema,
        first: bool,
        threads: int,
    ) -> tuple[str, Metrics]:
        """Apply one change batch, collapsed by key with the delete rule, through the
        library (the first creates the table in `schema`: the key's columns, then every
        payload column); the operation's name and the library's own numbers for it. Only
        called when `changes` declares what the batch needs."""
        raise ConnectorError(f"{self.name}: {self.changes.no_deletes}")

    def read_table(self, cfg: Config, table: Path, threads: int) -> pa.Table:
        """The table's head as the library's reader merges it."""
        raise NotImplementedError


class NativeModule(Protocol):
    """What a format's `native.py` defines: its `NativeFormat`, the library's version
    (pinned in pyproject.toml) and how a results row names the format on it."""

    @property
    def FORMAT(self) -> NativeFormat: ...

    @property
    def VERSION(self) -> str: ...

    @property
    def TABLE_FORMAT(self) -> str: ...


def native_implementation(
    native: NativeModule,
    preset: Mapping[str, object] | None,
    *,
    rank: int,
    family: FormatFamily,
    interop: Interop | None = None,
    merge_engine: MergeEngine | None = None,
    unavailable: str = "",
    auto: AutoMaintenance = NO_AUTO,
) -> Implementation:
    """A format's native library as an implementation (kind NATIVE), named, labelled and
    pinned (`<library>==<VERSION>`) by its module. `preset`: the settings of its one
    strategy (named as the format, `peer.format` set to it) over the defaults; its
    `:defaults` row is `peer.format` alone; None: a reader only, no strategy.
    `unavailable`: why the library cannot run here (nothing is pinned then). `rank`: its
    place among the native implementations in every list. `family`: the format it is a
    library of. `interop`: its part in `contest bench interop`; by default a format's own
    library writes its tables and reads every other engine's (a reader only, reads).
    `auto`: what the library does by itself under a workload's `auto` maintenance."""
    fmt = native.FORMAT
    selected = {"peer.format": fmt.name}
    part = interop or Interop(writes=preset is not None, reads=True)
    strategies = (
        (Strategy(fmt.name, {**selected, **preset}, defaults=selected, interop=part),)
        if preset is not None
        else ()
    )
    return Implementation(
        name=fmt.name,
        table_format=native.TABLE_FORMAT,
        runs_on=fmt.label,
        peer=fmt,
        strategies=strategies,
        merge_engine=merge_engine,
        runtime=NATIVE,
        unavailable=unavailable,
        libraries=() if unavailable else (f"{fmt.library}=={native.VERSION}",),
        changes=fmt.changes,
        rank=rank,
        family=family,
        interop=NO_INTEROP if strategies else part,
        auto=auto,
    )
