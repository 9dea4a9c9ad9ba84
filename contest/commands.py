"""Subcommands beyond the basics: each registers its parser and handler here."""

from __future__ import annotations

import argparse
import json
import sys

from contest.cli import EXIT_FAIL, EXIT_OK, EXIT_USAGE
from contest.config import Config
from contest.data import DataError


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

    register_pipeline(sub)
    register_evaluation(sub)
    register_sweep(sub)
    register_bench(sub)


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
    from contest.spark import spark_session

    with spark_session(cfg, "contest-check") as spark:
        digest = contest_sha256(spark, _table_path(args.result),
                                cfg.work_path / "check" / "single_csv")
    ok = digest == args.sha256.strip().lower()
    tail = "" if ok else f", expected {args.sha256}"
    print(f"{'OK' if ok else 'FAIL'}: sha256 {digest}{tail}")
    return EXIT_OK if ok else EXIT_FAIL


def _scratch(cfg: Config) -> str:
    path = cfg.work_path / "tmp"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def register_pipeline(sub: argparse._SubParsersAction) -> None:
    """write, read and meta merge: the three jobs of the pipeline."""
    w = sub.add_parser("write", help="upsert every batch concurrently with its version",
                       description="The Write job: create the table and upsert base-*.parquet "
                       "from a thread pool, each batch committed with its user-defined version.")
    w.add_argument("--data", required=True, help="folder with base-*.parquet")
    w.add_argument("--table", required=True, help="table path (its folder name is its name)")
    w.add_argument("--name", help="table name (default: the path's last folder)")
    w.add_argument("--versions", help="batch versions: INDEX=VERSION,... or @file.json")
    w.add_argument("--threads", type=int, help="batches upserted at once")
    w.add_argument("--buckets", type=int, help="hash buckets of a new table")
    w.add_argument("--repartition", type=int, help="partitions for big files (0 = never)")
    w.add_argument("--big-file-bytes", type=int, help="size from which a file is big (0 = auto)")
    w.add_argument("--codec", help="data file codec: none, snappy, zstd, gzip, lz4")
    w.add_argument("--drop-null-keys", action="store_true",
                   help="drop rows whose uuid is NULL (counted) instead of failing the batch")
    w.add_argument("--append", action="store_true",
                   help="add to the existing table instead of recreating it")
    w.add_argument("--only", help="write only these batch indices, e.g. 0,1,2,3,6,7")
    w.add_argument("--delay-commit", action="append", default=[], metavar="INDEX=SECONDS",
                   help="hold a batch's commit back (to force an out-of-order finish)")
    w.set_defaults(handler=cmd_write)

    r = sub.add_parser("read", help="merge-on-read the table and write it as parquet",
                       description="The Read job: merge by primary key with a merge operator "
                       "per column, in version order; write the result as parquet.")
    r.add_argument("--table", required=True, help="table path or name")
    r.add_argument("--out", required=True, help="result folder (overwritten)")
    r.add_argument("--operator", action="append", default=[], metavar="COLUMN=OPERATOR",
                   help="merge operator for a column (default: the contest's)")
    r.add_argument("--as-of-version", type=int, metavar="V", help="the table as of version V")
    r.add_argument("--from-version", type=int, metavar="A",
                   help="with --to-version: only the changes after version A")
    r.add_argument("--to-version", type=int, metavar="B", help="changes up to version B")
    r.add_argument("--allow-unmerged", action="store_true",
                   help="read a snapshot still in commit order (result may be wrong)")
    r.set_defaults(handler=cmd_read)

    m = sub.add_parser("meta", help="LakeSoul metadata tools (PostgreSQL)")
    msub = m.add_subparsers(dest="meta_command", metavar="ACTION", required=True)
    mm = msub.add_parser("merge", help="merge partition snapshots in version order",
                         description="Replay the table's commits from PostgreSQL and write "
                         "each partition's snapshot in user-defined version order.")
    mm.add_argument("--table", required=True, help="table path or name")
    mm.add_argument("--dry-run", action="store_true", help="print the plan, write nothing")
    mm.add_argument("--json", action="store_true", help="print a JSON summary")
    mm.add_argument("--path", choices=("auto", "driver", "distributed"), default="auto",
                    help="where the replay runs (auto: Spark from meta.DISTRIBUTED_THRESHOLD "
                    "live commits)")
    mm.set_defaults(handler=cmd_meta_merge)
    mb = msub.add_parser("bench", help="benchmark replay on long generated histories",
                         description="Generate histories of N commits and merge each in the "
                         "driver and through Spark; results to results/meta_replay.md.")
    mb.add_argument("--commits", default="1000,10000,100000,1000000",
                    help="history sizes, comma-separated")
    mb.add_argument("--out", help="results folder (default results/)")
    mb.set_defaults(handler=cmd_meta_bench)


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise DataError(f"{what}: expected KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def cmd_write(args: argparse.Namespace, cfg: Config) -> int:
    import logging

    from contest.pg import resolve_connection
    from contest.spark import spark_session
    from contest.write import run_write, timeline

    for attr, key in (("versions", "versions"), ("threads", "threads"),
                      ("repartition", "repartition"), ("big_file_bytes", "big_file_bytes"),
                      ("codec", "codec")):
        if getattr(args, attr) is not None:
            setattr(cfg.write, key, getattr(args, attr))
    if args.buckets is not None:
        cfg.table.hash_buckets = args.buckets
    if args.drop_null_keys:
        cfg.write.drop_null_keys = True
    from contest.config import ConfigError, validate

    try:
        validate(cfg)
        delays = {int(k): float(v) for k, v in _pairs(args.delay_commit, "--delay-commit").items()}
        only = [int(x) for x in args.only.split(",")] if args.only else None
    except (ConfigError, DataError, ValueError) as exc:
        return _err(str(exc))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s",
                        stream=sys.stderr)
    logging.getLogger("py4j").setLevel(logging.WARNING)
    conn = resolve_connection(cfg)
    try:
        from contest.data import discover

        discover(args.data, cfg.write.versions or None, schema=None)  # bad input: exit 2
    except DataError as exc:
        return _err(str(exc))
    with spark_session(cfg, "contest-write") as spark:
        report = run_write(spark, conn, cfg, args.data, _table_path(args.table), args.name,
                           fresh=not args.append, delays=delays, indices=only)
    print(f"wrote {report.table} in {report.wall_s:.2f}s; batch timeline:", file=sys.stderr)
    print(timeline(report), file=sys.stderr)
    print(json.dumps(report.to_dict()))
    return EXIT_OK if report.ok else EXIT_FAIL


