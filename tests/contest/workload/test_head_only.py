"""Which strategies run which phases (no Spark), asked of each strategy's engine
(`contest.engines.abilities`), not of its name: every engine's read job takes history
reads (a read its format cannot answer is refused by the job, recorded as refused);
reads while upserts land run only where the reader names one version; what a strategy
has no form of (a peer's metadata merge, stock LakeSoul's compaction and vacuum) is
skipped, said why; a peer compacts and expires its own way."""

import pytest

from contest.config import load_config
from contest.data.workload import workload_settings
from contest.engines import Abilities, abilities
from contest.evaluation.strategies import STRATEGIES
from contest.workload.lanes import concurrent_reads_why, skipped_why, unsupported
from contest.workload.plan import Step

PEERS = ["delta-merge", "iceberg-mor", "hudi-mor", "paimon-agg", "hudi-merger"]
PLAIN = [Step("upsert", (0,)), Step("read"), Step("upsert", (1, 2)), Step("merge")]
HISTORY = [*PLAIN, Step("read", as_of=1), Step("changes", from_version=0, to_version=2)]


def _cfg(strategy: str):
    return load_config(preset=STRATEGIES[strategy])


@pytest.mark.parametrize("strategy", [*PEERS, "lakesoul-stock"])
def test_history_reads_go_to_the_job_and_concurrent_reads_are_skipped(strategy):
    cfg = _cfg(strategy)
    assert not abilities(cfg).while_writing
    assert unsupported(cfg, [*HISTORY, Step("compact"), Step("vacuum")]) is None
    # A concurrent step runs its upserts; only its reads are skipped, said why.
    assert unsupported(cfg, [Step("upsert", (0,)), Step("concurrent", (1, 2), reads=1)]) is None
    why = concurrent_reads_why(cfg)
    assert why is not None and "no read of one known version while upserts land" in why


@pytest.mark.parametrize("strategy", ["optimized", "baseline-mor", "baseline-cow"])
def test_the_harness_reads_any_version(strategy):
    cfg = _cfg(strategy)
    assert abilities(cfg) == Abilities(while_writing=True)
    assert unsupported(cfg, [*HISTORY, Step("concurrent", (3,), reads=1)]) is None
    for kind in ("merge", "compact", "vacuum"):
        assert skipped_why(cfg, kind) is None
    assert concurrent_reads_why(cfg) is None


def test_what_has_no_form_is_skipped_with_why():
    delta, stock = _cfg("delta-merge"), _cfg("lakesoul-stock")
    assert "no LakeSoul metadata to merge" in (skipped_why(delta, "merge") or "")
    assert skipped_why(delta, "compact") is None  # the format's own compaction runs
    assert skipped_why(delta, "vacuum") is None  # the format's own expiry runs
    assert skipped_why(stock, "merge") is None  # stock tables live in LakeSoul's metadata
    assert "write.engine=lakesoul-stock: no compaction" in (skipped_why(stock, "compact") or "")
    assert "`contest vacuum` is LakeSoul's" in (skipped_why(stock, "vacuum") or "")
    for cfg in (delta, stock):
        assert skipped_why(cfg, "upsert") is None and skipped_why(cfg, "read") is None


def test_a_strategy_refuses_an_operator_its_format_cannot_express_in_one_line():
    from contest.config import override

    wide = {
        "workload.columns": {"metric_01": "SumAll", "peak": "Max", "trail": "JoinedNotNullByComma"}
    }
    for strategy in ("optimized", "baseline-cow", "delta-merge", "paimon-agg", "hudi-merger"):
        assert unsupported(override(_cfg(strategy), wide), PLAIN) is None, strategy
    why = unsupported(override(_cfg("lakesoul-stock"), wide), PLAIN) or ""
    assert "merge operator Max (column peak)" in why and "lakesoul-stock" in why
    assert "\n" not in why
    arrow = override(_cfg("optimized"), {**wide, "read.merge": "arrow"})
    why = unsupported(arrow, PLAIN) or ""
    assert "JoinedNotNullByComma" in why and "read.merge=arrow" in why
    # the operators LakeSoul has run on lakesoul-stock, extra columns included
    plain = {"workload.columns": {"m": "SumAll", "l": "UseLastNotNullNorNullString"}}
    assert unsupported(override(_cfg("lakesoul-stock"), plain), PLAIN) is None


def test_every_strategy_runs_an_evolving_schema_its_history_reads_answered_one_by_one():
    """No strategy is refused the schema-evolution workload up front: each evolves its
    table by its own mechanism (stock LakeSoul: DBManager's updateTableSchema), and a
    read it cannot answer is refused by its read job, one by one
    (tests/contest/read/test_stock_history.py)."""
    workload = workload_settings("schema-evolution")
    for strategy in ("lakesoul-stock", "delta-merge", "optimized"):
        assert unsupported(load_config(preset=STRATEGIES[strategy], workload=workload)) is None
    assert unsupported(_cfg("lakesoul-stock"), PLAIN) is None  # the contest's columns
