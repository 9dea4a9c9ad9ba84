"""LST-Bench's degradation rate and its split at compactions."""

import pytest

from contest.workload.metrics import (
    degradation_between_compactions,
    degradation_interval,
    degradation_overall,
    degradation_rate,
    relative_changes,
    segments,
)


def test_relative_changes_and_rate():
    assert relative_changes([2.0, 3.0, 3.0]) == [0.5, 0.0]
    assert degradation_rate([2.0, 3.0, 3.0]) == pytest.approx(0.25)
    assert degradation_rate([5.0]) is None
    assert relative_changes([0.0, 1.0, 2.0]) == [1.0]  # a zero start is skipped


def test_compaction_splits_the_series():
    kinds = ["upsert", "read", "upsert", "read", "compact", "read", "upsert", "read"]
    values = [None, 1.0, None, 2.0, None, 1.0, None, 1.5]
    assert segments(kinds, values) == [[1.0, 2.0], [1.0, 1.5]]
    # between compactions: (1 -> 2) +100%, (1 -> 1.5) +50%
    assert degradation_between_compactions(kinds, values) == pytest.approx(0.75)
    # overall also counts the compaction's gain, 2 -> 1 (-50%)
    assert degradation_overall(kinds, values) == pytest.approx((1.0 - 0.5 + 0.5) / 3)


def test_no_reads_no_rate():
    assert degradation_overall(["upsert"], [None]) is None
    assert degradation_between_compactions(["read", "compact", "read"], [1.0, None, 2.0]) is None


def test_the_rate_has_an_interval_from_the_runs_own_read_pairs():
    # Six reads, no compaction: changes +10%, +20%, 0%, +10%, -10% (n = 5).
    kinds = ["read"] * 6
    values = [1.0, 1.1, 1.32, 1.32, 1.452, 1.3068]
    iv = degradation_interval(kinds, values)
    assert iv is not None and iv.n == 5
    assert iv.median == pytest.approx(0.1)
    # n = 5 reaches [min, max] at 94%: the interval never claims more than it has.
    assert (iv.low, iv.high) == (pytest.approx(-0.1), pytest.approx(0.2))
    assert iv.confidence == pytest.approx(0.9375)
    # A compaction's gain is not a pair: two reads either side of it give none.
    assert degradation_interval(["read", "compact", "read"], [1.0, None, 0.5]) is None