def _table_path(text: str) -> str:
    """A path as Spark's JVM must see it: absolute (it may run in another folder)."""
    from pathlib import Path

    return text if "://" in text else str(Path(text).absolute())


def cmd_read(args: argparse.Namespace, cfg: Config) -> int:
    from contest import catalog
    from contest.merge_ops import MergeOperatorError
    from contest.pg import resolve_connection
    from contest.read import ReadError, run_read
    from contest.spark import spark_session
    from contest.table_io import SchemaEvolutionError

    if args.operator:
        try:
            cfg.read.operators = _pairs(args.operator, "--operator")
        except DataError as exc:
            return _err(str(exc))
    if args.allow_unmerged:
        cfg.read.require_merged = False
    if args.as_of_version is not None and (args.from_version is not None
                                           or args.to_version is not None):
        return _err("--as-of-version excludes --from-version/--to-version")
    conn = resolve_connection(cfg)
    try:
        table = catalog.find_table(conn, args.table, cfg.table.namespace)
    except catalog.TableError as exc:
        return _err(str(exc))
    try:
        with spark_session(cfg, "contest-read") as spark:
            report = run_read(spark, conn, cfg, table, _table_path(args.out),
                              as_of=args.as_of_version,
                              from_version=args.from_version, to_version=args.to_version)
    except (ReadError, MergeOperatorError) as exc:
        return _err(str(exc))
    except Exception as exc:  # Spark wraps task errors; surface ours in one line
        text = str(exc)
        if "SchemaEvolutionError: " in text:
            return _err(text.split("SchemaEvolutionError: ", 1)[1].splitlines()[0])
        if isinstance(exc, SchemaEvolutionError):
            return _err(text)
        raise
    print(json.dumps(report.__dict__))
    return EXIT_OK


