"""The TPC-H walk-through (docs/guides/tpch.md) at a tiny scale: `contest dataset tpch`
runs tpchgen-cli and writes lineitem with change batches, described as a workload (the
composite key, Debezium's op column, decimals and dates declared); optimized evaluates
it exactly; a `bench peers` sitting on it checks every run against the oracle and
discloses the files (names, sizes, SHA-256)."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data.tpch import UPDATED
from tests.support.config import cli

SCALE_FACTOR = "0.001"  # 6,000 lines


@pytest.fixture(scope="module")
def tpch(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("tpch")
    data, wl = root / "tpch", root / "tpch.toml"
    argv = ["dataset", "tpch", str(data), "--scale-factor", SCALE_FACTOR, "--batches", "3"]
    assert main([*argv, "--out", str(wl)]) == 0
    return data, wl


def test_the_dataset_is_lineitem_and_its_changes_described(tpch):
    data, wl = tpch
    assert sorted(p.name for p in data.iterdir()) == [f"base-{i}.parquet" for i in range(4)]
    base = pq.read_schema(data / "base-0.parquet")
    assert base.field("l_quantity").type == pa.decimal128(15, 2)
    assert base.field("l_shipdate").type == pa.date32()
    w = tomllib.loads(wl.read_text())["workload"]
    assert w["key"] == ["l_orderkey", "l_linenumber"]
    assert (w["op_column"], w["op_values"]) == ("op", "debezium")
    assert w["types"]["l_quantity"] == "decimal(15,2)" and w["types"]["l_shipdate"] == "date"
    assert w["columns"]["l_comment"] == "UseLast"
    changes = pq.read_table(data / "base-1.parquet")
    assert set(changes.column("op").to_pylist()) == {"u", "d"}
    assert changes.column_names == ["l_orderkey", "l_linenumber", "op", *UPDATED]


def test_a_second_run_into_the_same_folder_is_refused_and_writes_nothing(tpch, capsys):
    data, _ = tpch
    before = sorted((p.name, p.stat().st_mtime_ns) for p in data.iterdir())
    assert main(["dataset", "tpch", str(data), "--scale-factor", SCALE_FACTOR]) != 0
    assert "not empty" in capsys.readouterr().err.strip().splitlines()[-1]
    assert sorted((p.name, p.stat().st_mtime_ns) for p in data.iterdir()) == before


@pytest.mark.slow  # two spark-submit jobs
@pytest.mark.spark
@pytest.mark.pg
def test_optimized_evaluates_the_walk_through_exactly(cfg, pg, tpch, tmp_path, capsys):
    data, wl = tpch
    args = cli(cfg, "evaluate", "--strategy", "optimized", "--data", str(data))
    code = main([*args, "--workload", str(wl), "--work", str(tmp_path), "--results", "-"])
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["correct"], err[-3000:]
    result = pq.read_table(rec["result_dir"])
    assert result.schema.field("l_extendedprice").type == pa.decimal128(15, 2)
    assert result.schema.field("l_linenumber").type == pa.int32()


@pytest.mark.slow  # a sitting: every strategy's write and read jobs, and the oracle
@pytest.mark.spark
@pytest.mark.pg
def test_the_walk_through_sitting(cfg, pg, tpch, tmp_path, capsys):
    """`contest bench peers --data ./tpch --workload tpch.toml` as the page runs it, at
    a tiny scale and one round: every run exact; the disclosure names each file with
    its size and SHA-256."""
    data, wl = tpch
    results = tmp_path / "results"
    args = cli(cfg, "bench", "peers", "--data", str(data), "--workload", str(wl))
    argv = [*args, "--strategies", "optimized,delta-merge", "--rounds", "1", "--cores", "2"]
    code = main([*argv, "--work", str(tmp_path / "work"), "--results", str(results)])
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    runs = [json.loads(line) for line in (results / "peer_sittings.jsonl").read_text().splitlines()]
    assert {r["strategy"] for r in runs} == {"optimized", "delta-merge"}
    assert all(r["correct"] for r in runs), [r.get("error") for r in runs]
    page = next((results / "disclosure").glob("*.md")).read_text()
    base0 = (data / "base-0.parquet").read_bytes()
    assert hashlib.sha256(base0).hexdigest() in page and "base-3.parquet" in page
