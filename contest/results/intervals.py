"""Confidence intervals for the comparison, without assuming a distribution: a median's
interval from order statistics (the sign test's, as benchstat does for a delta), and a
ratio between two strategies taken round by round within one sitting, so that each
round's machine state is shared by both sides.

Exact and deterministic (no resampling seed), so a page rendered again from the same
records is the same byte for byte. Few rounds give a wide interval, or none at 95%:
then the interval actually reached is reported with its own confidence, never widened
into a claim it cannot make.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

CONFIDENCE = 0.95


def binom_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2)."""
    if k < 0:
        return 0.0
    return sum(math.comb(n, i) for i in range(min(k, n) + 1)) / 2**n


@dataclass(frozen=True)
class Interval:
    """A median with a distribution-free interval around it."""

    median: float
    low: float
    high: float
    n: int
    confidence: float  # what the interval actually reaches (0 when n < 2)

    def excludes(self, value: float) -> bool:
        return self.n >= 2 and (self.low > value or self.high < value)


def median_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """The median and the narrowest symmetric order-statistic interval [x(k), x(n+1-k)]
    that covers the true median with at least `confidence`; with too few values for
    that, [min, max] and the confidence it does reach (n = 5: 93.75%)."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        raise ValueError("no values")
    med = statistics.median(xs)
    if n == 1:
        return Interval(med, xs[0], xs[0], 1, 0.0)
    best_k = 1  # [x(1), x(n)]: coverage 1 - 2 P(X <= 0)
    for k in range(1, n // 2 + 1):
        if 1 - 2 * binom_cdf(k - 1, n) >= confidence:
            best_k = k
        else:
            break
    reached = 1 - 2 * binom_cdf(best_k - 1, n)
    return Interval(med, xs[best_k - 1], xs[n - best_k], n, round(reached, 4))


@dataclass(frozen=True)
class Ratio:
    """How many times `a` is `b` (higher is better for `a`), from paired rounds."""

    a: str
    b: str
    interval: Interval

    @property
    def verdict(self) -> str:
        """`a>b`, `a<b`, `~` (the interval crosses 1) or `n=1` (no interval)."""
        if self.interval.n < 2:
            return "n=1"
        if self.interval.low > 1:
            return "a>b"
        if self.interval.high < 1:
            return "a<b"
        return "~"

    def text(self, digits: int = 2) -> str:
        """`2.90x [2.71-3.05] n=5 (94%)`, `~` appended when the interval crosses 1 and
        `single run` when there is one round."""
        iv = self.interval
        head = f"{iv.median:.{digits}f}x"
        if iv.n < 2:
            return f"{head} (single run)"
        tail = " ~" if self.verdict == "~" else ""
        return (
            f"{head} [{iv.low:.{digits}f}-{iv.high:.{digits}f}] n={iv.n} "
            f"({iv.confidence:.0%}){tail}"
        )


def paired_ratio(
    a: str, b: str, a_by_round: Mapping[int, float], b_by_round: Mapping[int, float]
) -> Ratio | None:
    """a's figure over b's in each round both ran (higher-is-better figures such as
    rows per core per second), and the interval of those per-round ratios; None when
    they share no round."""
    rounds = sorted(set(a_by_round) & set(b_by_round))
    ratios = [a_by_round[r] / b_by_round[r] for r in rounds if b_by_round[r] > 0]
    if not ratios:
        return None
    return Ratio(a, b, median_interval(ratios))


def geometric_mean(values: Sequence[float]) -> float:
    """ClickBench's summary of ratios: the mean of their logarithms, back."""
    if not values or any(v <= 0 for v in values):
        raise ValueError("geometric mean of non-positive or no values")
    return math.exp(sum(math.log(v) for v in values) / len(values))
