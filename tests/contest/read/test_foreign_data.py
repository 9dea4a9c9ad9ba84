"""A data folder this project's generator did not make (other key formats, batch sizes
and row groups, duplicate keys inside a batch, NULL values) goes through write, metadata
merge and the bounded-memory read unchanged, and equals the oracle."""

from __future__ import annotations

import dataclasses
import random

import pyarrow as pa
import pyarrow.parquet as pq

from contest.data.batches import SCHEMA
from tests.support.pipeline import merge_and_read, oracle, write


def _foreign_batches(folder, seed=11):
    rnd = random.Random(seed)
    folder.mkdir(parents=True)
    keys = [f"{i}" for i in range(300)] + [f"cliente-ñ-{i:x}" for i in range(200)] + ["", " "]
    for index, rows in enumerate([5000, 1, 0, 777, 2400]):
        batch = []
        for _ in range(rows):
            batch.append(
                {
                    "uuid": rnd.choice(keys),  # many duplicates inside the batch
                    "ip": rnd.choice(["10.0.0.1", None, "::1"]),
                    "hostname": rnd.choice(["h", "", None]),
                    "requests": rnd.choice([None, 0, 1, 2**33]),
                    "name": rnd.choice(["null", "NULL", None, "ann", ""]),
                    "city": rnd.choice([None, "x,y"]),
                    "job": "j" if rnd.random() < 0.5 else None,
                    "phonenum": rnd.choice(["1", "2", None]),
                }
            )
        table = pa.Table.from_pylist(batch, schema=SCHEMA)
        pq.write_table(
            table, folder / f"base-{index}.parquet", row_group_size=rnd.choice([100, 1000])
        )
    return folder


def test_foreign_folder_through_the_streamed_read(spark, pg, cfg, tmp_path):
    data = _foreign_batches(tmp_path / "data")
    small = dataclasses.replace(
        cfg, read=dataclasses.replace(cfg.read, merge_memory_bytes=1)
    )  # the smallest chunks: keys run across many of them
    _, table = write(spark, pg, small, data, tmp_path / "foreign")
    assert merge_and_read(spark, pg, small, table) == oracle(data)


def test_pyarrow_default_files_through_the_pipeline(spark, pg, cfg, tmp_path):
    """The second data shape of the benchmarks (workload.file_writer = pyarrow-defaults:
    snappy, dictionary on every column, statistics) gives the oracle's answer."""
    from contest.config import WorkloadConfig
    from contest.data.generator import generate

    w = dataclasses.replace(WorkloadConfig(), file_writer="pyarrow-defaults")
    data = tmp_path / "data"
    generate(data, 0.0005, 3, workload=w)
    _, table = write(spark, pg, cfg, data, tmp_path / "pyarrow_defaults")
    assert merge_and_read(spark, pg, cfg, table) == oracle(data)
