"""Every peer format merges every operator of the registry as the oracle does: tiny
batches with NULLs, "null" strings and keys repeated inside a batch, one column per
operator, written and read back by the format (real Spark, the format's own library,
one child JVM per format: its write and read in one process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contest.config import WorkloadConfig
from contest.data import operators as registry
from contest.data.batches import discover
from contest.data.checker import compare
from contest.data.generator import generate
from contest.data.oracle import expected_result
from contest.data.workload import contract_operators, workload_schema
from tests.support.peer_child import run_script

pytestmark = [pytest.mark.spark]

COLUMNS = {f"c_{name.lower()}": name for name in registry.OPERATOR_NAMES}
WORKLOAD = {
    "name": "operators",
    "batches": 3,
    "first_rows": 400,
    "batch_rows": 300,
    "update_share": 0.6,
    "repeat_share": 0.1,
    "null_share": 0.2,
    "null_string_share": 0.3,
    "columns": COLUMNS,
}

# One process: the write, then the read (PySpark keeps its JVM between the two sessions).
SCRIPT = """
import json, sys
from contest.config import load_config
from contest.evaluation.strategies import STRATEGIES
from contest.peers.read import run_peer_read
from contest.peers.write import run_peer_write

strategy, data, table, out, workload = sys.argv[1:6]
overrides = {f"workload.{k}": v for k, v in json.loads(workload).items()}
overrides["spark.shuffle_partitions"] = 2
cfg = load_config(preset=STRATEGIES[strategy], overrides=overrides)
report = run_peer_write(cfg, data, table)
assert report.ok, report.summary()
print(json.dumps(run_peer_read(cfg, table, out, False)))
"""


@pytest.fixture(scope="module")
def operator_data(tmp_path_factory):
    """The batches and the oracle's expected result."""
    folder = tmp_path_factory.mktemp("operators")
    w = WorkloadConfig(**{**WORKLOAD, "columns": dict(COLUMNS)})
    generate(folder / "data", 1.0, 5, workload=w)
    batches = discover(folder / "data", None, workload_schema(w))
    expected = folder / "expected.parquet"
    expected_result(batches, expected, operators=contract_operators(w))
    return folder / "data", expected


@pytest.mark.parametrize(
    "strategy",
    [
        "paimon-agg",
        "hudi-merger",
        # delta-merge and iceberg-mor: in test_peer_history.py (every operator's column
        # beside the evolving ones, in the child JVM that checks their history).
        pytest.param("hudi-mor", marks=pytest.mark.slow),
    ],
)
def test_the_format_merges_every_operator_as_the_oracle(tmp_path, operator_data, strategy):
    data, expected = operator_data
    out = tmp_path / "result"
    args = [strategy, str(data), str(tmp_path / "table"), str(out), json.dumps(WORKLOAD)]
    run_script(SCRIPT, args, tmp_path, timeout=600)
    check = compare(out, expected)
    assert check.ok, check.render()
    assert Path(out).is_dir()
