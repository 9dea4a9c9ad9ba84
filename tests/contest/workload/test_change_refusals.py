"""A workload's change data refused before a lane starts (`unsupported` with its data):
the multi-stream workload's files of some columns, which stock LakeSoul and the
copy-on-write baseline cannot take, each in one line; the harness's tables and the
formats that take them run."""

from __future__ import annotations

from contest.config import load_config
from contest.data.generator import generate
from contest.data.workload import workload_settings
from contest.evaluation.strategies import STRATEGIES
from contest.workload.lanes import unsupported


def test_multi_stream_batches_refused_by_the_strategies_that_lack_partial_columns(tmp_path):
    settings = workload_settings("multi-stream")
    base = load_config(overrides=settings)
    generate(tmp_path / "d", 0.0005, 7, workload=base.workload, progress=False)

    def why(strategy: str) -> str | None:
        cfg = load_config(preset=STRATEGIES[strategy], overrides=settings)
        return unsupported(cfg, (), tmp_path / "d", strategy)

    for strategy in ("optimized", "delta-merge", "paimon-agg"):
        assert why(strategy) is None, strategy
    stock = why("lakesoul-stock")
    assert stock is not None and stock.startswith(
        "lakesoul-stock: cannot take batches holding only some columns"
    )
    cow = why("baseline-cow")
    assert cow is not None and "\n" not in cow
