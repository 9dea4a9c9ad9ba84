"""`contest bench duckdb`: the optimized pipeline against one DuckDB process merging the
same batches straight into one parquet result (contest/evaluation/duckdb_merge.py).

Both in the same run, on the same data, with the same cores (DuckDB's `SET threads`),
interleaved for `repeat` rounds: `optimized` as `contest evaluate` times it (write +
read, each a whole spark-submit process), DuckDB as a whole Python process; both checked
by the oracle. Ratio = DuckDB seconds / optimized seconds (>= 1: optimized is faster).
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
from collections.abc import Callable
from pathlib import Path

from contest.config import Config
from contest.errors import RunError


def run_duckdb(cfg: Config, data: Path, cores: int, out_dir: Path, log: Path) -> dict:
    """One timed DuckDB merge into `out_dir` (a result folder the checker takes)."""
    from contest.data.checker import SUCCESS_MARKER
    from contest.data.oracle import config_budget
    from contest.infra.proc import run_timed

    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    cmd = [
        sys.executable,
        "-m",
        "contest.evaluation.duckdb_merge",
        "--data",
        str(data),
        "--out",
        str(out_dir / "part-00000.parquet"),
        "--threads",
        str(cores),
        "--memory-limit",
        str(config_budget(cfg).memory_limit),
    ]
    if cfg.write.versions:
        cmd += ["--versions", cfg.write.versions]
    r = run_timed(cmd, log)
    shutil.rmtree(out_dir / ".spill", ignore_errors=True)
    if not r.ok:
        raise RunError(f"DuckDB merge exited {r.returncode}: {r.last_line} (log {log})")
    (out_dir / SUCCESS_MARKER).touch()
    return {
        "seconds": round(r.seconds, 3),
        "peak_process_rss_bytes": r.peak_process_rss_bytes,
        **json.loads(r.last_line),
    }


def run_duckdb_bench(
    cfg: Config,
    data: Path,
    cores: int,
    repeat: int,
    records: Path,
    say: Callable[[str], None] = print,
) -> dict:
    from contest.data.checker import compare
    from contest.data.oracle import config_budget
    from contest.evaluation.evaluate import append_record, cached_expected, evaluate

    expected = cached_expected(cfg, data, cfg.write.versions, say)
    out_dir = cfg.work_path / "bench" / "duckdb" / "result"
    runs: dict[str, list[dict]] = {"optimized": [], "duckdb": []}
    for rnd in range(1, repeat + 1):
        say(f"== round {rnd}/{repeat}: optimized")
        rec = evaluate(cfg, "optimized", data=data, cores=cores, say=say)
        opt = {
            "round": rnd,
            "engine": "optimized",
            "seconds": round((rec.write_s or 0) + (rec.read_s or 0), 3),
            "write_s": rec.write_s,
            "read_s": rec.read_s,
            "peak_process_rss_bytes": max(
                rec.write_peak_process_rss_bytes or 0,
                rec.read_peak_process_rss_bytes or 0,
            ),
            "rows": rec.rows,
            "correct": rec.correct,
        }
        runs["optimized"].append(opt)
        append_record(records, {**opt, "data": str(data), "cores": cores})
        say(f"== round {rnd}/{repeat}: duckdb (threads={cores})")
        log = cfg.work_path / "bench" / "duckdb" / f"duckdb-{rnd}.log"
        duck = {"round": rnd, "engine": "duckdb", **run_duckdb(cfg, data, cores, out_dir, log)}
        duck["correct"] = compare(out_dir, expected, budget=config_budget(cfg)).ok
        runs["duckdb"].append(duck)
        append_record(records, {**duck, "data": str(data), "cores": cores})
    return summarize(runs, cores, str(data))


def summarize(runs: dict[str, list[dict]], cores: int, data: str) -> dict:
    med = {
        name: statistics.median(r["seconds"] for r in rs) if rs else None
        for name, rs in runs.items()
    }
    ratio = med["duckdb"] / med["optimized"] if med["optimized"] and med["duckdb"] else None
    return {
        "data": data,
        "cores": cores,
        "rounds": len(runs["optimized"]),
        "median_s": med,
        "ratio_duckdb_to_optimized": round(ratio, 3) if ratio else None,
        "all_correct": all(r["correct"] for rs in runs.values() for r in rs),
        "runs": runs,
    }


def render(summary: dict) -> str:
    lines = [
        "# Optimized pipeline against a single-process DuckDB merge",
        "",
        f"Data: `{summary['data']}`; cores: {summary['cores']} (local[N] and DuckDB's "
        f"threads); {summary['rounds']} interleaved round(s). Seconds are whole processes "
        "(optimized: write + read spark-submit; DuckDB: one Python process).",
        "",
        "| engine | median s | runs (s) | peak process RSS (GB) | correct |",
        "|---|---|---|---|---|",
    ]
    for name, rs in summary["runs"].items():
        secs = ", ".join(f"{r['seconds']:.1f}" for r in rs)
        rss = max((r["peak_process_rss_bytes"] or 0) for r in rs) / 1e9 if rs else 0
        ok = all(r["correct"] for r in rs)
        lines.append(f"| {name} | {summary['median_s'][name]:.1f} | {secs} | {rss:.2f} | {ok} |")
    lines += [
        "",
        f"Ratio DuckDB / optimized (>= 1.0: optimized is at least as fast): "
        f"**{summary['ratio_duckdb_to_optimized']}**",
        "",
    ]
    return "\n".join(lines)
