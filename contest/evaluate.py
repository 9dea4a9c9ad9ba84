"""`contest evaluate`: the contest's procedure on this machine, for one strategy.

1 data (given, or generated and cached), 2 a clean table and metadata, 3 the Write
job timed as a whole spark-submit process, 4 the stored-size rule, 5 the metadata
merge, then the Read job timed as a whole process, 6 the oracle's check,
7 rows / (cores x (write s + read s)).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from contest.config import PROJECT_DIR, Config, as_dict, to_toml
from contest.data import BASE0_ROWS, BATCHES, UPDATE_BATCH_ROWS, discover

SCALE1_ROWS = BASE0_ROWS + (BATCHES - 1) * UPDATE_BATCH_ROWS
SIZE_RULE_BYTES = 2_000_000_000  # the contest's stored-size floor at scale 1
DEFAULT_SCALE = 0.1

# Each strategy is a preset over the defaults (a config file and flags still win).
STRATEGIES: dict[str, dict[str, object]] = {
    # This project: concurrent versioned upserts, big-file-only repartition,
    # uncompressed files, metadata merge, merge operators on read, each bucket's
    # result written by its merge task.
    "optimized": {"write.mode": "mor"},
    # The contest example's merge-on-read path: sequential upserts with the
    # connector's defaults (every batch shuffled into the buckets; the native
    # writer's codec, zstd), and the result written by Spark (snappy, its default).
    "baseline-mor": {"write.mode": "mor", "write.threads": 1, "write.big_file_bytes": 1,
                     "write.repartition": 4, "write.codec": "zstd", "write.reader": "spark",
                     "read.writer": "spark", "read.codec": "snappy"},
    # The contest example's main baseline: copy-on-write, a full outer join and an
    # overwrite per batch; read as baseline-mor reads.
    "baseline-cow": {"write.mode": "cow", "write.threads": 1, "write.codec": "zstd",
                     "write.reader": "spark", "read.writer": "spark", "read.codec": "snappy"},
}


def scale_of(rows: int) -> float:
    return rows / SCALE1_ROWS


def cached_data(cfg: Config, scale: float, seed: int, say: Callable[[str], None]) -> Path:
    from contest.generator import generate

    folder = cfg.work_path / "data" / f"scale-{scale:g}-seed-{seed}"
    marker = folder / ".complete"
    if not marker.exists():
        say(f"generating scale {scale:g} data into {folder}")
        generate(folder, scale, seed)
        marker.write_text("ok\n")
    return folder


def cached_expected(cfg: Config, data: Path, versions: str,
                    say: Callable[[str], None]) -> Path:
    from contest.oracle import expected_result

    batches = discover(data, versions or None)
    ident = json.dumps([str(data.resolve()), versions] +
                       [[b.path.name, b.bytes, b.path.stat().st_mtime_ns] for b in batches])
    key = hashlib.sha256(ident.encode()).hexdigest()[:16]
    out = cfg.work_path / "oracle" / f"{key}.parquet"
    if not out.exists():
        say("computing the expected result (oracle)")
        expected_result(batches, out)
    return out


def spark_submit(cfg: Config, job: str, cores: int, config_file: Path, args: list[str]) -> list:
    exe = Path(sys.executable).parent / "spark-submit"
    return [str(exe), "--master", f"local[{cores}]", "--driver-memory",
            cfg.spark.driver_memory, str(PROJECT_DIR / "jobs" / job),
            "--config", str(config_file), *args]


def child_env(cfg: Config) -> dict[str, str]:
    env = dict(os.environ)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    if cfg.pg.external:
        env["LAKESOUL_PG_PASSWORD"] = cfg.pg.password
    return env


def environment() -> dict:
    import pyarrow
    import pyspark

    try:
        from importlib.metadata import version

        lakesoul = version("lakesoul")
    except Exception:
        lakesoul = "unknown"
    try:
        commit = subprocess.run(["git", "-C", str(PROJECT_DIR), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    mem = 0
    try:
        with open("/proc/meminfo") as fh:
            mem = int(fh.readline().split()[1]) * 1024
    except OSError:
        pass
    return {"spark": pyspark.__version__, "lakesoul_python": lakesoul,
            "pyarrow": pyarrow.__version__, "python": platform.python_version(),
            "machine_cores": os.cpu_count(), "machine_memory_bytes": mem,
            "git_commit": commit}


def evaluate(cfg: Config, strategy: str, *, data: Path | None = None, scale: float | None = None,
             seed: int = 2022, cores: int | None = None, say: Callable[[str], None] = print,
             ) -> dict:
    """Run the procedure; returns the record (correct=False with the failing phase named)."""
    from contest import catalog
    from contest.checker import compare
    from contest.pg import check_reachable, resolve_connection
    from meta.merge import merge_table

    cores = cores or os.cpu_count() or 1
    record: dict = {"strategy": strategy, "cores": cores, "correct": False, "size_ok": False,
                    "write_s": None, "read_s": None, "merge_s": None, "failed_phase": None}
    eval_dir = cfg.work_path / "eval"
    table_name = f"ccf_{strategy.replace('-', '_')}"
    table_dir = eval_dir / "tables" / table_name
    result_dir = eval_dir / "result" / "ccf"
    logs = eval_dir / "logs"
    record["result_dir"] = str(result_dir)
    started = time.perf_counter()

    def phase(name: str) -> None:
        record["failed_phase"] = name
        say(f"[{time.perf_counter() - started:7.1f}s] {strategy}: {name}")

    try:
        phase("data")
        if data is None:
            data = cached_data(cfg, scale if scale is not None else DEFAULT_SCALE, seed, say)
        batches = discover(data, cfg.write.versions or None)
        rows = sum(b.rows for b in batches)
        record.update(data=str(data), rows=rows, scale=round(scale_of(rows), 6))
        expected = cached_expected(cfg, data, cfg.write.versions, say)

        phase("clean")
        conn = resolve_connection(cfg)
        check_reachable(conn)
        catalog.drop_table(conn, table_name, cfg.table.namespace)
        shutil.rmtree(table_dir, ignore_errors=True)
        shutil.rmtree(result_dir, ignore_errors=True)
        eval_dir.mkdir(parents=True, exist_ok=True)
        config_file = eval_dir / f"{strategy}.toml"
        config_file.write_text(to_toml(cfg))
        env = child_env(cfg)

        phase(f"write ({rows:,} rows, spark-submit local[{cores}])")
        w = run_job(cfg, "Write.py", cores, config_file, env, logs / f"{strategy}-write.log",
                    ["--data", str(data), "--table", str(table_dir), "--name", table_name])
        record.update(write_s=round(w.seconds, 3), write_peak_rss_bytes=w.peak_rss_bytes,
                      write_peak_process_rss_bytes=w.peak_process_rss_bytes)
        if not w.ok:
            raise PhaseError(f"write job exited {w.returncode}: {w.last_line} (log {w.log})")

        phase("size check")
        table = catalog.get_table(conn, table_name, cfg.table.namespace)
        _, commits = catalog.head_snapshot(conn, table)
        stored = sum(f.size for c in commits for f in c.files)
        floor = int(SIZE_RULE_BYTES * scale_of(rows))
        record.update(stored_bytes=stored, size_floor_bytes=floor, size_ok=stored > floor)

        phase("metadata merge")
        t0 = time.perf_counter()
        merge_table(conn, table)
        record["merge_s"] = round(time.perf_counter() - t0, 4)

        phase("read (spark-submit)")
        r = run_job(cfg, "Read.py", cores, config_file, env, logs / f"{strategy}-read.log",
                    ["--table", table_name, "--out", str(result_dir)])
        record.update(read_s=round(r.seconds, 3), read_peak_rss_bytes=r.peak_rss_bytes,
                      read_peak_process_rss_bytes=r.peak_process_rss_bytes)
        if not r.ok:
            raise PhaseError(f"read job exited {r.returncode}: {r.last_line} (log {r.log})")

        phase("check (oracle)")
        report = compare(result_dir, expected)
        record["check"] = report.render().splitlines()[0]
        record["correct"] = report.ok
        if not report.ok:
            raise PhaseError(report.render())
        record["failed_phase"] = None
    except PhaseError as exc:
        record["error"] = str(exc)
    except Exception as exc:  # any failure still yields the record, naming the phase
        record["error"] = f"{exc.__class__.__name__}: {exc}"
    total = (record["write_s"] or 0) + (record["read_s"] or 0)
    n = record.get("rows") or 0
    record["rows_per_core_s"] = round(n / (cores * total), 1) if total and record["correct"] \
        else None
    record["write_rows_per_core_s"] = round(n / (cores * record["write_s"]), 1) \
        if record["write_s"] else None
    record["read_rows_per_core_s"] = round(n / (cores * record["read_s"]), 1) \
        if record["read_s"] else None
    record["total_s"] = round(time.perf_counter() - started, 3)
    say(f"[{record['total_s']:7.1f}s] {strategy}: "
        + ("correct" if record["correct"] else f"FAILED in {record['failed_phase']}"))
    record.update(environment=environment(), config=as_dict(cfg),
                  when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return record


class PhaseError(RuntimeError):
    pass


def run_job(cfg: Config, job: str, cores: int, config_file: Path, env: dict, log: Path,
            args: list[str]):
    from contest.proc import run_timed

    return run_timed(spark_submit(cfg, job, cores, config_file, args), log, env=env,
                     cwd=PROJECT_DIR)


def append_record(path: Path, record: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        fh.write(json.dumps(record, sort_keys=True) + "\n")
