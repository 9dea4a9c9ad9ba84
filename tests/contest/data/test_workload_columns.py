"""A workload's extra columns are checked when the config is loaded, by the data layer's
registered check (the config module cannot import the data layer)."""

import pytest

from contest.config import load_config
from contest.data.workload import OPERATOR_NAMES
from contest.errors import ConfigError
from contest.read.operators import OPERATORS


def test_the_data_layer_names_the_operators_the_read_implements():
    assert set(OPERATOR_NAMES) == set(OPERATORS)


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"Score": "SumAll"}, "workload.columns.Score: a column name is lower-case"),
        ({"requests": "SumAll"}, "workload.columns.requests: a contest column already"),
        ({"score": "Median"}, "workload.columns.score: 'Median' is not one of"),
    ],
)
def test_bad_extra_columns_are_refused_naming_the_key(columns, message):
    with pytest.raises(ConfigError, match=message):
        load_config(overrides={"workload.columns": columns})


def test_good_extra_columns_load():
    cfg = load_config(overrides={"workload.columns": {"score": "SumAll", "tag": "UseLast"}})
    assert cfg.workload.columns == {"score": "SumAll", "tag": "UseLast"}
