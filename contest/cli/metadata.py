"""Commands on LakeSoul's metadata and table maintenance: meta merge|rollback|bench,
history, rollback, vacuum, compact."""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

from contest.cli.bench import add_benchmark
from contest.cli.common import absolute, command, group, result, say
from contest.config import Config
from contest.errors import EXIT_OK, UsageError
from contest.infra.postgres import resolve_connection
from contest.infra.spark import spark_session
from contest.maintenance.compact import compact
from contest.maintenance.vacuum import vacuum
from contest.peers.compact import run_peer_compact
from contest.peers.expire import run_peer_expire
from meta import catalog
from meta.commits import live_commit_count
from meta.distributed import JDBC_PACKAGE
from meta.merge import DISTRIBUTED_THRESHOLD, describe_versions, merge_table
from meta.versions import gaps_of, history, rollback


def register(sub: argparse._SubParsersAction) -> None:
    meta = group(
        sub,
        "meta",
        "LakeSoul metadata tools (PostgreSQL)",
        "Tools on LakeSoul's metadata in PostgreSQL: merge snapshots in version "
        "order, benchmark the replay.",
        "meta_command",
    )
    mm = command(
        meta,
        "merge",
        "merge partition snapshots in version order",
        "Replay the table's commits from PostgreSQL and write each partition's "
        "snapshot in user-defined version order.",
        cmd_meta_merge,
    )
    mm.add_argument("--table", required=True, help="table path or name")
    mm.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    mm.add_argument("--json", action="store_true", help="print a JSON summary")
    mm.add_argument(
        "--path",
        choices=("auto", "driver", "distributed"),
        default="auto",
        help="where the replay runs (auto: through Spark from "
        "meta.merge.DISTRIBUTED_THRESHOLD live commits)",
    )
    add_rollback(meta, "the same as `contest rollback`")  # the old spelling
    add_benchmark(meta, "replay", alias="bench")  # `contest bench replay`, the old spelling
    register_maintenance(sub)


def register_maintenance(sub: argparse._SubParsersAction) -> None:
    h = command(
        sub,
        "history",
        "the table's commits: versions, batches, files, gaps",
        "List every commit of the table, newest version first (like Delta's DESCRIBE "
        "HISTORY; a compaction at the newest version it covers): version, batch, commit "
        "id, time, files, bytes, the versions a compaction covers, whether it is live "
        "(or rolled back); then the versions a write planned that are missing.",
        cmd_history,
    )
    h.add_argument("--table", required=True, help="table path or name")
    h.add_argument("--json", action="store_true", help="print JSON")
    add_rollback(sub, "undo the commits after a version")

    v = command(
        sub,
        "vacuum",
        "delete data files no live commit names",
        "Delete the table's data files that no live commit names (killed writes, "
        "failed tasks, rolled-back or compacted commits), older than the retention "
        "window so a write in progress is never touched. With peer.format set, the peer "
        "table in --table's folder has its old versions expired the format's own way "
        "(Delta VACUUM, Iceberg expire_snapshots, ...), keeping only the newest.",
        cmd_vacuum,
    )
    v.add_argument("--table", required=True, help="table path or name")
    v.add_argument(
        "--retain",
        type=float,
        default=168.0,
        metavar="HOURS",
        help="keep orphans younger than this",
    )
    v.add_argument("--dry-run", action="store_true", help="list what would go, delete nothing")
    v.add_argument("--json", action="store_true", help="print JSON")

    c = command(
        sub,
        "compact",
        "rewrite each bucket into one merged file",
        "Merge each bucket's files with the table's merge operators into one file and "
        "commit it as a LakeSoul CompactionCommit; reads give the same result, faster. "
        "Buckets already compact are kept; with nothing to rewrite, nothing is committed. "
        "The old files stay until `contest vacuum`, and versions before the compaction "
        "stay readable (read --as-of-version) until then. With peer.format set, the "
        "peer table in --table's folder is compacted the way that format's documentation "
        "recommends (Delta OPTIMIZE, Iceberg rewrite_data_files, Hudi run_compaction, "
        "Paimon sys.compact).",
        cmd_compact,
    )
    c.add_argument(
        "--table",
        required=True,
        help="table path or name (with peer.format set: the peer table's folder, compacted "
        "the way that format's documentation recommends)",
    )
    c.add_argument(
        "--allow-gaps",
        action="store_true",
        help="compact a table with missing versions (a batch written later would apply "
        "after the versions compacted above it)",
    )


def add_rollback(sub: argparse._SubParsersAction, summary: str) -> None:
    """`contest rollback`, beside `history`; also `contest meta rollback`."""
    rb = command(
        sub,
        "rollback",
        summary,
        "Write a new snapshot without the commits whose version is above V (like "
        "Delta's RESTORE); their versions can be committed again, their files stay "
        "until `contest vacuum`.",
        cmd_rollback,
    )
    rb.add_argument("--table", required=True, help="table path or name")
    rb.add_argument(
        "--to-version", type=int, required=True, metavar="V", help="the newest version to keep"
    )
    rb.add_argument("--dry-run", action="store_true", help="say what would go, change nothing")


def _table(cfg: Config, name: str):
    conn = resolve_connection(cfg)
    return conn, catalog.find_table(conn, name, cfg.table.namespace)