def cmd_meta_merge(args: argparse.Namespace, cfg: Config) -> int:
    from contest import catalog
    from contest.pg import resolve_connection
    from meta.merge import DISTRIBUTED_THRESHOLD, merge_table
    from meta.replay import ReplayError

    conn = resolve_connection(cfg)
    try:
        table = catalog.find_table(conn, args.table, cfg.table.namespace)
        if args.path == "driver" or (args.path == "auto" and _live_commits(conn, table)
                                     < DISTRIBUTED_THRESHOLD):
            report = merge_table(conn, table, dry_run=args.dry_run, force_path="driver")
        else:
            from contest.spark import spark_session
            from meta.distributed import JDBC_PACKAGE

            with spark_session(cfg, "contest-meta-merge", (JDBC_PACKAGE,)) as spark:
                report = merge_table(conn, table, dry_run=args.dry_run, spark=spark,
                                     force_path=None if args.path == "auto" else args.path)
    except (catalog.TableError, ReplayError) as exc:
        return _err(str(exc))
    print(json.dumps(report.to_dict()) if args.json else report.render())
    return EXIT_OK


def _live_commits(conn, table) -> int:
    from contest.catalog import connect

    with connect(conn) as pgc, pgc.cursor() as cur:
        cur.execute("SELECT coalesce(max(cardinality(p.snapshot)), 0) FROM partition_info p "
                    "WHERE p.table_id = %s AND p.version = (SELECT max(version) FROM "
                    "partition_info q WHERE q.table_id = p.table_id AND "
                    "q.partition_desc = p.partition_desc)", (table.table_id,))
        n = cur.fetchone()[0]
    pgc.close()
    return int(n)


def cmd_meta_bench(args: argparse.Namespace, cfg: Config) -> int:
    import os
    from pathlib import Path

    from contest.config import PROJECT_DIR
    from contest.pg import resolve_connection
    from contest.spark import spark_session
    from meta.bench import run_bench, write_results
    from meta.distributed import JDBC_PACKAGE

    try:
        sizes = [int(x) for x in args.commits.split(",")]
    except ValueError:
        return _err(f"--commits: not a list of integers: {args.commits!r}")
    conn = resolve_connection(cfg)
    with spark_session(cfg, "contest-meta-bench", (JDBC_PACKAGE,)) as spark:
        records = run_bench(spark, conn, cfg, sizes, say=_say)
    out = write_results(records, Path(args.out) if args.out else PROJECT_DIR / "results",
                        os.cpu_count() or 1)
    print(out.read_text())
    return EXIT_OK if all(r["identical"] for r in records) else EXIT_FAIL


def register_evaluation(sub: argparse._SubParsersAction) -> None:
    from contest.evaluate import DEFAULT_SCALE, STRATEGIES

    e = sub.add_parser("evaluate", help="the contest's procedure: timed write, merge, timed "
                       "read, oracle check, score",
                       description="Run the contest's evaluation for one strategy. The last "
                       "line printed is one JSON object; exit 0 only when the result is right.")
    e.add_argument("--strategy", default="optimized", choices=sorted(STRATEGIES))
    _eval_args(e, DEFAULT_SCALE)
    e.set_defaults(handler=cmd_evaluate)

    c = sub.add_parser("compare", help="all strategies side by side, interleaved, with medians",
                       description="Run strategies interleaved (A B C A B C ...) and print "
                       "medians and the ratios optimized/baseline.")
    c.add_argument("--strategies", default=",".join(STRATEGIES),
                   help="comma-separated (default: all)")
    c.add_argument("--repeat", type=int, default=1, help="rounds (default 1)")
    _eval_args(c, DEFAULT_SCALE)
    c.set_defaults(handler=cmd_compare)

    r = sub.add_parser("report", help="regenerate results/README.md and the chart from runs",
                       description="Rebuild the results table and PNG chart from runs.jsonl.")
    r.add_argument("--results", default=None, help="runs file (default results/runs.jsonl)")
    r.set_defaults(handler=cmd_report)


