"""The cost model's fit and crossovers, on lines whose answer is known."""

import pytest

from contest.benchmarks.costs.model import Crossover, crossover, fit, medians


def test_a_line_is_found_again_from_its_points():
    points = [(r, 4.0 + 2.5 * r / 1e6) for r in (30_000, 300_000, 3_000_000, 30_000_000)]
    line = fit(points)
    assert line is not None
    assert line.fixed_s == pytest.approx(4.0) and line.per_million_s == pytest.approx(2.5)
    assert line.error == pytest.approx(0.0, abs=1e-3) and line.points == 4
    assert line.seconds(10_000_000) == pytest.approx(29.0)


def test_the_fit_weighs_relative_misses_so_small_scales_set_the_fixed_part():
    # A 10% miss at the largest point moves the fixed part little.
    points = [(30_000, 8.0), (300_000, 8.5), (3_000_000, 14.0), (30_000_000, 70.0)]
    line = fit(points)
    assert line is not None and 7.5 < line.fixed_s < 8.5
    assert line.error < 0.2


def test_no_line_from_one_size():
    assert fit([(1000, 2.0), (1000, 3.0)]) is None
    assert fit([]) is None


def test_medians_per_row_count():
    assert medians([(10, 3.0), (10, 1.0), (10, 2.0), (5, 4.0)]) == [(5, 4.0), (10, 2.0)]


def test_crossovers_each_way():
    def line(fixed, slope):
        out = fit([(1e6, fixed + slope), (2e6, fixed + 2 * slope)])
        assert out is not None
        return out

    slow_start_fast_rows, fast_start_slow_rows = line(10.0, 1.0), line(2.0, 3.0)
    # 10 + r = 2 + 3r at r = 4 (million rows): the slow starter wins from there.
    win = crossover(slow_start_fast_rows, fast_start_slow_rows)
    assert win == Crossover(pytest.approx(4e6), True)
    assert win.says(30e6) == "from scale 0.133"
    assert crossover(fast_start_slow_rows, slow_start_fast_rows).says(30e6) == "below scale 0.133"
    assert crossover(line(1.0, 1.0), line(2.0, 3.0)).says(30e6) == "at every scale"
    assert crossover(line(3.0, 4.0), line(2.0, 3.0)).says(30e6) == "at no scale"
    assert crossover(line(2.0, 3.0), line(2.0, 3.0)) is None
