"""Distribution-free intervals (contest/results/intervals.py): the order statistics the
sign test gives, their coverage (checked by simulation against a known median), and
paired ratios within a sitting."""

from __future__ import annotations

import random

import pytest

from contest.results.intervals import (
    Interval,
    binom_cdf,
    geometric_mean,
    median_interval,
    paired_ratio,
)


def test_binomial_cdf_of_a_fair_coin() -> None:
    assert binom_cdf(0, 5) == pytest.approx(1 / 32)
    assert binom_cdf(5, 5) == pytest.approx(1.0)
    assert binom_cdf(2, 4) == pytest.approx(11 / 16)
    assert binom_cdf(-1, 4) == 0.0


def test_few_values_give_min_max_and_the_confidence_reached() -> None:
    iv = median_interval([3.0, 1.0, 2.0, 5.0, 4.0])
    assert (iv.median, iv.low, iv.high, iv.n) == (3.0, 1.0, 5.0, 5)
    assert iv.confidence == pytest.approx(1 - 2 / 32)  # 93.75%: not yet 95%
    assert median_interval([2.0, 4.0]).confidence == pytest.approx(0.5)
    one = median_interval([7.0])
    assert (one.low, one.high, one.n, one.confidence) == (7.0, 7.0, 1, 0.0)
    with pytest.raises(ValueError):
        median_interval([])


def test_more_values_narrow_the_interval_at_95_percent() -> None:
    xs = [float(i) for i in range(1, 21)]  # n = 20: [x(6), x(15)] reaches 95.9%
    iv = median_interval(xs)
    assert (iv.low, iv.high) == (6.0, 15.0)
    assert iv.confidence >= 0.95
    # One step narrower would fall below 95%.
    assert 1 - 2 * binom_cdf(6, 20) < 0.95


def test_coverage_holds_by_simulation() -> None:
    # Skewed data with a known median (exponential, rate 1: ln 2): the interval holds
    # it at least as often as it says (within simulation error).
    rng = random.Random(7)
    for n in (6, 9, 15):
        trials, hits, said = 2000, 0, 0.0
        for _ in range(trials):
            iv = median_interval([rng.expovariate(1.0) for _ in range(n)])
            hits += iv.low <= 0.6931 <= iv.high
            said = iv.confidence
        assert hits / trials >= said - 0.02


def test_paired_ratio_uses_shared_rounds_only() -> None:
    a = {1: 300.0, 2: 310.0, 3: 290.0, 4: 305.0, 5: 295.0, 6: 999.0}
    b = {1: 100.0, 2: 100.0, 3: 100.0, 4: 100.0, 5: 100.0}
    r = paired_ratio("optimized", "peer", a, b)
    assert r is not None
    assert r.interval.n == 5 and r.interval.median == pytest.approx(3.0)
    assert r.verdict == "a>b"
    assert r.text() == "3.00x [2.90-3.10] n=5 (94%)"
    assert paired_ratio("x", "y", {1: 1.0}, {2: 1.0}) is None


def test_a_ratio_crossing_one_or_from_one_round_says_so() -> None:
    r = paired_ratio("a", "b", {1: 1.1, 2: 0.9, 3: 1.05}, {1: 1.0, 2: 1.0, 3: 1.0})
    assert r is not None and r.verdict == "~" and r.text().endswith(" ~")
    single = paired_ratio("a", "b", {1: 2.0}, {1: 1.0})
    assert single is not None and single.verdict == "n=1"
    assert single.text() == "2.00x (single run)"
    assert not Interval(2.0, 2.0, 2.0, 1, 0.0).excludes(1.0)


def test_geometric_mean() -> None:
    assert geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    with pytest.raises(ValueError):
        geometric_mean([1.0, 0.0])
