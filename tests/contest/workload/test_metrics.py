"""LST-Bench's degradation rate and its split at compactions."""

import pytest

from contest.workload.metrics import (
    degradation_between_compactions,
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
