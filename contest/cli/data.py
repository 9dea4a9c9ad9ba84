"""Commands for the data and its checks: gen, oracle, check."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from contest.cli.common import ListAction, absolute, command, joined, workload_option
from contest.config import Config
from contest.data.batches import discover, upto
from contest.data.change_history import write_expected_changes
from contest.data.changes import changes_of
from contest.data.checker import (
    SUCCESS_MARKER,
    check_footers,
    compare,
    contest_sha256,
    result_files,
)
from contest.data.oracle import config_budget, expected_result
from contest.data.workload import contract_operators, schema_of_batch
from contest.errors import EXIT_FAILED, EXIT_OK, DataError, UsageError
from contest.infra.folders import upload
from contest.infra.packages import for_paths
from contest.infra.postgres import resolve_connection
from contest.infra.s3server import ensure_bucket
from contest.infra.spark import spark_session
from contest.infra.storage import is_object_store
from contest.stream.run import consumed_batches
from meta import catalog


def register(sub: argparse._SubParsersAction) -> None:
    gen = command(
        sub,
        "gen",
        "generate batches base-0..base-<N-1> of a workload (default: the contest's)",
        "Write base-0.parquet .. base-<N-1>.parquet (the contest's shape: base-0 .. "
        "base-10): uncompressed, one row group each, deterministic for a workload, scale "
        "and seed.",
        cmd_gen,
    )
    workload_option(gen)
    gen.add_argument(
        "--scale",
        type=float,
        required=True,
        help="1 = the workload's sizes (the contest's 30M rows); 0.001 = a tiny smoke set",
    )
    gen.add_argument(
        "--out", required=True, help="folder (or s3://bucket/prefix) to write the batch files to"
    )
    gen.add_argument("--seed", type=int, default=2022, help="random seed")
    gen.add_argument(
        "--nulls",
        action="store_true",
        help="put some SQL NULLs in every non-key column (tests the contract)",
    )

    orc = command(
        sub,
        "oracle",
        "compute the expected merged result without Spark",
        "Apply the contract to a data folder with DuckDB and write the expected "
        "result as one parquet file sorted by uuid.",
        cmd_oracle,
    )
    orc.add_argument("--data", required=True, help="folder with base-*.parquet")
    workload_option(orc)
    orc.add_argument("--out", required=True, help="output parquet file (or folder)")
    _version_options(orc, "only the batches whose version is at most V (a read as of version V)")

    chk = command(
        sub,
        "check",
        "check a result folder against the oracle or a hash",
        "Exit 0 when the result is right, 1 when it is wrong (with a report), "
        "2 for bad input. The result folder must be complete (_SUCCESS).",
        cmd_check,
    )
    chk.add_argument("--result", required=True, help="result folder (parquet files)")
    chk.add_argument(
        "--data",
        help="data folder (base-*.parquet, or a stream's feed-*.parquet): compare with the "
        "oracle's result",
    )
    chk.add_argument(
        "--stream-table",
        metavar="TABLE",
        help="a streamed table (path or name): compare with the oracle over the files its "
        "micro-batches consumed, in the order it applied them",
    )
    workload_option(chk)
    _version_options(
        chk,
        "only the batches (with --stream-table: micro-batches) whose version is at "
        "most V: a result read --as-of-version V",
    )
    chk.add_argument(
        "--from-version",
        type=int,
        metavar="A",
        help="with --data: a result read --from-version A (--to-version is --upto-version): "
        "the merge of the batches after A alone; of change data, each changed key with "
        "its op (contest/data/change_history.py)",
    )
    chk.add_argument(
        "--sha256",
        metavar="HEX",
        help="the contest's check: SHA-256 of the uuid-sorted CSV with header",
    )
    chk.add_argument("--json", action="store_true", help="print the report as JSON")


def _version_options(parser: argparse.ArgumentParser, upto: str) -> None:
    """The batches' versions and a version to stop at, as `oracle` and `check` both take
    them (`upto`: what --upto-version means to the command)."""
    parser.add_argument(
        "--versions", action=ListAction, help="batch versions: INDEX=VERSION,... or @file.json"
    )
    parser.add_argument("--upto-version", type=int, metavar="V", help=upto)


def cmd_gen(args: argparse.Namespace, cfg: Config) -> int:
    if is_object_store(args.out):
        return _gen_remote(args, cfg)
    _, line = _generate(args, cfg, args.out)
    print(line)
    return EXIT_OK


def _generate(args: argparse.Namespace, cfg: Config, folder: str) -> tuple[list[Path], str]:
    """The batches generated into a local `folder`, and `gen`'s JSON line for them: one
    place for a local and a remote `--out`."""
    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.data.generator import generate

    report = generate(folder, args.scale, args.seed, args.nulls, workload=cfg.workload)
    size = sum(p.stat().st_size for p in report.files)
    line = json.dumps(
        {
            "out": args.out,
            "workload": cfg.workload.name,
            "files": len(report.files),
            "rows": report.rows,
            "distinct_keys": report.distinct_keys,
            "bytes": size,
            "seconds": round(report.seconds, 3),
        }
    )
    return report.files, line


def _gen_remote(args: argparse.Namespace, cfg: Config) -> int:
    """`gen --out s3://...`: generated in a local scratch folder, then uploaded."""
    ensure_bucket(args.out)  # the embedded server starts without buckets
    scratch = cfg.work_path / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        files, line = _generate(args, cfg, tmp)
        upload(files, args.out)
    print(line)
    return EXIT_OK


def cmd_oracle(args: argparse.Namespace, cfg: Config) -> int:
    batches = discover(args.data, joined(args.versions), schema_of_batch(cfg.workload))
    batches = upto(batches, args.upto_version)
    out = Path(args.out)
    folder = out.is_dir() or not out.suffix
    if folder:
        out = out / "expected.parquet"
    report = expected_result(
        batches,
        out,
        budget=config_budget(cfg.oracle),
        operators=contract_operators(cfg.workload),
        changes=changes_of(cfg),
    )
    if folder:  # a complete result folder, as `contest check` expects one
        (out.parent / SUCCESS_MARKER).touch()
    print(
        json.dumps(
            {
                "out": str(report.path),
                "rows": report.rows,
                "seconds": round(report.seconds, 3),
                "parts": report.parts,
                "memory_limit": report.memory_limit,
            }
        )
    )
    return EXIT_OK


def cmd_check(args: argparse.Namespace, cfg: Config) -> int:
    if sum(bool(x) for x in (args.data, args.stream_table, args.sha256)) != 1:
        raise UsageError(
            "check needs exactly one of --data DIR (oracle), --stream-table TABLE (the "
            "oracle over what a stream consumed) or --sha256 HEX"
        )
    if args.from_version is not None and not args.data:
        raise UsageError("--from-version goes with --data (a changes read's oracle)")
    if args.sha256 and args.upto_version is not None:
        raise UsageError(
            "--upto-version goes with --data or --stream-table (the hash is of one whole result)"
        )

    # A bad, incomplete or truncated result folder: exit 2 before any work.
    check_footers([f for f in result_files(args.result) if "://" not in f])
    if args.sha256:
        return _check_sha(args, cfg)
    return _check_oracle(args, cfg)


def _check_oracle(args: argparse.Namespace, cfg: Config) -> int:
    if args.stream_table:
        batches = _streamed(cfg, args.stream_table, args.upto_version)
    else:
        batches = discover(args.data, joined(args.versions), schema_of_batch(cfg.workload))
        batches = upto(batches, args.upto_version)
    budget = config_budget(cfg.oracle)
    scratch = cfg.work_path / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    rules, operators = changes_of(cfg), contract_operators(cfg.workload)
    with tempfile.TemporaryDirectory(dir=scratch) as tmp:
        target = Path(tmp) / "expected.parquet"
        since = args.from_version
        if since is not None and rules.op_column:  # change data: the net changes
            path = write_expected_changes(
                batches, since, args.upto_version, target, operators, rules, budget
            )
        else:
            chosen = [b for b in batches if since is None or b.version > since]
            path = expected_result(
                chosen, target, budget=budget, operators=operators, changes=rules
            ).path
        report = compare(args.result, path, budget=budget)
    if args.json:
        print(json.dumps({"ok": report.ok, **report.__dict__}, default=str))
    else:
        print(report.render())
    return EXIT_OK if report.ok else EXIT_FAILED


def _streamed(cfg: Config, name: str, upto_version: int | None) -> list:
    """The files a streamed table's micro-batches consumed (up to a micro-batch version),
    in the order it applied them: what its read must equal."""
    conn = resolve_connection(cfg)
    table = catalog.find_table(conn, name, cfg.table.namespace)
    batches = consumed_batches(conn, table, upto_version)
    if not batches:
        at = "" if upto_version is None else f" up to version {upto_version}"
        raise DataError(
            f"table {table.namespace}.{table.name}: no micro-batch{at} recorded (not a "
            "streamed table? give --data with its batch files)"
        )
    return batches


def _check_sha(args: argparse.Namespace, cfg: Config) -> int:
    with spark_session(cfg, "contest-check", for_paths(args.result)) as spark:
        digest = contest_sha256(
            spark, absolute(args.result), cfg.work_path / "check" / "single_csv"
        )
    ok = digest == args.sha256.strip().lower()
    tail = "" if ok else f", expected {args.sha256}"
    if args.json:
        print(json.dumps({"ok": ok, "sha256": digest, "expected": args.sha256.strip().lower()}))
    else:
        print(f"{'OK' if ok else 'FAIL'}: sha256 {digest}{tail}")
    return EXIT_OK if ok else EXIT_FAILED
