"""The pipeline's jobs: write and read (the spark-submit jobs run these)."""

from __future__ import annotations

import argparse
import logging
import sys

from contest.cli.common import (
    ListAction,
    absolute,
    command,
    config_default,
    joined,
    pairs,
    workload_option,
)
from contest.config import Config, override
from contest.engines import ReadJob, WriteJob, WriteMode, engine_for
from contest.errors import UsageError
from contest.read.operators import OPERATORS

# `contest write`'s flags that set one configuration key each: (flag, type, what it
# is, key), the one table both the parser and `_write_config` read.
WRITE_SETTINGS: tuple[tuple[str, type, str, str], ...] = (
    ("--threads", int, "batches upserted at once", "write.threads"),
    ("--buckets", int, "hash buckets of a new table", "table.hash_buckets"),
    ("--repartition", int, "partitions for big files, 0 = never", "write.repartition"),
    ("--big-file-bytes", int, "size from which a file is big, 0 = auto", "write.big_file_bytes"),
    ("--codec", str, "data file codec: none, snappy, zstd, gzip, lz4", "write.codec"),
)


def register(sub: argparse._SubParsersAction) -> None:
    w = command(
        sub,
        "write",
        "upsert every batch concurrently with its version",
        "The Write job: create the table and upsert base-*.parquet from a thread pool, "
        "each batch committed with its user-defined version. A table name or path "
        "already taken is an error unless --append, --resume or --replace.",
        cmd_write,
    )
    w.add_argument("--data", required=True, help="folder with base-*.parquet")
    w.add_argument("--table", required=True, help="table path (its folder name is its name)")
    w.add_argument("--name", help="table name (default: the path's last folder)")
    w.add_argument(
        "--versions",
        action=ListAction,
        help="batch versions: INDEX=VERSION,... or @file.json "
        f"({config_default('write.versions')}: the file index)",
    )
    workload_option(w)  # a workload's extra columns make the table's schema
    for flag, kind, what, key in WRITE_SETTINGS:
        w.add_argument(flag, type=kind, help=f"{what} ({config_default(key)})")
    w.add_argument(
        "--drop-null-keys",
        action="store_true",
        help="drop rows whose uuid is NULL (counted) instead of failing the batch "
        f"({config_default('write.drop_null_keys')})",
    )
    mode = w.add_mutually_exclusive_group()
    mode.add_argument(
        "--append", action="store_true", help="add to the table if it exists (create it otherwise)"
    )
    mode.add_argument(
        "--resume",
        action="store_true",
        help="finish an interrupted write: skip batches whose version is "
        "already committed, write the rest",
    )
    mode.add_argument(
        "--replace",
        action="store_true",
        help="drop the table holding this name or path (and its files) first",
    )
    w.add_argument(
        "--only",
        action=ListAction,
        item=int,
        help="write only these batch indices, e.g. 0,1,2,3,6,7 or 0-3,6-7",
    )
    w.add_argument(
        "--delay-commit",
        action=ListAction,
        default=[],
        metavar="INDEX=SECONDS",
        help="hold a batch's commit back (to force an out-of-order finish)",
    )

    r = command(
        sub,
        "read",
        "merge-on-read the table and write it as parquet",
        "The Read job: merge by primary key with a merge operator per column, in "
        "version order; write the result as parquet into a fresh folder that replaces "
        "--out only when complete.",
        cmd_read,
    )
    r.add_argument("--table", required=True, help="table path or name")
    r.add_argument("--out", required=True, help="result folder")
    workload_option(r)  # a workload's extra columns have their merge operators
    r.add_argument(
        "--operator",
        action=ListAction,
        default=[],
        metavar="COLUMN=OPERATOR",
        help="merge operator for a column (default: the contest's); operators: "
        + ", ".join(_operators()),
    )
    r.add_argument("--as-of-version", type=int, metavar="V", help="the table as of version V")
    r.add_argument(
        "--from-version",
        type=int,
        metavar="A",
        help="with --to-version: only the changes after version A",
    )
    r.add_argument("--to-version", type=int, metavar="B", help="changes up to version B")
    r.add_argument(
        "--latest-complete",
        action="store_true",
        help="the table as of its newest version with every version before it committed "
        "(a read while a write lands: one consistent version; the report names it)",
    )
    r.add_argument(
        "--overwrite",
        action="store_true",
        help="replace --out even when it is not a previous result of this tool",
    )
    r.add_argument(
        "--allow-gaps",
        action="store_true",
        help="read even when committed versions have gaps (a batch is missing)",
    )
    r.add_argument(
        "--allow-unmerged",
        action="store_true",
        help="read a snapshot still in commit order (result may be wrong)",
    )


def _operators() -> list[str]:
    return sorted(OPERATORS)


def _write_config(args: argparse.Namespace, cfg: Config) -> Config:
    keys = {flag[2:].replace("-", "_"): key for flag, _, _, key in WRITE_SETTINGS}
    values = {
        key: getattr(args, attr) for attr, key in keys.items() if getattr(args, attr) is not None
    }
    if args.versions:
        values["write.versions"] = joined(args.versions)
    if args.drop_null_keys:
        values["write.drop_null_keys"] = True
    return override(cfg, values) if values else cfg


def _logging() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)


def cmd_write(args: argparse.Namespace, cfg: Config) -> int:
    cfg = _write_config(args, cfg)
    delays = {int(k): float(v) for k, v in pairs(args.delay_commit, "--delay-commit").items()}
    only = args.only
    mode = (
        WriteMode.RESUME
        if args.resume
        else WriteMode.APPEND
        if args.append
        else WriteMode.REPLACE
        if args.replace
        else WriteMode.CREATE
    )
    job = WriteJob(args.data, absolute(args.table), args.name, mode, only, delays)
    engine = engine_for(cfg, "write")
    _logging()
    return engine.write(cfg, job).emit(sys.stdout, sys.stderr)


def cmd_read(args: argparse.Namespace, cfg: Config) -> int:
    if args.as_of_version is not None and (
        args.from_version is not None or args.to_version is not None
    ):
        raise UsageError("--as-of-version excludes --from-version/--to-version")
    if args.latest_complete and (
        args.as_of_version is not None
        or args.from_version is not None
        or args.to_version is not None
    ):
        raise UsageError("--latest-complete excludes the other version options")
    values: dict[str, object] = {}
    if args.operator:
        values["read.operators"] = pairs(args.operator, "--operator")
    if args.allow_unmerged:
        values["read.require_merged"] = False
    cfg = override(cfg, values) if values else cfg
    engine = engine_for(cfg, "read")
    job = ReadJob(
        # A LakeSoul table is found by name or path; a peer format's by its folder.
        table=absolute(args.table) if engine.name == "peer" else args.table,
        out=absolute(args.out),
        as_of=args.as_of_version,
        from_version=args.from_version,
        to_version=args.to_version,
        overwrite=args.overwrite,
        allow_gaps=args.allow_gaps,
        latest_complete=args.latest_complete,
    )
    return engine.read(cfg, job).emit(sys.stdout, sys.stderr)
