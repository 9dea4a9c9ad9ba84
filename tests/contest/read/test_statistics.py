"""read.statistics: which columns of the result's files carry min/max statistics."""

from __future__ import annotations

import pytest

from contest.read.statistics import statistics_setting


def test_each_setting_gives_pyarrows_write_statistics() -> None:
    assert statistics_setting("key", ["uuid"]) == ["uuid"]
    assert statistics_setting("key", ("a", "b")) == ["a", "b"]
    assert statistics_setting("all", ["uuid"]) is True
    assert statistics_setting("none", ["uuid"]) is False


def test_an_unknown_setting_is_refused() -> None:
    with pytest.raises(ValueError, match="statistics 'some'"):
        statistics_setting("some", ["uuid"])
