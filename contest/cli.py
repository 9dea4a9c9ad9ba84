"""`contest`: the command line. Parses flags, builds the one Config, calls the library."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from contest.config import ConfigError, load_config

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _overrides(pairs: Sequence[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise ConfigError(f"--set expects KEY=VALUE, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key.strip()] = value
    return out


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="contest",
        description="LakeSoul upsert / merge-on-read benchmark harness (CCF BDCI 2022 contest).",
    )
    parser.add_argument("--config", metavar="FILE", help="TOML configuration file")
    parser.add_argument("--set", dest="overrides", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="override one configuration key, e.g. spark.master=local[2]")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    db = sub.add_parser("db", help="the PostgreSQL that holds LakeSoul's metadata")
    db_sub = db.add_subparsers(dest="db_command", metavar="ACTION", required=True)
    db_sub.add_parser("up", help="start the embedded cluster (create it on first use)")
    db_sub.add_parser("down", help="stop the embedded cluster")
    db_sub.add_parser("status", help="say whether it runs, and where")

    sub.add_parser("smoke", help="write and read a small table through every real component")

    conn = sub.add_parser("connector", help="the LakeSoul JVM connector (spark.jars.packages)")
    conn_sub = conn.add_subparsers(dest="connector_command", metavar="ACTION", required=True)
    conn_sub.add_parser("check", help="is the connector in the local Maven/Ivy cache?")
    conn_sub.add_parser("fetch", help="pre-fetch the connector with Maven")

    from contest.commands import register

    register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        cfg = load_config(args.config, os.environ, _overrides(args.overrides))
    except ConfigError as exc:
        print(f"contest: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        return dispatch(args, cfg)
    except KeyboardInterrupt:
        print("contest: interrupted", file=sys.stderr)
        return 130


def dispatch(args: argparse.Namespace, cfg) -> int:
    from contest.connector import ConnectorError
    from contest.pg import PgError

    try:
        if args.command == "db":
            return _db(args.db_command, cfg)
        if args.command == "smoke":
            from contest.smoke import run_smoke

            result = run_smoke(cfg)
            print(json.dumps(result, default=str))
            return EXIT_OK if result["correct"] and result["native_reader_agrees"] else EXIT_FAIL
        if args.command == "connector":
            return _connector(args.connector_command, cfg)
        return args.handler(args, cfg)
    except (PgError, ConnectorError) as exc:
        print(f"contest: {exc}", file=sys.stderr)
        return EXIT_FAIL


def _db(action: str, cfg) -> int:
    from contest.pg import EmbeddedCluster, ensure_database, resolve_connection

    if cfg.pg.external:
        conn = resolve_connection(cfg)
        if action == "up":
            ensure_database(cfg)
            print(f"external PostgreSQL {conn.describe()}: reachable, schema applied")
        elif action == "down":
            print(f"external PostgreSQL {conn.describe()}: not managed here, left running")
        else:
            print(f"external PostgreSQL {conn.describe()}")
        return EXIT_OK
    cluster = EmbeddedCluster(cfg)
    if action == "up":
        conn, what = cluster.up()
        print(f"embedded PostgreSQL {what}: {conn.describe()}; "
              f"LakeSoul settings in {cluster.properties} (use as lakesoul_home)")
    elif action == "down":
        print(f"embedded PostgreSQL: {cluster.down()}")
    else:
        print(f"embedded PostgreSQL: {cluster.status()}")
    return EXIT_OK


def _connector(action: str, cfg) -> int:
    from contest.connector import fetch, local_jar

    coords = cfg.spark.connector
    if action == "check":
        jar = local_jar(coords)
        if jar is None:
            print(f"{coords}: not in the local Maven/Ivy cache (try `contest connector fetch`)")
            return EXIT_FAIL
        print(f"{coords}: {jar}")
        return EXIT_OK
    print(f"{coords}: {fetch(coords)}")
    return EXIT_OK


def job_main(command: str, argv: Sequence[str]) -> int:
    """A spark-submit job: `command`'s arguments, with --config/--set anywhere."""
    front, rest, i = [], [], 0
    argv = list(argv)
    while i < len(argv):
        arg = argv[i]
        if arg in ("--config", "--set") and i + 1 < len(argv):
            front += [arg, argv[i + 1]]
            i += 2
            continue
        if arg.startswith(("--config=", "--set=")):
            front.append(arg)
        else:
            rest.append(arg)
        i += 1
    return main([*front, command, *rest])


if __name__ == "__main__":
    sys.exit(main())
