"""`contest dataset describe`: a user's data folder described as a starting workload
(contest/data/describe.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from contest.cli.common import command, group, result, say
from contest.config import Config
from contest.data.describe import describe, to_toml
from contest.errors import EXIT_OK, UsageError
from contest.infra.storage import is_object_store


def register(sub: argparse._SubParsersAction) -> None:
    ds = group(
        sub,
        "dataset",
        "describe your own data folder as a workload",
        "Your own change files (any key of one or two columns, your columns and types, "
        "an op column) described from their parquet footers.",
        "dataset_command",
    )
    desc = command(
        ds,
        "describe",
        "print (or write) a starting workload TOML for a folder of parquet files",
        "Read every file's parquet footer (schema, rows, statistics; never the rows, "
        "but a likely op column's distinct values, a row group at a time) and print a "
        "workload: its columns, each merged by UseLast (pick yours), their types, the "
        "key it guesses and why, the op column when one looks like it, and the batch "
        "order (base-N files, else every *.parquet in natural name order: part-2 before "
        "part-10). Example: contest dataset describe ./changes --out mine.toml, then "
        "contest evaluate optimized --data ./changes --workload mine.toml.",
        cmd_describe,
    )
    desc.add_argument("folder", metavar="DIR", help="the data folder (or s3://bucket/prefix)")
    desc.add_argument(
        "--out",
        metavar="FILE",
        help="write the workload TOML here (a new file outside DIR) instead of stdout",
    )
    desc.add_argument("--name", help="the workload's name (default: the folder's name)")


def cmd_describe(args: argparse.Namespace, cfg: Config) -> int:
    folder = args.folder if is_object_store(args.folder) else str(Path(args.folder).absolute())
    name = args.name or folder.rstrip("/").rsplit("/", 1)[-1]
    out = Path(args.out).absolute() if args.out else None
    if out is not None:
        if out.exists():
            raise UsageError(f"{out}: exists already (the workload is written to a new file)")
        if not is_object_store(folder) and out.is_relative_to(folder):
            raise UsageError(f"{out}: inside the data folder {folder}: nothing is written there")
    d = describe(folder)
    text = to_toml(d, name)
    if out is None:
        print(text, end="")
        return EXIT_OK
    out.write_text(text)
    report = {
        "workload": str(out),
        "files": len(d.batches),
        "key": list(d.key),
        "op_column": d.op_column,
    }
    say(f"key: {d.key_why}")
    say(f"op column: {d.op_why}")
    result(report, f"{len(d.batches)} files described: {out}")
    return EXIT_OK
