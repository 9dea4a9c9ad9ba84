"""A peer format's history methods called directly, in a child process holding
one Spark session with the format's jars (fixed when its JVM starts).

usage: python -m tests.support.history_child CONFIG.toml PLANS.json
PLANS: a list of {"format": peer.format, "data": folder, "table": folder, "out": folder,
       "reads": [READ, ...], "after_expire": [READ, ...]}, run one after another in the
       session of CONFIG's format (formats sharing its jars: hudi in hudi-merger's)
READ: {"as_of": version or "head"} or {"from": version or null, "to": version}
The batches are applied in version order, `evolve` before each after the first and
`commit_id` after each; then the reads; then the format's compaction and `expire`;
then the reads after it. Each read's rows go to OUT/<n>.parquet (or its one-line
refusal into the report). Prints one JSON line: {"evolved": {version: [...]},
"commits": {version: id}, "reads": [{"rows": path} or {"refused": line}, ...],
"expired": {...}, "seconds": {...}} per plan, as a list.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from contest.config import load_config, override
from contest.data.batches import discover
from contest.data.workload import schema_of_batch
from contest.errors import ReadError
from contest.infra.spark import build_session
from contest.peers import formats
from contest.peers.write import session_config


def read(fmt, spark, cfg, table: Path, commits: dict[int, str], spec: dict, out: Path) -> dict:
    try:
        if spec.get("as_of") == "head":  # the newest commit (after a compaction: its)
            df = fmt.read_as_of(spark, cfg, table, fmt.commit_id(spark, table))
        elif "as_of" in spec:
            df = fmt.read_as_of(spark, cfg, table, commits[spec["as_of"]])
        else:
            start = None if spec["from"] is None else commits[spec["from"]]
            df = fmt.read_changes(spark, cfg, table, start, commits[spec["to"]])
        df.write.mode("overwrite").parquet(str(out))
    except ReadError as exc:
        return {"refused": str(exc)}
    return {"rows": str(out)}


def run_plan(spark, cfg, plan: dict) -> dict:
    cfg = override(cfg, {"peer.format": plan["format"]})
    # The history methods are PeerFormat's (contest/peers/base.py).
    fmt: Any = formats.of(cfg)
    table, out = Path(plan["table"]), Path(plan["out"])
    report: dict = {"evolved": {}, "commits": {}, "reads": [], "seconds": {}}
    for key, value in fmt.runtime_conf(cfg, table).items():
        spark.conf.set(key, value)
    t0 = time.perf_counter()
    batches = discover(plan["data"], None, schema_of_batch(cfg.workload))
    for i, batch in enumerate(sorted(batches, key=lambda b: b.version)):
        if i:
            report["evolved"][batch.version] = fmt.evolve(spark, cfg, table, batch)
        fmt.apply_batch(spark, cfg, table, batch, first=i == 0)
        report["commits"][batch.version] = fmt.commit_id(spark, table)
    commits = {int(v): c for v, c in report["commits"].items()}
    report["seconds"]["write"] = round(time.perf_counter() - t0, 3)
    t0 = time.perf_counter()
    for n, spec in enumerate(plan["reads"]):
        report["reads"].append(read(fmt, spark, cfg, table, commits, spec, out / f"{n}"))
    report["seconds"]["reads"] = round(time.perf_counter() - t0, 3)
    if plan.get("after_expire"):
        t0 = time.perf_counter()
        fmt.compact(spark, cfg, table)
        report["expired"] = fmt.expire(spark, cfg, table)
        base = len(plan["reads"])
        for n, spec in enumerate(plan["after_expire"], base):
            report["reads"].append(read(fmt, spark, cfg, table, commits, spec, out / f"{n}"))
        report["seconds"]["expire"] = round(time.perf_counter() - t0, 3)
    return report


def main(config_file: str, plans_file: str) -> int:
    cfg = load_config(config_file)
    plans = json.loads(Path(plans_file).read_text())
    spark = build_session(session_config(cfg), "history-child", formats.coordinates(cfg))
    try:
        reports = [run_plan(spark, cfg, plan) for plan in plans]
    finally:
        spark.stop()
    print(json.dumps(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
