"""`contest bench scale`: the optimized pipeline at several scales, and what a row costs.

Per scale, `contest evaluate` as is (whole spark-submit processes, oracle check), then:
write and read seconds, rows/core/s, seconds per million rows of the jobs' own
in-process time (their JSON lines: the write's wall_s, the read's seconds: no JVM
start), the peak RSS of the biggest process, stored bytes, data files per bucket.
The generated batches of a scale are removed as soon as its write is done (the oracle's
result is computed before the write and the read does not need them), the table's files
as soon as its read is done (the check spills beside the result and the oracle's), and
its result and oracle's result before the next scale, unless kept; only what the bench made
goes (batches cached before it ran stay, and so do other runs' tables): the disk is shared, and
at scale 10 input, oracle result, table and merged result together (~73 GB) would not
fit beside each other on a machine with less free. scale.jsonl gathers the rows of
every invocation; scale.md and scale.png show the newest row of each scale, so scales
run in separate sittings make one table.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from contest.benchmarks.disk import check_disk
from contest.config import Config
from contest.errors import UsageError
from contest.evaluation.strategies import STRATEGIES
from contest.infra.postgres import resolve_connection
from contest.infra.proc import own_peak_rss, reset_own_peak_rss
from contest.read.files import mean_files_per_bucket
from contest.results.benchmarks import ScaleRecord
from contest.results.runs import RunRecord
from contest.sitting import (
    CORES,
    WORK,
    Benchmark,
    Option,
    Row,
    Say,
    Sitting,
    newest_per,
)
from meta import catalog
from meta.commits import head_snapshot


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
    conn = resolve_connection(cfg)
    table = catalog.get_table(conn, table_name, cfg.table.namespace)
    return mean_files_per_bucket(head_snapshot(conn, table)[1])


def scale_row(cfg: Config, record: RunRecord) -> Row:
    logs = cfg.work_path / "eval" / "logs"
    # A job that did not run this time has only an earlier scale's log: not its figure.
    write_in = job_seconds(logs / "optimized-write.log", "wall_s") if record.write_s else None
    read_in = job_seconds(logs / "optimized-read.log", "seconds") if record.read_s else None
    million = (record.rows or 0) / 1e6
    inproc = (write_in or 0) + (read_in or 0)
    return {
        "scale": record.scale,
        "rows": record.rows,
        "cores": record.cores,
        "correct": record.correct,
        "write_s": record.write_s,
        "read_s": record.read_s,
        "rows_per_core_s": record.rows_per_core_s,
        "write_inprocess_s": write_in,
        "read_inprocess_s": read_in,
        "s_per_million_rows": (
            round(inproc / million, 3) if million and record.correct and inproc else None
        ),
        "write_peak_process_rss_bytes": record.write_peak_process_rss_bytes,
        "read_peak_process_rss_bytes": record.read_peak_process_rss_bytes,
        # This process over this scale: the generator, the oracle and the check run in it.
        "harness_peak_rss_bytes": own_peak_rss(),
        "stored_bytes": record.stored_bytes,
        "files_per_bucket": (
            files_per_bucket(cfg, record.table) if record.correct and record.table else None
        ),
        "error": record.error,
        "when": record.when,
    }


def measure(
    cfg: Config,
    scales: list[float],
    cores: int | None,
    keep_data: bool,
    say: Say = print,
    on_row: Callable[[Row], object] | None = None,
) -> list[Row]:
    """Each scale in turn; `on_row` gets each scale's row as soon as it is measured, so
    a later scale that cannot run (its data does not fit) loses none of the earlier."""
    # deferred: pulls in pandas and tqdm; `contest --help` starts without them
    from contest.evaluation.data_cache import cached_data, data_folder
    from contest.evaluation.evaluate import drop_run, evaluate

    rows = []
    oracle_dir = cfg.work_path / "oracle"
    for scale in scales:
        say(f"== scale {scale:g}")
        reset_own_peak_rss()  # the harness's peak of this scale, not of the ones before
        cached = (data_folder(cfg, scale, 2022) / ".complete").exists()
        check_disk(cfg, scale, cached, keep_data)
        oracles = set(oracle_dir.glob("*")) if oracle_dir.is_dir() else set()
        data = cached_data(cfg, scale, 2022, say)
        # Only what this scale made is removed: batches generated now (a cache that was
        # there before is someone's), the oracle's results computed now, this run's table.
        drop = not keep_data and not cached

        def drop_batches(data: Path = data) -> None:
            say(f"removing {data} (written; the check needs only the oracle's result)")
            shutil.rmtree(data, ignore_errors=True)

        record = evaluate(
            cfg,
            "optimized",
            data=data,
            cores=cores,
            after_write=drop_batches if drop else None,
            drop_table_after_read=not keep_data,
            say=say,
        )
        rows.append(scale_row(cfg, record))
        say(json.dumps(rows[-1]))
        if on_row is not None:
            on_row(rows[-1])
        if not keep_data:
            if drop:
                shutil.rmtree(data, ignore_errors=True)
            made = set(oracle_dir.glob("*")) - oracles if oracle_dir.is_dir() else set()
            for path in made:
                path.unlink() if path.is_file() else shutil.rmtree(path, ignore_errors=True)
            drop_run(cfg, record)
    return rows


def newest_per_scale(rows: Sequence[ScaleRecord]) -> list[ScaleRecord]:
    """The last row recorded for each scale, in order of scale."""
    return newest_per(rows, lambda r: float(r.scale))


def render_table(rows: Sequence[ScaleRecord]) -> str:
    head = (
        "| scale | rows | write s | read s | rows/core/s | s per M rows (in-process) "
        "| peak RSS GB write / read / harness | stored GB | files/bucket | correct |"
    )
    lines = [
        "# Cost per row against scale (strategy optimized)",
        "",
        "Seconds per million rows: the jobs' in-process time (write + read, no JVM start).",
        "Peak RSS: the biggest single process of the write and of the read (JVM or Python",
        "worker), and the harness process that runs the oracle and the check.",
        "",
        head,
        "|" + "---|" * 10,
    ]

    def f(v, fmt):
        return "-" if v is None else format(v, fmt)

    def gb(v):
        return "-" if not v else f"{v / 1e9:.2f}"

    for r in rows:
        lines.append(
            f"| {r.scale:g} | {r.rows or 0:,} | {f(r.write_s, '.1f')} "
            f"| {f(r.read_s, '.1f')} | {f(r.rows_per_core_s, ',.0f')} "
            f"| {f(r.s_per_million_rows, '.2f')} "
            f"| {gb(r.write_peak_process_rss_bytes)} / "
            f"{gb(r.read_peak_process_rss_bytes)} / {gb(r.harness_peak_rss_bytes)} "
            f"| {f((r.stored_bytes or 0) / 1e9, '.2f')} | {f(r.files_per_bucket, '.1f')} "
            f"| {r.correct} |"
        )
    return "\n".join(lines) + "\n"


def chart(rows: Sequence[ScaleRecord], path: Path) -> None:
    import matplotlib  # deferred: matplotlib is slow to import; only the plots need it

    matplotlib.use("Agg")
    # deferred: matplotlib is slow to import; only the plots need it
    import matplotlib.pyplot as plt

    pts = [(r.scale, r.s_per_million_rows) for r in rows if r.s_per_million_rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label="optimized")
    at1 = [p[1] for p in pts if p[0] == 1]
    if at1:  # the goal: within 15% of scale 1's cost per row
        ax.axhline(at1[0] * 1.15, linestyle="--", color="grey", label="scale 1 + 15%")
        ax.legend()
    ax.set_xscale("log")
    ax.set_xlabel("scale (1 = 30M rows)")
    ax.set_ylabel("seconds per million rows (in-process)")
    ax.set_ylim(bottom=0)
    ax.set_title("Cost per row against scale: flat is the goal")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def scale_list(scales: list[float]) -> list[float]:
    """`--scales 0.1,1,3`: positive numbers, or a usage error naming the flag."""
    if not scales or any(s <= 0 for s in scales):
        raise UsageError(f"--scales: give positive scales, got {','.join(map(str, scales))!r}")
    return scales


class ScaleBench(Benchmark):
    name = "scale"
    stem = "scale"
    summary = "optimized at several scales: cost per row, memory, files per bucket"
    description = (
        "Run optimized at each scale and record write/read seconds, rows/core/s, seconds "
        "per million rows of in-process time, peak RSS per process, stored bytes and "
        "files per bucket; <out>/scale.md, scale.jsonl, scale.png (newest row per scale of "
        "every sitting). Unless --keep-data, a scale's batches are removed once written "
        "and its table, result and oracle's result before the next scale."
    )
    options = (
        Option(
            "--scales",
            "scales, comma-separated or repeated",
            float,
            default=[0.1, 1.0, 3.0, 10.0],
            many=True,
        ),
        CORES,
        WORK,
        Option("--keep-data", "keep each scale's batches, table and result", action="store_true"),
    )

    def check(self, options) -> None:
        super().check(options)
        scale_list(options.scales)

    def run(self, sitting: Sitting) -> bool:
        opts = sitting.options
        recorded: list[ScaleRecord] = []
        measure(
            sitting.config(STRATEGIES["optimized"]),
            scale_list(opts.scales),
            opts.cores,
            opts.keep_data,
            say=sitting.say,
            on_row=lambda row: recorded.extend(sitting.record(row)),
        )
        return all(r.correct for r in recorded)

    def render(self, records: Sequence[ScaleRecord]) -> str:
        return render_table(newest_per_scale(records))

    def extras(self, records: Sequence[ScaleRecord], folder: Path) -> None:
        chart(newest_per_scale(records), folder / "scale.png")
