"""Commands for running beyond one machine's local mode: a Spark standalone cluster
(`contest cluster`) and an S3-compatible object store (`contest s3`)."""

from __future__ import annotations

import argparse

from contest.cli.common import command, config_default, group, result, say
from contest.config import Config
from contest.errors import EXIT_FAILED, EXIT_OK, UsageError
from contest.infra.cluster import Standalone
from contest.infra.s3server import EmbeddedS3, fetch_jar


def register(sub: argparse._SubParsersAction) -> None:
    cl = group(
        sub,
        "cluster",
        "a Spark standalone cluster on this machine",
        "Start, inspect or stop a Spark standalone master and its workers, from the Spark "
        "that pyspark ships, on 127.0.0.1; logs and work folders under <state_dir>/cluster.",
        "cluster_command",
    )
    up = command(
        cl,
        "up",
        "start the master and N workers (or the workers that died)",
        "Start a standalone master and N workers, wait until every worker registered, "
        "and print the master URL (for `contest evaluate --master`) and the web UI.",
        cmd_cluster,
    )
    up.add_argument("--workers", type=int, help=f"workers ({config_default('cluster.workers')})")
    up.add_argument(
        "--cores-per-worker",
        type=int,
        help=f"cores each offers ({config_default('cluster.cores_per_worker')})",
    )
    up.add_argument("--memory", help=f"memory each offers ({config_default('cluster.memory')})")
    command(
        cl,
        "status",
        "is it running, and with what",
        "Print the cluster's state as JSON; exit 0 when it runs, 1 when it does not.",
        cmd_cluster,
    )
    command(
        cl,
        "down",
        "stop the workers and the master",
        "Stop the workers, then the master.",
        cmd_cluster,
    )

    s3 = group(
        sub,
        "s3",
        "an embedded S3-compatible server (S3Proxy)",
        "Start, inspect or stop S3Proxy on 127.0.0.1 with its filesystem backend (objects "
        "under <state_dir>/s3/data), with generated credentials kept in "
        "<state_dir>/s3/credentials.json (mode 0600, never printed). While it runs, "
        "s3:// paths use it unless s3.endpoint / AWS_ENDPOINT_URL name another store.",
        "s3_command",
    )
    command(s3, "up", "start it", "Start the embedded S3 server (S3Proxy 2.6.0, Java 17).", cmd_s3)
    command(
        s3,
        "status",
        "is it running, and where",
        "Print where it listens (JSON); exit 0 when it runs, 1 when it does not.",
        cmd_s3,
    )
    command(
        s3, "down", "stop it (objects stay)", "Stop the server; its objects stay on disk.", cmd_s3
    )
    command(
        s3,
        "fetch",
        "fetch the S3Proxy jar with Maven",
        "Download org.gaul:s3proxy:2.6.0 (jar with dependencies) into ~/.m2.",
        cmd_s3,
    )


def cmd_cluster(args: argparse.Namespace, cfg: Config) -> int:
    cluster = Standalone.of(cfg)
    action = args.cluster_command
    if action == "up":
        workers = args.workers or cfg.cluster.workers
        cores = args.cores_per_worker or cfg.cluster.cores_per_worker
        memory = args.memory or cfg.cluster.memory
        if workers < 1 or cores < 1:
            raise UsageError("--workers and --cores-per-worker must be at least 1")
        say(f"starting a Spark standalone cluster: {workers} worker(s) x {cores} core(s), {memory}")
        st = cluster.up(workers, cores, memory)
        result(
            {
                "running": True,
                "master_url": st["master_url"],
                "web_ui": st["web_ui"],
                "workers": len(st["workers"]),
            },
            f"master {st['master_url']}  web UI {st['web_ui']}  ({workers} workers registered)",
        )
        return EXIT_OK
    if action == "status":
        status = cluster.status()
        line = (
            f"Spark standalone cluster: master {status['master_url']}, "
            f"{status.get('aliveworkers', '?')} worker(s) alive"
            if status["running"]
            else "Spark standalone cluster: not running"
        )
        result(status, line)
        return EXIT_OK if status["running"] else EXIT_FAILED
    result(cluster.down() or {"cluster": "not running"})
    return EXIT_OK


def cmd_s3(args: argparse.Namespace, cfg: Config) -> int:
    server = EmbeddedS3.of(cfg)
    action = args.s3_command
    if action == "fetch":
        jar = fetch_jar()
        result({"jar": str(jar)}, f"S3Proxy jar: {jar}")
    elif action == "up":
        info, what = server.up()
        result(
            {"running": True, "endpoint": info["endpoint"], "pid": info["pid"], "state": what},
            f"S3Proxy {what} at {info['endpoint']}; credentials in {server.info_file} "
            "(used by s3:// paths while it runs)",
        )
    elif action == "status":
        running = server.running()
        where = {"endpoint": running["endpoint"], "pid": running["pid"]} if running else {}
        result({"running": bool(running), **where}, f"S3Proxy: {server.status()}")
        return EXIT_OK if running else EXIT_FAILED
    else:
        what = server.down()
        result({"running": False, "state": what}, f"S3Proxy: {what}")
    return EXIT_OK