def cmd_history(args: argparse.Namespace, cfg: Config) -> int:
    conn, table = _table(cfg, args.table)
    h = history(conn, table)
    if args.json:
        print(
            json.dumps(
                {
                    "table": h.table,
                    "partition_version": h.partition_version,
                    "commits": [dataclasses.asdict(e) for e in h.entries],
                    "missing_versions": list(h.gaps.holes),
                    "pending_versions": list(h.gaps.pending),
                }
            )
        )
        return EXIT_OK
    print(f"{h.table}: partition version {h.partition_version}, {len(h.entries)} commit(s)")
    print(
        f"{'version':>7}  {'batch':<18} {'commit id':<36}  {'committed (UTC)':<19} "
        f"{'files':>5} {'bytes':>13}  {'covers':<10} live"
    )
    for e in h.entries:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(e.timestamp_ms / 1000))
        ver = "-" if e.version is None else str(e.version)
        covers = describe_versions(list(e.covers)) if e.covers else "-"
        live = "yes" if e.live else "no (rolled back)" if e.rolled_back else "no"
        print(
            f"{ver:>7}  {(e.batch or e.commit_op):<18} {e.commit_id:<36}  {when:<19} "
            f"{e.files:>5} {e.bytes:>13,}  {covers:<10} {live}"
        )
    print(f"missing: {h.gaps.describe()}" if h.gaps.holes or h.gaps.pending else "missing: none")
    return EXIT_OK


def cmd_rollback(args: argparse.Namespace, cfg: Config) -> int:
    conn, table = _table(cfg, args.table)
    done = rollback(conn, table, args.to_version, dry_run=args.dry_run)
    if not done.removed:
        line = f"{done.table}: nothing above version {args.to_version}: nothing to do"
    elif args.dry_run:
        line = (
            f"{done.table}: would remove {len(done.removed)} commit(s) above version "
            f"{args.to_version}"
        )
    else:
        line = (
            f"{done.table}: removed {len(done.removed)} commit(s) above version "
            f"{args.to_version}; partition version {done.partition_version}; their files "
            "stay until `contest vacuum`"
        )
    report = {
        "table": done.table,
        "to_version": args.to_version,
        "dry_run": args.dry_run,
        "removed": list(done.removed),
        "partition_version": done.partition_version,
    }
    result(report, line)
    return EXIT_OK


def cmd_vacuum(args: argparse.Namespace, cfg: Config) -> int:
    if cfg.peer.format:
        return _expire_peer(args, cfg)
    conn, table = _table(cfg, args.table)
    report = vacuum(conn, table, args.retain, args.dry_run)
    print(json.dumps(report.to_dict()) if args.json else report.render())
    return EXIT_OK


def cmd_compact(args: argparse.Namespace, cfg: Config) -> int:
    if cfg.peer.format:
        return _compact_peer(args, cfg)
    conn, table = _table(cfg, args.table)
    with spark_session(cfg, "contest-compact") as spark:
        report = compact(spark, conn, cfg, table, allow_gaps=args.allow_gaps)
    if report.nothing_to_do:
        say(
            f"{report.table}: already compact ({report.buckets_kept} bucket(s), one file "
            "each, nothing newer): nothing to do, nothing committed"
        )
    else:
        say(
            f"compacted {report.table}: {report.files_before} files -> {report.files_after}"
            f" ({report.buckets_kept} bucket(s) already compact, kept), {report.rows:,} rows "
            f"rewritten, {report.versions} versions, {report.seconds:.3f} s"
        )
    print(json.dumps(report.to_dict()))
    return EXIT_OK


def _compact_peer(args: argparse.Namespace, cfg: Config) -> int:
    """A peer format's table (peer.format set; --table is its folder): the format's own
    compaction (contest/peers/compact.py)."""
    if args.allow_gaps:
        raise UsageError(
            f"peer.format={cfg.peer.format}: --allow-gaps is for LakeSoul tables (a peer "
            "table applies its batches in version order)"
        )
    report = run_peer_compact(cfg, absolute(args.table))
    say(report.summary())
    print(json.dumps(report.to_dict()))
    return EXIT_OK


def _expire_peer(args: argparse.Namespace, cfg: Config) -> int:
    """A peer format's table (peer.format set; --table is its folder): the format's own
    expiry of old versions, keeping only the newest (contest/peers/expire.py)."""
    if args.dry_run:
        raise UsageError(f"peer.format={cfg.peer.format}: no --dry-run for a peer table's expiry")
    report = run_peer_expire(cfg, absolute(args.table))
    print(json.dumps(report.to_dict()) if args.json else report.summary())
    return EXIT_OK


def cmd_meta_merge(args: argparse.Namespace, cfg: Config) -> int:
    conn = resolve_connection(cfg)
    table = catalog.find_table(conn, args.table, cfg.table.namespace)
    if args.path == "driver" or (
        args.path == "auto" and live_commit_count(conn, table) < DISTRIBUTED_THRESHOLD
    ):
        report = merge_table(conn, table, dry_run=args.dry_run, force_path="driver")
    else:
        with spark_session(cfg, "contest-meta-merge", (JDBC_PACKAGE,)) as spark:
            report = merge_table(
                conn,
                table,
                dry_run=args.dry_run,
                spark=spark,
                force_path=None if args.path == "auto" else args.path,
            )
    print(json.dumps(report.to_dict()) if args.json else report.render())
    gaps = gaps_of(conn, table)
    if gaps.holes:  # merged in version order, but a batch is missing: a read refuses it
        say(
            f"contest: warning: table {table.namespace}.{table.name}: {gaps.describe()}; "
            "a read refuses it without --allow-gaps"
        )
    return EXIT_OK
