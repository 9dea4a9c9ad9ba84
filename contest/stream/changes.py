"""Change data through the harness's LakeSoul stream sink (sink.py): row kinds, files
holding some of the payload columns, keys other than `uuid`.

The sink reads each source file itself (pyarrow), so a micro-batch that mixes files
of different columns is written per file, as the batch write does
(contest/write/changes.py): each file's rows in their own bucket files holding that
file's columns only (the commit names them), so a column a file lacks stays absent,
never a NULL; the files of one micro-batch listed in source order in its one commit.
The files are checked as the batch write checks them (key types, NULL key parts, op
values) before anything of the micro-batch is written. Spark's file source reads the
folder with the workload's schema (its key, payload and op columns); it only tells the
sink which files a micro-batch holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa

from contest.config import Config
from contest.data import change_sql
from contest.data.batches import SCHEMA, Batch
from contest.data.changes import changes_of, declares_changes
from contest.data.spark_types import spark_type
from contest.data.workload import workload_schema
from contest.errors import DataError
from contest.write.changes import (
    ChangeShape,
    change_shape,
    checks,
    payload_operators,
    write_changes,
)
from meta.catalog import TableRef
from meta.commits import DataFile


def is_change_stream(cfg: Config) -> bool:
    """The configuration declares change data (an op column or another key than the
    contest's `uuid`) or other columns than the contest's (a workload's, a user's): a
    stream of the contest's plain upserts keeps its strict schema and row-group tasks."""
    return declares_changes(cfg) or workload_schema(cfg.workload).names != SCHEMA.names


def as_batches(paths: Sequence[str]) -> list[Batch]:
    """A micro-batch's source files as batches in source order (the write's unit)."""
    out = []
    for i, path in enumerate(paths):
        local = Path(path)
        size = local.stat().st_size if local.exists() else 0
        out.append(Batch(i, path, 0, size, i))
    return out


def stream_shape(cfg: Config, source_files: Sequence[str]) -> ChangeShape:
    """The table a change stream creates: its key's types from the first source file
    (by name) when there is one, else the workload's (string for a key other than the
    contest's cannot be guessed: refused in one line)."""
    if source_files:
        return change_shape(cfg, as_batches(sorted(source_files)[:1]))
    rules = changes_of(cfg)
    if not rules.contest_key:
        raise DataError(
            f"a change stream keyed by {', '.join(rules.key)} takes its key's types from "
            "its first source file: put one in the source folder before starting"
        )
    schema = workload_schema(cfg.workload)
    fields = [schema.field(k) for k in rules.key]
    fields += [f for f in schema if f.name in payload_operators(cfg.workload, rules.key)]
    if rules.op_column:
        fields.append(pa.field(rules.op_column, pa.string()))
    return ChangeShape(pa.schema(fields), tuple(rules.key), rules.op_column)


def source_ddl(schema: pa.Schema) -> str:
    """Spark's DDL of the source folder's rows (a column a file lacks reads as NULL)."""
    return ", ".join(f"`{f.name}` {spark_type(f.type)}" for f in schema)


def check_files(cfg: Config, sources: Sequence[str]) -> None:
    """The batch write's checks of change files, each refusal one line naming the file,
    before anything of the micro-batch is written."""
    rules = changes_of(cfg)
    batches = as_batches(sources)
    plan = change_sql.plan(batches, payload_operators(cfg.workload, rules.key), rules)
    for b in batches:
        why = change_sql.refusal(plan, checks(b, rules, plan))
        if why:
            raise DataError(why)


def write_change_files(
    spark,
    cfg: Config,
    table: TableRef,
    sources: Sequence[str],
    token_for: Callable[[int], str],
) -> list[DataFile]:
    """Each source file written by the batch write's change path under its own token
    (`token_for(i)`), the files listed in source order."""
    check_files(cfg, sources)
    rules = changes_of(cfg)
    files: list[DataFile] = []
    for i, batch in enumerate(as_batches(sources)):
        outcome = write_changes(
            spark,
            batch,
            table,
            rules,
            codec=cfg.write.codec,
            token=token_for(i),
            sort=cfg.write.sort,
        )
        files += outcome.files
    return files
