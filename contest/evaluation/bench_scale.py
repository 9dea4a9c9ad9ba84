"""`contest bench scale`: the optimized pipeline at several scales, and what a row costs.

Per scale, `contest evaluate` as is (whole spark-submit processes, oracle check), then:
write and read seconds, rows/core/s, seconds per million rows of the jobs' own
in-process time (their JSON lines: the write's wall_s, the read's seconds: no JVM
start), the peak RSS of the biggest process, stored bytes, data files per bucket.
The generated data (and its oracle) of a scale is removed before the next one unless
kept: the disk is shared. Writes scale.md, scale.jsonl and scale.png.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from contest.config import Config


def job_seconds(log: Path, key: str) -> float | None:
    """The in-process seconds a job printed in its JSON line (`key`), if any."""
    if not log.exists():
        return None
    for line in reversed(log.read_text(errors="replace").splitlines()):
        if line.startswith("{") and f'"{key}"' in line:
            try:
                return float(json.loads(line)[key])
            except (ValueError, KeyError):
                return None
    return None


def files_per_bucket(cfg: Config, table_name: str) -> float | None:
    from contest.infra.postgres import resolve_connection
    from contest.read.files import mean_files_per_bucket
    from meta import catalog
    from meta.commits import head_snapshot

    conn = resolve_connection(cfg)
    table = catalog.get_table(conn, table_name, cfg.table.namespace)
    return mean_files_per_bucket(head_snapshot(conn, table)[1])


def scale_row(cfg: Config, record: dict) -> dict:
    logs = cfg.work_path / "eval" / "logs"
    write_in = job_seconds(logs / "optimized-write.log", "wall_s")
    read_in = job_seconds(logs / "optimized-read.log", "seconds")
    million = (record.get("rows") or 0) / 1e6
    inproc = (write_in or 0) + (read_in or 0)
    return {
        "scale": record.get("scale"),
        "rows": record.get("rows"),
        "cores": record.get("cores"),
        "correct": record["correct"],
        "write_s": record["write_s"],
        "read_s": record["read_s"],
        "rows_per_core_s": record["rows_per_core_s"],
        "write_inprocess_s": write_in,
        "read_inprocess_s": read_in,
        "s_per_million_rows": round(inproc / million, 3) if million and inproc else None,
        "peak_process_rss_bytes": max(
            record.get("write_peak_process_rss_bytes") or 0,
            record.get("read_peak_process_rss_bytes") or 0,
        ),
        "stored_bytes": record.get("stored_bytes"),
        "files_per_bucket": files_per_bucket(cfg, "ccf_optimized") if record["correct"] else None,
        "error": record.get("error"),
    }


def run_scale_bench(
    cfg: Config,
    scales: list[float],
    cores: int | None,
    keep_data: bool,
    say: Callable[[str], None] = print,
) -> list[dict]:
    from contest.evaluation.evaluate import cached_data, evaluate

    rows = []
    for scale in scales:
        say(f"== scale {scale:g}")
        data = cached_data(cfg, scale, 2022, say)
        record = evaluate(cfg, "optimized", data=data, cores=cores, say=say)
        rows.append(scale_row(cfg, record))
        say(json.dumps(rows[-1]))
        if not keep_data:
            shutil.rmtree(data, ignore_errors=True)
            shutil.rmtree(cfg.work_path / "oracle", ignore_errors=True)
            shutil.rmtree(cfg.work_path / "eval" / "tables", ignore_errors=True)
            shutil.rmtree(cfg.work_path / "eval" / "result", ignore_errors=True)
    return rows


def render(rows: list[dict]) -> str:
    head = (
        "| scale | rows | write s | read s | rows/core/s | s per M rows (in-process) "
        "| peak process RSS GB | stored GB | files/bucket | correct |"
    )
    lines = [
        "# Cost per row against scale (strategy optimized)",
        "",
        "Seconds per million rows: the jobs' in-process time (write + read, no JVM start).",
        "",
        head,
        "|" + "---|" * 10,
    ]

    def f(v, fmt):
        return "-" if v is None else format(v, fmt)

    for r in rows:
        lines.append(
            f"| {r['scale']:g} | {r['rows'] or 0:,} | {f(r['write_s'], '.1f')} "
            f"| {f(r['read_s'], '.1f')} | {f(r['rows_per_core_s'], ',.0f')} "
            f"| {f(r['s_per_million_rows'], '.2f')} "
            f"| {r['peak_process_rss_bytes'] / 1e9:.2f} "
            f"| {f((r['stored_bytes'] or 0) / 1e9, '.2f')} | {f(r['files_per_bucket'], '.1f')} "
            f"| {r['correct']} |"
        )
    return "\n".join(lines) + "\n"


def chart(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = [(r["scale"], r["s_per_million_rows"]) for r in rows if r["s_per_million_rows"]]
    fig, ax = plt.subplots(figsize=(7, 4))
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o")
    ax.set_xscale("log")
    ax.set_xlabel("scale (1 = 30M rows)")
    ax.set_ylabel("seconds per million rows (in-process)")
    ax.set_ylim(bottom=0)
    ax.set_title("Cost per row against scale: flat is the goal")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_outputs(rows: list[dict], out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "scale.jsonl").open("a") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    (out / "scale.md").write_text(render(rows))
    chart(rows, out / "scale.png")
    return out / "scale.md"
