"""`contest stream feed|run`: streaming upserts, exactly once (README, "Streaming")."""

from __future__ import annotations

import argparse
import json
import logging
import sys

from contest.cli.common import (
    absolute,
    command,
    config_default,
    config_source,
    group,
    say,
    workload_option,
)
from contest.config import Config, override
from contest.data.workload import schema_of_batch
from contest.errors import EXIT_OK
from contest.evaluation.strategies import stream_preset
from contest.infra import packages
from contest.infra.postgres import resolve_connection
from contest.infra.spark import spark_session
from contest.peers import change_check, formats, registry
from contest.peers.write import session_config


def register(sub: argparse._SubParsersAction) -> None:
    stream = group(
        sub,
        "stream",
        "streaming upserts: a feed and a Structured Streaming query",
        "Streaming upserts, exactly once: `feed` drops contest-shaped parquet files into "
        "a folder at a rate; `run` upserts each micro-batch of a Structured Streaming "
        "query over that folder into a LakeSoul table, recording (query id, batch id) "
        "in the commit's transaction so a replayed batch is never committed twice.",
        "stream_command",
    )
    f = command(
        stream,
        "feed",
        "drop contest-shaped files into the source folder",
        "Write FILES parquet files of ROWS rows (the generator's batch shape: the first "
        "introduces keys, each later one is half new keys, half updates) into the "
        "source folder, one every INTERVAL seconds, numbering on from the files there.",
        cmd_feed,
    )
    f.add_argument(
        "--source", help="the folder (stream.source, default none: <work>/stream/incoming)"
    )
    f.add_argument(
        "--files", type=int, help=f"files to drop ({config_default('stream.feed_files')})"
    )
    f.add_argument("--rows", type=int, help=f"rows per file ({config_default('stream.feed_rows')})")
    f.add_argument(
        "--interval",
        type=float,
        help=f"seconds between files, 0 = at once ({config_default('stream.feed_interval_s')})",
    )
    f.add_argument("--seed", type=int, default=2022, help="generator seed")

    r = command(
        stream,
        "run",
        "upsert each micro-batch of the source folder into a table",
        "A Structured Streaming query over the source folder (Spark's file source), each "
        "micro-batch upserted into the table (created when missing) as one commit with "
        "the next version, exactly once; restarted on the same checkpoint it goes on "
        "where it stopped. Prints a JSON summary.",
        cmd_run,
    )
    r.add_argument("--table", required=True, help="table path (its folder name is its name)")
    r.add_argument(
        "--format",
        choices=registry.stream_names(),
        help="the table's format: lakesoul (this harness's sink) or a peer format through "
        "the sink --sink picks; hudi runs hudi-merger's (default: peer.format, "
        "empty = lakesoul)",
    )
    r.add_argument(
        "--sink",
        help="a peer format's sink: own (the format's documented sink) or foreach-batch "
        f"(the harness's); none = the format's first ({config_default('stream.sink')})",
    )
    r.add_argument("--name", help="table name (default: the path's last folder)")
    source = r.add_mutually_exclusive_group()
    source.add_argument(
        "--source", help="source folder (stream.source, default none: <work>/stream/incoming)"
    )
    source.add_argument(
        "--data",
        metavar="DIR",
        help="your own files as the source folder (with --workload FILE): the files there "
        "are checked before the query starts; files landing later, micro-batch by "
        "micro-batch; only read, never moved",
    )
    workload_option(r)
    r.add_argument(
        "--checkpoint", help="Spark's checkpoint (stream.checkpoint, default none: one per table)"
    )
    r.add_argument(
        "--trigger",
        choices=("processing-time", "available-now"),
        help=f"({config_default('stream.trigger')})",
    )
    r.add_argument(
        "--interval",
        type=float,
        help=f"seconds between micro-batches ({config_default('stream.interval_s')})",
    )
    r.add_argument(
        "--max-files-per-trigger", type=int, help="files a micro-batch takes at most, 0 = all"
    )
    r.add_argument("--idle-stop", type=float, help="stop after this many seconds without new files")
    r.add_argument("--timeout", type=float, help="stop after this many seconds")
    r.add_argument(
        "--pause-after-commit",
        type=float,
        help="fault injection: wait after each commit before Spark's checkpoint records it",
    )