def _eval_args(p: argparse.ArgumentParser, default_scale: float) -> None:
    p.add_argument("--data", help="data folder (default: generated at --scale, cached)")
    p.add_argument("--scale", type=float, help=f"scale of generated data (default "
                   f"{default_scale:g})")
    p.add_argument("--seed", type=int, default=2022, help="generator seed")
    p.add_argument("--cores", type=int, help="local[N] of the timed jobs (default: all)")
    p.add_argument("--work", help="work folder (default: the project's .work)")
    p.add_argument("--results", default=None,
                   help="append records to this file (default results/runs.jsonl; "
                   "'-' for none)")


def _results_file(arg: str | None):
    from contest.config import PROJECT_DIR

    if arg == "-":
        return None
    from pathlib import Path

    return Path(arg) if arg else PROJECT_DIR / "results" / "runs.jsonl"


def _strategy_config(args: argparse.Namespace, cfg: Config, strategy: str) -> Config:
    """The strategy's preset under the user's file, environment and flags."""
    import os

    from contest.config import load_config
    from contest.evaluate import STRATEGIES

    cfg2 = load_config(args.config, os.environ, _global_overrides(args),
                       preset=STRATEGIES[strategy])
    if args.work:
        cfg2.work_dir = args.work
    return cfg2


def _global_overrides(args: argparse.Namespace) -> dict[str, str]:
    from contest.cli import _overrides

    return _overrides(args.overrides)


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cmd_evaluate(args: argparse.Namespace, cfg: Config) -> int:
    from pathlib import Path

    from contest.evaluate import append_record, evaluate

    if args.data and args.scale:
        return _err("give --data or --scale, not both")
    cfg = _strategy_config(args, cfg, args.strategy)
    record = evaluate(cfg, args.strategy, data=Path(args.data) if args.data else None,
                      scale=args.scale, seed=args.seed, cores=args.cores, say=_say)
    out = _results_file(args.results)
    if out:
        append_record(out, record)
    print(json.dumps({k: v for k, v in record.items() if k not in ("config", "environment")}))
    return EXIT_OK if record["correct"] else EXIT_FAIL


def cmd_compare(args: argparse.Namespace, cfg: Config) -> int:
    from pathlib import Path

    from contest.evaluate import STRATEGIES, append_record, evaluate
    from contest.results import compare_table

    names = [s.strip() for s in args.strategies.split(",") if s.strip()]
    unknown = [s for s in names if s not in STRATEGIES]
    if unknown or not names:
        return _err(f"unknown strategy {unknown}: choose from {', '.join(STRATEGIES)}")
    if args.repeat < 1:
        return _err("--repeat must be at least 1")
    out = _results_file(args.results)
    records = []
    for rnd in range(args.repeat):
        for name in names:
            _say(f"== round {rnd + 1}/{args.repeat}: {name}")
            rec = evaluate(_strategy_config(args, cfg, name), name,
                           data=Path(args.data) if args.data else None, scale=args.scale,
                           seed=args.seed, cores=args.cores, say=_say)
            rec["compare_round"] = rnd + 1
            records.append(rec)
            if out:
                append_record(out, rec)
    table, summary = compare_table(records)
    print(table)
    print(json.dumps(summary))
    return EXIT_OK if all(r["correct"] for r in records) else EXIT_FAIL


