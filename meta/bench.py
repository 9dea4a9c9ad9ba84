"""`contest meta bench`: replay on long histories, driver against distributed.

For each history size: generate it, merge it in the driver (timed, peak memory of
this process), reset it, merge it through Spark (timed), and check both gave the
same snapshot. Results go to results/meta_replay.{md,jsonl}.
"""

from __future__ import annotations

import json
import resource
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from meta import catalog
from meta.connection import PgConnection, connect
from meta.merge import merge_table
from meta.synthetic import generate_history


def _reset(conn: PgConnection, table_id: str) -> None:
    """Back to the generated history: drop merged versions and the checkpoint."""
    with connect(conn) as pgc, pgc.cursor() as cur:
        cur.execute("DELETE FROM partition_info WHERE table_id = %s AND version > 0", (table_id,))
        cur.execute("DELETE FROM contest_merge_checkpoint WHERE table_id = %s", (table_id,))
    pgc.close()


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_bench(
    spark,
    conn: PgConnection,
    work_dir: Path,
    sizes: Sequence[int],
    say: Callable[[str], None] = print,
) -> list[dict]:
    records = []
    root = work_dir / "meta-bench"
    for n in sizes:
        name = f"meta_bench_{n}"
        say(f"history of {n:,} commits")
        hist = generate_history(conn, name, root / name, n)
        rec = {"commits": n, "generate_s": round(hist.seconds, 3)}
        before = _rss_mb()
        t0 = time.perf_counter()
        driver = merge_table(conn, hist.table, force_path="driver")
        rec["driver_s"] = round(time.perf_counter() - t0, 3)
        rec["driver_peak_rss_mb"] = round(max(_rss_mb(), before), 1)
        order_driver = driver.partitions[0].order
        _reset(conn, hist.table.table_id)
        t0 = time.perf_counter()
        dist = merge_table(conn, hist.table, spark=spark, force_path="distributed")
        rec["distributed_s"] = round(time.perf_counter() - t0, 3)
        rec["identical"] = dist.partitions[0].order == order_driver
        t0 = time.perf_counter()
        again = merge_table(conn, hist.table, force_path="driver")
        rec["second_run_s"] = round(time.perf_counter() - t0, 3)
        rec["second_run_changed"] = again.changed
        say("  " + json.dumps(rec))
        records.append(rec)
        catalog.drop_table(conn, name)
        shutil.rmtree(root / name, ignore_errors=True)
    return records


def write_results(records: list[dict], out_dir: Path, cores: int) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / "meta_replay.jsonl").open("a") as fh:
        for r in records:
            fh.write(
                json.dumps(
                    {
                        **r,
                        "cores": cores,
                        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    }
                )
                + "\n"
            )
    lines = [
        "# Metadata replay: driver against distributed",
        "",
        "`contest meta bench`: a history of N commits arriving out of version order (jitter",
        "up to 64 places), merged into version order by `contest meta merge` in the driver",
        "(psycopg2, in-process sort) and through Spark (JDBC source, 8 parallel partitions,",
        f"distributed sort), on this machine ({cores} cores). Both paths must give the same",
        "snapshot. The second run is the idempotent no-op (only the checkpoint is compared).",
        "",
        "| commits | generate s | driver s | driver peak RSS MB | distributed s | identical "
        "| second run s |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in records:
        lines.append(
            f"| {r['commits']:,} | {r['generate_s']} | {r['driver_s']} "
            f"| {r['driver_peak_rss_mb']} | {r['distributed_s']} | {r['identical']} "
            f"| {r['second_run_s']} |"
        )
    out = out_dir / "meta_replay.md"
    out.write_text("\n".join(lines) + "\n")
    return out
