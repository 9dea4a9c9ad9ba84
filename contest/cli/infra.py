"""Commands for the servers and libraries the harness runs on: db, connector, smoke."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from typing import TYPE_CHECKING

from contest.cli.common import ListAction, command, group, result
from contest.config import Config
from contest.errors import EXIT_FAILED, EXIT_OK, HarnessError, UsageError
from contest.infra import cds, maven, packages
from contest.infra.connector import fetch, local_jar
from contest.infra.packages import UNCHECKED
from contest.infra.postgres import EmbeddedCluster, ensure_database, resolve_connection
from contest.peers import registry
from contest.smoke import run_smoke
from meta.connection import connect

if TYPE_CHECKING:
    from meta.connection import PgConnection


def register(sub: argparse._SubParsersAction) -> None:
    db = group(
        sub,
        "db",
        "the PostgreSQL that holds LakeSoul's metadata",
        "Start, stop or inspect the embedded PostgreSQL (created on first use under "
        "the state folder), or check an external one set by LAKESOUL_PG_URL or "
        "lakesoul_home.",
        "db_command",
    )
    command(
        db,
        "up",
        "start the embedded cluster (create it on first use)",
        "Start the embedded PostgreSQL, create the database and apply LakeSoul's schema; "
        "with an external server, check it and apply the schema.",
        cmd_db,
    )
    command(
        db,
        "down",
        "stop the embedded cluster",
        "Stop the embedded PostgreSQL (an external one is left running).",
        cmd_db,
    )
    command(
        db,
        "status",
        "say whether it runs, and where",
        "Print whether the metadata database runs, and where (JSON); exit 0 when it "
        "runs (an external one: answers), 1 when it does not.",
        cmd_db,
    )

    conn = group(
        sub,
        "connector",
        "the LakeSoul Spark connector (spark.jars.packages)",
        "The LakeSoul Spark connector: check the local Maven/Ivy cache for it, or "
        "pre-fetch it with Maven.",
        "connector_command",
    )
    command(
        conn,
        "check",
        "is the connector in the local Maven/Ivy cache?",
        "Exit 0 when the configured connector jar is in the local cache.",
        cmd_connector,
    )
    command(
        conn,
        "fetch",
        "pre-fetch the connector with Maven",
        "Download the configured connector into the local Maven repository.",
        cmd_connector,
    )

    pk = group(
        sub,
        "packages",
        "JVM libraries loaded through spark.jars.packages",
        "List or pre-fetch (into Spark's Ivy cache) the JVM libraries the harness "
        "loads: PostgreSQL's JDBC driver, the peer table formats, S3 support, "
        "LakeSoul's own libraries; and the jars it keeps in the local Maven repository "
        "(jffi, S3Proxy, Hudi's bundle for jvm/). Every jar is verified; a corrupt one "
        "counts as missing and is fetched again. Fetches hold a lock per cache, so "
        "set-ups on one machine wait for each other.",
        "packages_command",
    )
    pl = command(
        pk,
        "list",
        "each set of coordinates, and whether it is fetched",
        "Print each named set of Maven coordinates and whether its jars are in the cache: "
        "fetched, missing, corrupt (there but not a whole jar, or not the repository's "
        "checksum), or unchecked (fetched before jars were verified; the next fetch "
        "--missing resolves it again from the cache and verifies its dependencies).",
        cmd_packages,
    )
    pl.add_argument("--json", action="store_true", help="print JSON")
    pf = command(
        pk,
        "fetch",
        "resolve them into the Ivy cache now",
        "Resolve the named sets (default: all) with Spark's Ivy, and fetch the named "
        "Maven artifacts, so no timed run downloads; every jar is verified after.",
        cmd_packages,
    )
    pf.add_argument(
        "--name",
        dest="sets",
        action=ListAction,
        default=[],
        metavar="NAME",
        help="named sets, comma-separated or repeated (default: all)",
    )
    pf.add_argument(
        "--coordinates",
        action=ListAction,
        help="coordinates instead of sets, comma-separated or repeated",
    )
    pf.add_argument(
        "--missing",
        action="store_true",
        help="only the sets with jars missing or corrupt in the cache",
    )

    cds = group(
        sub,
        "cds",
        "the class-data-sharing archive the timed jobs' JVMs may start from",
        "Make (build) or inspect (status) the checkout's class-data-sharing archive of "
        "Spark's classes (AppCDS, under the state folder): timed jobs use it when "
        "spark.cds is on and it matches this Java and Spark's jars; ./build.sh makes it.",
        "cds_command",
    )
    cb = command(
        cds,
        "build",
        "make the archive (nothing when it is current)",
        "Run a small Spark job once with both JVMs (launcher, driver) dumping their "
        "classes at exit, check each archive maps, then put it in place with its stamp "
        "(Java's build, Spark's jars).",
        cmd_cds,
    )
    cb.add_argument("--force", action="store_true", help="make it even when current")
    command(
        cds,
        "status",
        "whether the archive is current",
        "Print where the archive is and whether it matches this Java and Spark's jars "
        "(JSON); exit 0 when it does, 1 when it is missing or stale.",
        cmd_cds,
    )
    command(
        sub,
        "smoke",
        "write and read a small table through every real component",
        "Create a table, write two small batches with Spark, commit them in PostgreSQL, "
        "read them merged, and read the table with LakeSoul's native reader.",
        cmd_smoke,
    )


def cmd_db(args: argparse.Namespace, cfg: Config) -> int:
    action = args.db_command
    if cfg.pg.external:
        conn = resolve_connection(cfg)
        where = {"server": "external", "url": conn.describe()}
        if action == "up":
            ensure_database(cfg)
            result(
                {**where, "running": True},
                f"external PostgreSQL {conn.describe()}: reachable, schema applied",
            )
        elif action == "down":
            result(
                {**where, "running": None},
                f"external PostgreSQL {conn.describe()}: not managed here, left running",
            )
        else:
            error = _no_answer(conn)
            result(
                {**where, "running": error is None, **({"error": error} if error else {})},
                f"external PostgreSQL {conn.describe()}: {error or 'answers'}",
            )
            return EXIT_FAILED if error else EXIT_OK
        return EXIT_OK
    cluster = EmbeddedCluster(cfg)
    if action == "up":
        conn, what = cluster.up()
        result(
            {"server": "embedded", "running": True, "url": conn.describe(), "state": what},
            f"embedded PostgreSQL {what}: {conn.describe()}; "
            f"LakeSoul settings in {cluster.properties} (use as lakesoul_home)",
        )
    elif action == "down":
        what = cluster.down()
        result(
            {"server": "embedded", "running": False, "state": what}, f"embedded PostgreSQL: {what}"
        )
    else:
        running = cluster.running()
        port = cluster.port() if running else None
        result(
            {"server": "embedded", "running": running, "port": port, "data": str(cluster.data)},
            f"embedded PostgreSQL: {cluster.status()}",
        )
        return EXIT_OK if running else EXIT_FAILED
    return EXIT_OK


def _no_answer(conn: PgConnection) -> str | None:
    """Why an external server does not take a connection now (one try, no retrying),
    or None when it does."""
    try:
        connect(dataclasses.replace(conn, retry_s=0.0)).close()
    except HarnessError as exc:
        return str(exc)
    return None


def cmd_cds(args: argparse.Namespace, cfg: Config) -> int:
    env = dict(os.environ)
    if args.cds_command == "build":
        archives = cds.build(cfg, env, force=args.force)
        result(
            {"folder": str(cds.folder(cfg)), "current": True, "driver": str(archives.driver)},
            f"class-data archive: {cds.folder(cfg)} (used by timed jobs with spark.cds=true)",
        )
        return EXIT_OK
    have = cds.current(cfg, env)
    result(
        {"folder": str(cds.folder(cfg)), "current": have is not None},
        f"class-data archive {cds.folder(cfg)}: "
        + ("current" if have else "missing or stale (contest cds build)"),
    )
    return EXIT_OK if have else EXIT_FAILED


def cmd_connector(args: argparse.Namespace, cfg: Config) -> int:
    coords = cfg.spark.connector
    if args.connector_command == "check":
        jar = local_jar(coords)
        if jar is None:
            result(
                {"coordinates": coords, "jar": None},
                f"{coords}: not in the local Maven/Ivy cache (try `contest connector fetch`)",
            )
            return EXIT_FAILED
        result({"coordinates": coords, "jar": str(jar)}, f"{coords}: {jar}")
        return EXIT_OK
    jar = fetch(coords)
    result({"coordinates": coords, "jar": str(jar)}, f"{coords}: {jar}")
    return EXIT_OK


def cmd_packages(args: argparse.Namespace, cfg: Config) -> int:
    ivy = packages.ivy_home(cfg)
    known = registry.package_sets()  # the harness's own and every format's
    if args.packages_command == "list":
        states = {n: _state(packages.problems(c, ivy)) for n, c in known.items()}
        states |= {
            n: _state({a.coordinate: r} if (r := maven.problem(n)) else {})
            for n, a in maven.ARTIFACTS.items()
        }
        listed = {n: list(c) for n, c in known.items()}
        listed |= {n: [a.coordinate] for n, a in maven.ARTIFACTS.items()}
        if args.json:
            shown = [
                {
                    "name": n,
                    "fetched": states[n] == "fetched",
                    "state": states[n],
                    "coordinates": listed[n],
                }
                for n in listed
            ]
            print(json.dumps({"sets": shown}))
            return EXIT_OK
        for name, shown_coords in listed.items():
            print(f"{name:<14} {states[name]:<9} {', '.join(shown_coords)}")
        return EXIT_OK
    if args.coordinates:
        sets = {"given": tuple(args.coordinates)}
        artifacts: list[str] = []
    else:
        names = args.sets or [*known, *maven.ARTIFACTS]
        artifacts = [n for n in names if n in maven.ARTIFACTS]
        unknown = [n for n in names if n not in known and n not in maven.ARTIFACTS]
        if unknown:
            raise UsageError(
                f"--name: unknown package set {unknown[0]!r} "
                f"(known: {', '.join([*known, *maven.ARTIFACTS])})"
            )
        sets = {n: known[n] for n in names if n not in maven.ARTIFACTS}
    if args.missing:
        sets = {n: c for n, c in sets.items() if packages.missing(c, ivy)}
        artifacts = [n for n in artifacts if maven.problem(n)]
        if not sets and not artifacts:
            result({"fetched": []})  # quiet: ./build.sh runs this every time
            return EXIT_OK
    for name, coords in sets.items():
        print(f"{name}: resolving {', '.join(coords)}", file=sys.stderr, flush=True)
        excludes = registry.package_excludes().get(name, ())
        packages.fetch(coords, excludes, ivy, only_missing=args.missing)
    for name in artifacts:
        print(f"{name}: fetching {maven.ARTIFACTS[name].coordinate}", file=sys.stderr, flush=True)
        maven.ensure(name, ivy=ivy)
    done = [*sets, *artifacts]
    result({"fetched": done}, f"fetched {', '.join(done)}")
    return EXIT_OK


def _state(problems: dict) -> str:
    """fetched; corrupt (a jar there but broken); missing (a jar absent); unchecked (its
    jars there, its dependencies not yet verified: the next fetch --missing does)."""
    reasons = set(problems.values())
    if not reasons:
        return "fetched"
    if reasons - {"missing", UNCHECKED}:
        return "corrupt"
    return "missing" if "missing" in reasons else UNCHECKED


def cmd_smoke(args: argparse.Namespace, cfg: Config) -> int:
    result = run_smoke(cfg)
    print(json.dumps(result, default=str))
    return EXIT_OK if result["correct"] and result["native_reader_agrees"] else EXIT_FAILED
