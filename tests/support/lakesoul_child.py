"""Work on LakeSoul's JVM libraries for tests, in a child process of its own (the test
process's Spark session has no LakeSoul jars, and a process holds one JVM).

usage: python -m tests.support.lakesoul_child CONFIG.toml STEPS.json
STEPS: a list of {"do": ..., ...} (each may carry "workload": configuration keys of the
workload it is a step of):
- stock_write: data, table, [versions], [threads], [report]: the lakesoul-stock Write job
  (write.threads = threads, default 1 as the preset's; its report's JSON to `report`)
- stock_append: data, table, only, [out]: `--append --only` of the Write job; an error
  it raises is written to `out` (the test checks it), none to an empty file
- stock_read: table, out, [operators], [as_of], [from], [to], [error]: the lakesoul-stock
  Read job (result parquet) of the head, as of a version or of a range's changes; with
  `error`, a refusal it raises is written there (an empty file: none)
- lakesoul_table: data, table, writers: a table in the contest schema written as it is
  (no rewrites) by LakeSoul's writers, batch i by writers[i] ("jvm": NativeIOWriter,
  snappy; "pypi": the PyPI package's native writer, zstd), each committed by DBManager
  without a user-defined version
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from contest.config import load_config, override
from contest.data.batches import SCHEMA, discover
from contest.errors import HarnessError
from contest.infra.dbmanager import DBManager
from contest.infra.lakesoul_jvm import COORDINATES, session_config
from contest.infra.postgres import resolve_connection
from contest.infra.spark import build_session
from contest.read.stock import run_stock_read
from contest.write.cleanup import delete_table_files
from contest.write.stock import run_stock_write, write_native
from meta import catalog
from meta.tokens import ownership


def lakesoul_table(spark, conn, cfg, data: str, table_path: str, writers: list[str]) -> None:
    import pyarrow.parquet as pq
    from lakesoul._lib._writer import _NativeWriter

    name = Path(table_path).name
    for t in catalog.list_tables(conn):
        if t.name == name:
            delete_table_files(t.path, ownership(conn, t.table_id))
            catalog.drop_table(conn, t.name, t.namespace)
    db = DBManager(spark)
    uri = catalog.table_uri(table_path)
    buckets = cfg.table.hash_buckets
    table = db.create_table(name, "default", uri, SCHEMA, "uuid", buckets)
    for batch, writer in zip(discover(data), writers, strict=True):
        if writer == "jvm":
            rows = spark.read.parquet(str(batch.path))
            files = write_native(spark, rows, table, buckets, SCHEMA)
        else:
            w = _NativeWriter(
                path=uri, schema=SCHEMA, format="parquet", primary_keys=["uuid"],
                hash_bucket_num=buckets,
            )  # fmt: skip
            for rb in pq.read_table(batch.path).to_batches():
                w.write(rb)
            files = [(f.path, f.size) for f in w.finish()]
        db.commit(table.table_id, files, SCHEMA.names)


def main(config_file: str, steps_file: str) -> int:
    cfg = load_config(config_file)
    conn = resolve_connection(cfg)
    steps = json.loads(Path(steps_file).read_text())
    spark = build_session(session_config(cfg), "lakesoul-child", COORDINATES)
    try:
        for step in steps:
            scfg = override(
                cfg,
                {
                    "write.versions": step.get("versions") or "",
                    "write.threads": step.get("threads", 1),
                },
            )
            if step.get("workload"):
                scfg = override(scfg, step["workload"])
            if step.get("operators"):
                scfg = dataclasses.replace(
                    scfg, read=dataclasses.replace(scfg.read, operators=step["operators"])
                )
            if step["do"] == "stock_write":
                report = run_stock_write(
                    spark, conn, scfg, step["data"], step["table"], replace=True
                )
                if not report.ok:
                    raise SystemExit(report.summary())
                if step.get("report"):
                    Path(step["report"]).write_text(json.dumps(report.to_dict()))
            elif step["do"] == "stock_append":
                try:
                    report = run_stock_write(
                        spark, conn, scfg, step["data"], step["table"], append=True,
                        only=step["only"],
                    )  # fmt: skip
                    error = "" if report.ok else report.summary()
                except Exception as exc:  # the test reads what was refused
                    error = f"{type(exc).__name__}: {exc}"
                if step.get("out"):
                    Path(step["out"]).write_text(error)
                elif error:
                    raise SystemExit(error)
            elif step["do"] == "stock_read":
                try:
                    run_stock_read(
                        spark, conn, scfg, step["table"], step["out"], overwrite=True,
                        as_of=step.get("as_of"), from_version=step.get("from"),
                        to_version=step.get("to"),
                    )  # fmt: skip
                    error = ""
                except HarnessError as exc:  # the test reads what was refused
                    if not step.get("error"):
                        raise
                    error = str(exc)
                if step.get("error"):
                    Path(step["error"]).write_text(error)
            elif step["do"] == "lakesoul_table":
                lakesoul_table(spark, conn, scfg, step["data"], step["table"], step["writers"])
            else:
                raise SystemExit(f"unknown step {step['do']}")
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
