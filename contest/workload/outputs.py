"""`contest workload run --out DIR`: each lane's last checked read kept, so anyone can
check it with their own tools: the read's own output, only the contract's columns (the
key's and the payload's, in the workload's order: no op column, no internal column), as
parquet under `DIR/<strategy>/<policy>/`. A folder there that is not empty is refused in
one line, before the run and again before the copy: nothing the tool did not write is
replaced or deleted."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow.parquet as pq

from contest.config import WorkloadConfig
from contest.data.checker import result_files
from contest.data.workload import workload_schema
from contest.errors import UsageError
from contest.evaluation.strategies import file_stem

if TYPE_CHECKING:  # the lanes pull in the evaluation (pandas): the CLI imports this early
    from contest.workload.lanes import Lane


def out_folder(root: Path, strategy: str, policy_folder: str) -> Path:
    """Where a lane's output goes (a strategy's `:` as its file names spell it)."""
    return root / file_stem(strategy) / policy_folder


def refuse_taken(folders: Iterable[Path]) -> None:
    """One line for the first folder that exists and is not empty."""
    for folder in folders:
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise UsageError(f"--out: {folder} exists and is not empty: not overwritten")


def contract_columns(w: WorkloadConfig, names: list[str]) -> list[str]:
    """The result's columns that are the contract's, in the workload's order."""
    return [c for c in workload_schema(w).names if c in names]


def copy_result(result: Path, folder: Path, w: WorkloadConfig) -> int:
    """A result folder's parquet files, the contract's columns only, into `folder`
    (`part-00000.parquet`, ...); the rows copied."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = 0
    for n, path in enumerate(result_files(result)):
        table = pq.read_table(path)
        table = table.select(contract_columns(w, table.column_names))
        pq.write_table(table, folder / f"part-{n:05d}.parquet")
        rows += table.num_rows
    return rows


def keep_outputs(lanes: Iterable[Lane], root: Path, say: Callable[[str], None]) -> dict[str, str]:
    """Each lane's last checked read copied under `root`; lane name -> its folder (a
    lane without one, failed or never read, is said and left out)."""
    kept: dict[str, str] = {}
    for lane in lanes:
        folder = out_folder(root, lane.strategy, lane.policy.folder)
        if lane.last_output is None:
            say(f"{lane.run.strategy}: no checked read to keep in {folder}")
            continue
        refuse_taken([folder])
        rows = copy_result(lane.last_output, folder, lane.run.cfg.workload)
        say(f"{lane.run.strategy}: its last read ({rows:,} rows) kept in {folder}")
        kept[lane.run.strategy] = str(folder)
    return kept
