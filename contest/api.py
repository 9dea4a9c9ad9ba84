"""The harness as a library: what the commands do, as calls that return values.

A pyiceberg or delta-rs user looks for a table to open, not a command to run::

    from contest import api

    cfg = api.load_config()                     # defaults, file, environment, settings
    table = api.open_table("ccf", cfg)          # by name or folder
    rows = table.read_arrow(as_of_version=3)    # merged by key, as a pyarrow Table
    for entry in table.history().entries:       # newest version first
        print(entry.version, entry.batch, entry.live)
    record = api.evaluate("optimized", cfg, scale=0.001)   # a RunRecord

Every function raises the harness's own errors (`contest.errors.HarnessError`), the
same the commands turn into one line and an exit code. `contest evaluate` is built on
this module.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import contest.data.workload  # noqa: F401 (registers the workload columns check)
import contest.peers.formats  # noqa: F401 (registers each peer format's option checks)
from contest.config import Config
from contest.config import load_config as _load
from contest.errors import UsageError
from contest.evaluation.evaluate import evaluate as run
from contest.evaluation.strategies import STRATEGIES, is_strategy, preset
from contest.infra.postgres import resolve_connection
from contest.peers.registry import available_strategies
from contest.read.arrow import read_merged
from contest.read.job import ReadRequest, merged
from meta import catalog
from meta.versions import history

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame, SparkSession

    from contest.results.runs import RunRecord
    from meta.catalog import TableRef
    from meta.connection import PgConnection
    from meta.versions import History

__all__ = ["Table", "evaluate", "load_config", "open_table", "strategies"]


def load_config(
    config_file: str | Path | None = None,
    settings: Mapping[str, Any] | None = None,
    *,
    strategy: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """The configuration a command would run with: defaults (under `strategy`'s preset),
    then `config_file`, then the environment (`env`, this process's by default), then
    `settings` (dotted keys, as `--set` takes them)."""
    preset = _preset(strategy) if strategy else None
    return _load(config_file, dict(os.environ) if env is None else env, settings, preset=preset)


def strategies() -> list[str]:
    """The strategies a default comparison runs (each a preset over the defaults); a
    strategy this machine cannot run (its library not installable here) is left out,
    though `evaluate` still names and refuses it."""
    return available_strategies()


def _preset(strategy: str) -> Mapping[str, object]:
    if not is_strategy(strategy):
        raise UsageError(f"unknown strategy {strategy}: choose from {', '.join(STRATEGIES)}")
    return preset(strategy)


@dataclass(frozen=True)
class Table:
    """A LakeSoul table of the harness's metadata database, opened by `open_table`."""

    cfg: Config
    conn: PgConnection
    ref: TableRef

    @property
    def name(self) -> str:
        return f"{self.ref.namespace}.{self.ref.name}"

    @property
    def path(self) -> str:
        return self.ref.path

    @property
    def schema(self) -> pa.Schema:
        return self.ref.schema

    def history(self) -> History:
        """Every commit, newest version first, with the versions missing (as
        `contest history`)."""
        return history(self.conn, self.ref)

    def read_arrow(
        self,
        as_of_version: int | None = None,
        *,
        from_version: int | None = None,
        to_version: int | None = None,
        allow_gaps: bool = False,
    ) -> pa.Table:
        """The table merged by primary key with its merge operators, in this process
        (pyarrow, no Spark), sorted by key: for tables that fit in memory. Refuses what
        `contest read` refuses (an unmerged snapshot, missing versions, a version
        outside the table)."""
        request = ReadRequest(
            out_dir="",
            as_of=as_of_version,
            from_version=from_version,
            to_version=to_version,
            allow_gaps=allow_gaps,
        )
        return read_merged(self.conn, self.cfg, self.ref, request)

    def read_spark(self, spark: SparkSession, as_of_version: int | None = None) -> DataFrame:
        """The table merged as a Spark DataFrame (one task per bucket), for further
        Spark work; the same checks as `read_arrow`."""
        df, _, _ = merged(spark, self.conn, self.cfg, self.ref, as_of=as_of_version)
        return df


def open_table(name_or_path: str, cfg: Config | None = None) -> Table:
    """A table by name (in `table.namespace`) or by folder; the metadata database
    must be up (`contest db up`, or an external server in the configuration)."""
    cfg = cfg or load_config()
    conn = resolve_connection(cfg)
    return Table(cfg, conn, catalog.find_table(conn, name_or_path, cfg.table.namespace))


def evaluate(
    strategy: str = "optimized",
    cfg: Config | None = None,
    *,
    data: str | Path | None = None,
    scale: float | None = None,
    seed: int = 2022,
    cores: int | None = None,
    master: str | None = None,
    work_dir: str | Path | None = None,
    say: Callable[[str], None] = lambda _msg: None,
) -> RunRecord:
    """Run the contest's procedure for `strategy` (as `contest evaluate`) and return
    its record; the record says whether it was correct and, if not, which phase failed.
    `cfg` defaults to `load_config(strategy=strategy)`; a `cfg` of your own is taken as
    it is (build it with `load_config(strategy=...)` to keep the preset). The record is
    not appended to any results file: that is the caller's choice."""
    if data is not None and scale is not None:
        raise UsageError("give data or scale, not both")
    cfg = cfg or load_config(strategy=strategy)
    if work_dir is not None:
        cfg = dataclasses.replace(cfg, work_dir=str(work_dir))
    return run(
        cfg, strategy, data=data, scale=scale, seed=seed, cores=cores, master=master, say=say
    )