def _stream_config(args: argparse.Namespace, cfg: Config) -> Config:
    keys = {
        "source": "stream.source",
        "checkpoint": "stream.checkpoint",
        "trigger": "stream.trigger",
        "interval": "stream.interval_s",
        "max_files_per_trigger": "stream.max_files_per_trigger",
        "idle_stop": "stream.idle_stop_s",
        "timeout": "stream.timeout_s",
        "pause_after_commit": "stream.pause_after_commit_s",
        "sink": "stream.sink",
        "files": "stream.feed_files",
        "rows": "stream.feed_rows",
    }
    values: dict[str, object] = {}
    for attr, key in keys.items():
        value = getattr(args, attr, None)
        if value is not None:
            values[key] = absolute(value) if attr in ("source", "checkpoint") else value
    if getattr(args, "format", None):
        values["peer.format"] = _peer_format(args.format)
    if args.stream_command == "feed" and args.interval is not None:
        values.pop("stream.interval_s", None)
        values["stream.feed_interval_s"] = args.interval
    return override(cfg, values) if values else cfg


def _peer_format(stream: str) -> str:
    """The peer format a stream of `stream` runs ("" for LakeSoul's own stream); a format
    without a streaming sink is refused in one line naming it when the stream starts."""
    impl = registry.by_stream(stream)
    return formats.for_stream(impl.name).name if impl.peer is not None else ""


def cmd_feed(args: argparse.Namespace, cfg: Config) -> int:
    from contest.stream.feed import feed  # deferred: loads pandas; CLI start-up
    from contest.stream.run import default_source  # deferred: loads pandas; CLI start-up

    cfg = _stream_config(args, cfg)
    s = cfg.stream
    report = feed(default_source(cfg), s.feed_files, s.feed_rows, s.feed_interval_s, args.seed, say)
    print(
        json.dumps(
            {
                "folder": str(report.folder),
                "files": [p.name for p in report.files],
                "rows": report.rows,
                "seconds": round(report.seconds, 3),
            }
        )
    )
    return EXIT_OK


def cmd_run(args: argparse.Namespace, cfg: Config) -> int:
    from contest.stream.check import check_source  # deferred: loads pandas; CLI start-up
    from contest.stream.run import run_stream  # deferred: loads pandas; CLI start-up

    if args.format and _peer_format(args.format):
        cfg = config_source(args).load(preset=stream_preset(args.format))

    if args.data:
        cfg = override(cfg, {"stream.source": absolute(args.data)})
    cfg = _stream_config(args, cfg)
    if args.data:  # a user's files: checked as the batch commands check theirs
        say(f"stream: {check_source(cfg, cfg.stream.source)} file(s) in {args.data} checked")
    else:
        # Change data the stream's format cannot take (deletes, a composite key): refused
        # before the query starts.
        change_check.refuse(cfg, schema_of_batch(cfg.workload))
    logging.getLogger("py4j").setLevel(logging.WARNING)
    if cfg.peer.format:
        return _run_peer(args, cfg)
    conn = resolve_connection(cfg)
    with spark_session(cfg, "contest-stream") as spark:
        report = run_stream(spark, conn, cfg, absolute(args.table), args.name, say=say)
    say(f"stream: stopped ({report.stopped_by})")
    print(json.dumps(report.to_dict()), file=sys.stdout)
    return EXIT_OK


def _run_peer(args: argparse.Namespace, cfg: Config) -> int:
    from contest.stream.peer import run_peer_stream  # deferred: loads pandas; CLI start-up

    coords = formats.coordinates(cfg)
    packages.require(coords)
    with spark_session(session_config(cfg), f"contest-stream-{cfg.peer.format}", coords) as spark:
        report = run_peer_stream(spark, cfg, absolute(args.table), say=say)
    say(f"stream: stopped ({report.stopped_by})")
    print(json.dumps(report.to_dict()), file=sys.stdout)
    return EXIT_OK
