"""The pipeline's jobs: write and read (the spark-submit jobs run these)."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from contest.cli.common import absolute, command, int_list, pairs, workload_option
from contest.config import Config, override
from contest.errors import EXIT_FAILED, EXIT_OK, UsageError


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
    w.add_argument("--versions", help="batch versions: INDEX=VERSION,... or @file.json")
    workload_option(w)  # a workload's extra columns make the table's schema
    w.add_argument("--threads", type=int, help="batches upserted at once (write.threads)")
    w.add_argument("--buckets", type=int, help="hash buckets of a new table (table.hash_buckets)")
    w.add_argument(
        "--repartition", type=int, help="partitions for big files, 0 = never (write.repartition)"
    )
    w.add_argument(
        "--big-file-bytes",
        type=int,
        help="size from which a file is big, 0 = auto (write.big_file_bytes)",
    )
    w.add_argument("--codec", help="data file codec: none, snappy, zstd, gzip, lz4 (write.codec)")
    w.add_argument(
        "--drop-null-keys",
        action="store_true",
        help="drop rows whose uuid is NULL (counted) instead of failing the batch",
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
    w.add_argument("--only", help="write only these batch indices, e.g. 0,1,2,3,6,7")
    w.add_argument(
        "--delay-commit",
        action="append",
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
        action="append",
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
    from contest.read.operators import OPERATORS

    return sorted(OPERATORS)


def _write_config(args: argparse.Namespace, cfg: Config) -> Config:
    keys = {
        "versions": "write.versions",
        "threads": "write.threads",
        "repartition": "write.repartition",
        "big_file_bytes": "write.big_file_bytes",
        "codec": "write.codec",
        "buckets": "table.hash_buckets",
    }
    values = {
        key: getattr(args, attr) for attr, key in keys.items() if getattr(args, attr) is not None
    }
    if args.drop_null_keys:
        values["write.drop_null_keys"] = True
    return override(cfg, values) if values else cfg


def _logging() -> None:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr
    )
    logging.getLogger("py4j").setLevel(logging.WARNING)


def cmd_write(args: argparse.Namespace, cfg: Config) -> int:
    from contest.data.batches import discover
    from contest.infra.packages import for_paths
    from contest.infra.postgres import resolve_connection
    from contest.infra.spark import granted_cores, spark_session
    from contest.write.job import WriteMode, run_write
    from contest.write.report import timeline

    cfg = _write_config(args, cfg)
    if cfg.peer.format:
        return _peer_write(args, cfg)
    delays = {int(k): float(v) for k, v in pairs(args.delay_commit, "--delay-commit").items()}
    only = int_list(args.only, "--only") if args.only else None
    discover(args.data, cfg.write.versions or None, schema=None)  # bad input: before Spark
    mode = (
        WriteMode.RESUME
        if args.resume
        else WriteMode.APPEND
        if args.append
        else WriteMode.REPLACE
        if args.replace
        else WriteMode.CREATE
    )
    conn = resolve_connection(cfg)
    _logging()
    if cfg.write.engine == "lakesoul-stock":
        if mode not in (WriteMode.CREATE, WriteMode.REPLACE) or only or delays:
            raise UsageError("write.engine=lakesoul-stock: only a new table (or --replace)")
        return _stock_write(args, cfg, conn, mode is WriteMode.REPLACE)
    with spark_session(cfg, "contest-write", for_paths(args.data)) as spark:
        report = run_write(
            spark,
            conn,
            cfg,
            args.data,
            absolute(args.table),
            args.name,
            mode=mode,
            delays=delays,
            indices=only,
        )
        cores = granted_cores(spark)  # what a score divides by (contest evaluate)
    print(timeline(report), file=sys.stderr)
    print(json.dumps({**report.to_dict(), "spark_cores": cores}))
    print(("" if report.ok else "contest: ") + report.summary(), file=sys.stderr)
    return report.exit_code


def cmd_read(args: argparse.Namespace, cfg: Config) -> int:
    from contest.infra.packages import for_paths
    from contest.infra.postgres import resolve_connection
    from contest.infra.spark import granted_cores, spark_session
    from contest.read.job import ReadRequest, plan_read, run_read
    from meta import catalog

    if args.as_of_version is not None and (
        args.from_version is not None or args.to_version is not None
    ):
        raise UsageError("--as-of-version excludes --from-version/--to-version")
    values: dict[str, object] = {}
    if args.operator:
        values["read.operators"] = pairs(args.operator, "--operator")
    if args.allow_unmerged:
        values["read.require_merged"] = False
    cfg = override(cfg, values) if values else cfg
    if cfg.peer.format:
        return _peer_read(args, cfg)
    conn = resolve_connection(cfg)
    if cfg.read.engine == "lakesoul-stock":
        if args.as_of_version is not None or args.from_version is not None or args.to_version:
            raise UsageError("read.engine=lakesoul-stock reads the head snapshot only")
        return _stock_read(args, cfg, conn)
    table = catalog.find_table(conn, args.table, cfg.table.namespace)
    request = ReadRequest(
        out_dir=absolute(args.out),
        as_of=args.as_of_version,
        from_version=args.from_version,
        to_version=args.to_version,
        overwrite=args.overwrite,
        allow_gaps=args.allow_gaps,
    )
    plan = plan_read(conn, cfg, table, request)  # every check before Spark starts
    for warning in plan.warnings:
        print(f"contest: warning: {warning}", file=sys.stderr)
    with spark_session(cfg, "contest-read", for_paths(args.out)) as spark:
        report = run_read(spark, cfg, plan)
        cores = granted_cores(spark)
    print(
        f"read {report.table}: {report.rows:,} rows in {report.seconds:.3f} s -> {report.out}",
        file=sys.stderr,
    )
    print(json.dumps({**report.to_dict(), "spark_cores": cores}))
    return EXIT_OK


def _stock_write(args: argparse.Namespace, cfg: Config, conn, replace: bool) -> int:
    """The write of the lakesoul-stock engine (contest/write/stock.py)."""
    from contest.infra.lakesoul_jvm import COORDINATES, session_config
    from contest.infra.packages import for_paths
    from contest.infra.spark import spark_session
    from contest.write.stock import run_stock_write

    packages = COORDINATES + for_paths(args.data)
    with spark_session(session_config(cfg), "contest-write-stock", packages) as spark:
        report = run_stock_write(
            spark, conn, cfg, args.data, absolute(args.table), args.name, replace=replace
        )
    print(json.dumps(report.to_dict()))
    print(("" if report.ok else "contest: ") + report.summary(), file=sys.stderr)
    return report.exit_code


def _stock_read(args: argparse.Namespace, cfg: Config, conn) -> int:
    """The read of the lakesoul-stock engine (contest/read/stock.py)."""
    from contest.infra.lakesoul_jvm import COORDINATES, session_config
    from contest.infra.packages import for_paths
    from contest.infra.spark import spark_session
    from contest.read.stock import run_stock_read

    packages = COORDINATES + for_paths(args.out)
    with spark_session(session_config(cfg), "contest-read-stock", packages) as spark:
        report = run_stock_read(spark, conn, cfg, args.table, absolute(args.out), args.overwrite)
    print(
        f"read {report.table}: {report.rows:,} rows in {report.seconds:.3f} s -> {report.out}",
        file=sys.stderr,
    )
    print(json.dumps(report.to_dict()))
    return EXIT_OK


def _peer_write(args: argparse.Namespace, cfg: Config) -> int:
    """`contest write` with peer.format set: the batches merged into a Delta, Iceberg or
    Hudi table in version order (contest/peers/write.py); --table is its folder."""
    from contest.peers.write import run_peer_write

    if args.append or args.resume or args.only or args.delay_commit:
        raise UsageError(
            f"peer.format={cfg.peer.format}: --append, --resume, --only and --delay-commit "
            "are for LakeSoul tables; a peer write applies every batch in version order"
        )
    _logging()
    report = run_peer_write(cfg, args.data, absolute(args.table), replace=args.replace)
    print(json.dumps(report.to_dict()))
    print(("" if report.ok else "contest: ") + report.summary(), file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILED


def _peer_read(args: argparse.Namespace, cfg: Config) -> int:
    """`contest read` with peer.format set: the format's merged snapshot as the result;
    --table is the table's folder."""
    from contest.peers.read import run_peer_read

    if args.as_of_version is not None or args.from_version is not None or args.to_version:
        raise UsageError(f"peer.format={cfg.peer.format}: version ranges are for LakeSoul tables")
    report = run_peer_read(cfg, absolute(args.table), absolute(args.out), args.overwrite)
    print(
        f"read {report['format']} table {report['table']}: {report['rows']:,} rows in "
        f"{report['seconds']:.3f} s -> {report['out']}",
        file=sys.stderr,
    )
    print(json.dumps(report))
    return EXIT_OK
