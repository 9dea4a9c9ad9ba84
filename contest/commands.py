"""Subcommands beyond the basics: each registers its parser and handler here."""

from __future__ import annotations

import argparse
import json
import sys

from contest.config import Config
from contest.data import DataError

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def register(sub: argparse._SubParsersAction) -> None:
    """Add the data, check and pipeline commands to the `contest` parser."""
    gen = sub.add_parser("gen", help="generate contest-shaped batches base-0..base-10",
                         description="Write base-0.parquet .. base-10.parquet: uncompressed, one "
                         "row group each, deterministic for a scale and seed.")
    gen.add_argument("--scale", type=float, required=True,
                     help="1 = the contest's 30M rows; 0.001 = a tiny smoke set")
    gen.add_argument("--out", required=True, help="folder to write the batch files to")
    gen.add_argument("--seed", type=int, default=2022, help="random seed (default 2022)")
    gen.add_argument("--nulls", action="store_true",
                     help="put some SQL NULLs in every non-key column (tests the contract)")
    gen.set_defaults(handler=cmd_gen)

    orc = sub.add_parser("oracle", help="compute the expected merged result without Spark",
                         description="Apply the contract to a data folder with DuckDB and write "
                         "the expected result as one parquet file sorted by uuid.")
    orc.add_argument("--data", required=True, help="folder with base-*.parquet")
    orc.add_argument("--out", required=True, help="output parquet file (or folder)")
    orc.add_argument("--versions", help="batch versions: INDEX=VERSION,... or @file.json")
    orc.set_defaults(handler=cmd_oracle)

    chk = sub.add_parser("check", help="check a result folder against the oracle or a hash",
                         description="Exit 0 when the result is right, 1 when it is wrong "
                         "(with a report), 2 for bad input.")
    chk.add_argument("--result", required=True, help="result folder (parquet files)")
    chk.add_argument("--data", help="data folder: compare with the oracle's result")
    chk.add_argument("--versions", help="batch versions: INDEX=VERSION,... or @file.json")
    chk.add_argument("--sha256", metavar="HEX",
                     help="the contest's check: SHA-256 of the uuid-sorted CSV with header")
    chk.add_argument("--json", action="store_true", help="print the report as JSON")
    chk.set_defaults(handler=cmd_check)


def _err(msg: str) -> int:
    print(f"contest: {msg}", file=sys.stderr)
    return EXIT_USAGE


def cmd_gen(args: argparse.Namespace, cfg: Config) -> int:
    from contest.generator import generate

    try:
        report = generate(args.out, args.scale, args.seed, args.nulls)
    except DataError as exc:
        return _err(str(exc))
    size = sum(p.stat().st_size for p in report.files)
    print(json.dumps({"out": args.out, "files": len(report.files), "rows": report.rows,
                      "distinct_keys": report.distinct_keys, "bytes": size,
                      "seconds": round(report.seconds, 2)}))
    return EXIT_OK


def cmd_oracle(args: argparse.Namespace, cfg: Config) -> int:
    from pathlib import Path

    from contest.data import discover
    from contest.oracle import expected_result

    try:
        batches = discover(args.data, args.versions)
    except DataError as exc:
        return _err(str(exc))
    out = Path(args.out)
    if out.is_dir() or not out.suffix:
        out = out / "expected.parquet"
    report = expected_result(batches, out)
    print(json.dumps({"out": str(report.path), "rows": report.rows,
                      "seconds": round(report.seconds, 2)}))
    return EXIT_OK


def cmd_check(args: argparse.Namespace, cfg: Config) -> int:
    if bool(args.data) == bool(args.sha256):
        return _err("check needs exactly one of --data DIR (oracle) or --sha256 HEX")
    try:
        if args.sha256:
            return _check_sha(args, cfg)
        return _check_oracle(args, cfg)
    except DataError as exc:
        return _err(str(exc))


def _check_oracle(args: argparse.Namespace, cfg: Config) -> int:
    import tempfile
    from pathlib import Path

    from contest.checker import compare, result_files
    from contest.data import discover
    from contest.oracle import expected_result

    batches = discover(args.data, args.versions)
    result_files(args.result)
    with tempfile.TemporaryDirectory(dir=_scratch(cfg)) as tmp:
        expected = expected_result(batches, Path(tmp) / "expected.parquet")
        report = compare(args.result, expected.path)
    if args.json:
        print(json.dumps({"ok": report.ok, **report.__dict__}, default=str))
    else:
        print(report.render())
    return EXIT_OK if report.ok else EXIT_FAIL


def _check_sha(args: argparse.Namespace, cfg: Config) -> int:
    from contest.checker import contest_sha256
    from contest.spark import build_session

    spark = build_session(cfg, "contest-check")
    try:
        digest = contest_sha256(spark, args.result, cfg.work_path / "check" / "single_csv")
    finally:
        spark.stop()
    ok = digest == args.sha256.strip().lower()
    tail = "" if ok else f", expected {args.sha256}"
    print(f"{'OK' if ok else 'FAIL'}: sha256 {digest}{tail}")
    return EXIT_OK if ok else EXIT_FAIL


def _scratch(cfg: Config) -> str:
    path = cfg.work_path / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)