def cmd_report(args: argparse.Namespace, cfg: Config) -> int:
    from contest.results import write_report

    runs = _results_file(args.results or "")
    if runs is None or not runs.exists():
        return _err(f"no runs file at {runs}: run `contest evaluate` first")
    readme, chart = write_report(runs)
    print(f"wrote {readme} and {chart}")
    return EXIT_OK


def register_sweep(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("sweep", help="run a parameter sweep from a TOML file",
                       description="Run every case of a sweep file as `contest evaluate` does; "
                       "resume where an interrupted sweep stopped; write a table, plots and "
                       "the best configuration. See sweeps/*.toml.")
    s.add_argument("file", help="sweep file (TOML)")
    s.add_argument("--out", help="sweep folder (default results/sweeps/<name>)")
    s.add_argument("--work", help="work folder (default: the project's .work)")
    s.add_argument("--check", action="store_true", help="validate the file, run nothing")
    s.set_defaults(handler=cmd_sweep)


def cmd_sweep(args: argparse.Namespace, cfg: Config) -> int:
    import os
    from pathlib import Path

    from contest.config import PROJECT_DIR, ConfigError
    from contest.sweep import (
        best_case,
        load_sweep,
        render_table,
        run_sweep,
        summarize,
        write_outputs,
    )

    try:
        sweep = load_sweep(Path(args.file), os.environ, _global_overrides(args))
    except ConfigError as exc:
        return _err(str(exc))
    runs = len(sweep.cases) * sweep.repeat
    if args.check:
        print(f"{args.file}: {len(sweep.cases)} case(s) x {sweep.repeat} = {runs} run(s), "
              f"strategy {sweep.strategy}, varying {', '.join(sweep.varied)}")
        return EXIT_OK
    out = Path(args.out) if args.out else PROJECT_DIR / "results" / "sweeps" / sweep.name
    records = run_sweep(sweep, out, os.environ, work_dir=args.work, say=_say)
    summaries = summarize(sweep, records)
    paths = write_outputs(sweep, summaries, out, os.environ)
    print(render_table(summaries))
    best = best_case(summaries)
    if best:
        print(f"best: {best.label} ({best.median:,.0f} rows/core/s); config {paths['best']}")
    else:
        print("no case gave a correct result")
    return EXIT_OK if best else EXIT_FAIL


def register_bench(sub: argparse._SubParsersAction) -> None:
    b = sub.add_parser("bench", help="benchmarks apart from the contest score")
    bsub = b.add_subparsers(dest="bench_command", metavar="WHAT", required=True)
    r = bsub.add_parser("read", help="merge-on-read cost per operator, against the default read",
                        description="Write one table, then time its merged read with no "
                        "operators, the contest's, and each operator alone (interleaved).")
    r.add_argument("--scale", type=float, action="append",
                   help="scale of generated data (repeatable; default 0.1)")
    r.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    r.add_argument("--out", help="results folder (default results/)")
    r.set_defaults(handler=cmd_bench_read)


def cmd_bench_read(args: argparse.Namespace, cfg: Config) -> int:
    from pathlib import Path

    from contest.bench_read import run_read_bench, write_read_results
    from contest.config import PROJECT_DIR
    from contest.evaluate import cached_data
    from contest.pg import resolve_connection
    from contest.spark import spark_session

    if args.repeat < 1:
        return _err("--repeat must be at least 1")
    conn = resolve_connection(cfg)
    results = []
    with spark_session(cfg, "contest-bench-read") as spark:
        for scale in args.scale or [0.1]:
            data = cached_data(cfg, scale, 2022, _say)
            res = run_read_bench(spark, conn, cfg, data, args.repeat, say=_say)
            res["scale"] = scale
            results.append(res)
    out = write_read_results(results, Path(args.out) if args.out else PROJECT_DIR / "results")
    print(out.read_text())
    return EXIT_OK
