"""The oracle on a workload's extra columns: each operator by hand, and a generated wide
data set against the pipeline's own merge (two implementations that share no code)."""

import pyarrow as pa
import pyarrow.parquet as pq

from contest.config import WorkloadConfig
from contest.data.batches import discover
from contest.data.generator import generate
from contest.data.oracle import expected_result, expected_rows
from contest.data.workload import contract_operators, workload_schema
from contest.read.operators import merge_rows

EXTRA = {
    "m": "SumAll",
    "last": "UseLast",
    "nn": "UseLastNotNull",
    "lbl": "UseLastNotNullNorNullString",
}
W = WorkloadConfig(columns=EXTRA)


def _row(uuid, requests, m, last, nn, lbl):
    base = dict.fromkeys(["ip", "hostname", "name", "city", "job", "phonenum"], "x")
    return {"uuid": uuid, **base, "requests": requests, "m": m, "last": last, "nn": nn, "lbl": lbl}


def test_each_operator_on_an_extra_column(tmp_path):
    schema = workload_schema(W)
    batches = [
        [_row("k", 1, 5, "a", "a", "a"), _row("j", None, None, None, None, None)],
        [_row("k", 2, None, None, None, "null"), _row("j", None, None, "b", None, "null")],
    ]
    for i, rows in enumerate(batches):
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / f"base-{i}.parquet")
    found = discover(tmp_path, schema=schema)
    got = {r["uuid"]: r for r in expected_rows(found, contract_operators(W))}
    assert {c: got["k"][c] for c in EXTRA} == {"m": 5, "last": None, "nn": "a", "lbl": "a"}
    assert {c: got["j"][c] for c in EXTRA} == {"m": None, "last": "b", "nn": None, "lbl": None}
    assert got["k"]["requests"] == 3 and list(got["k"])[-4:] == list(EXTRA)


def test_wide_generated_data_agrees_with_the_pipelines_merge(tmp_path):
    w = WorkloadConfig(
        batches=4,
        first_rows=3000,
        batch_rows=1000,
        update_share=0.9,
        repeat_share=0.05,
        distribution="zipf",
        null_share=0.2,
        columns=EXTRA,
    )
    report = generate(tmp_path / "data", 1, 6, progress=False, workload=w)
    batches = discover(tmp_path / "data", schema=workload_schema(w))
    ops = contract_operators(w)
    oracle = pq.read_table(
        expected_result(batches, tmp_path / "e.parquet", operators=ops).path
    ).to_pylist()
    merged = merge_rows(pa.concat_tables(pq.read_table(f) for f in report.files), ["uuid"], ops)
    assert oracle == sorted(merged.to_pylist(), key=lambda r: r["uuid"])
    assert len(oracle) == report.distinct_keys
