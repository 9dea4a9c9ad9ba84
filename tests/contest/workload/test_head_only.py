"""Which strategies run which phases (no Spark): a peer's and stock LakeSoul's reads take
the head only, so a plan reading as of a version is refused for them in one line naming
the step, and reads while upserts land are skipped; what they have no form of (a peer's
metadata merge, stock LakeSoul's compaction) is skipped, said why; a peer compacts its own
way."""

import pytest

from contest.config import load_config
from contest.evaluation.strategies import STRATEGIES
from contest.workload.plan import Step
from contest.workload.runner import concurrent_reads_why, head_only, skipped_why, unsupported

HEADS = ["delta-merge", "iceberg-mor", "hudi-mor", "paimon-agg", "hudi-merger", "lakesoul-stock"]
PLAIN = [Step("upsert", (0,)), Step("read"), Step("upsert", (1, 2)), Step("merge")]


def _cfg(strategy: str):
    return load_config(preset=STRATEGIES[strategy])


@pytest.mark.parametrize("strategy", HEADS)
def test_head_reads_run_and_versioned_reads_are_refused(strategy):
    cfg = _cfg(strategy)
    assert head_only(cfg)
    assert unsupported(cfg, [*PLAIN, Step("compact"), Step("read")]) is None
    why = unsupported(cfg, [*PLAIN, Step("read", as_of=1)])
    assert why is not None and "reads the head only: step 5 (read as of 1)" in why
    assert "\n" not in why
    # A concurrent step runs its upserts; only its reads are skipped, said why.
    assert unsupported(cfg, [Step("upsert", (0,)), Step("concurrent", (1, 2), reads=1)]) is None
    why = concurrent_reads_why(cfg)
    assert why is not None and "no read of one known version while upserts land" in why


@pytest.mark.parametrize("strategy", ["optimized", "baseline-mor", "baseline-cow"])
def test_the_harness_reads_any_version(strategy):
    cfg = _cfg(strategy)
    assert not head_only(cfg)
    assert (
        unsupported(cfg, [*PLAIN, Step("read", as_of=1), Step("concurrent", (3,), reads=1)]) is None
    )
    assert skipped_why(cfg, "merge") is None and skipped_why(cfg, "compact") is None
    assert concurrent_reads_why(cfg) is None


def test_what_has_no_form_is_skipped_with_why():
    delta, stock = _cfg("delta-merge"), _cfg("lakesoul-stock")
    assert "no LakeSoul metadata to merge" in (skipped_why(delta, "merge") or "")
    assert skipped_why(delta, "compact") is None  # the format's own compaction runs
    assert skipped_why(stock, "merge") is None  # stock tables live in LakeSoul's metadata
    assert "write.engine=lakesoul-stock: no compaction" in (skipped_why(stock, "compact") or "")
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
