"""The change-data rules as data: row kinds by spelling, the key's types, a config's rules."""

import pyarrow as pa
import pytest

from contest.config import load_config
from contest.data.changes import (
    DELETE,
    INSERT,
    ROW_KINDS,
    UPDATE,
    Changes,
    ChangeSupport,
    change_refusal,
    changes_of,
    key_type,
    row_kind,
)
from contest.errors import ConfigError, DataError


def test_each_spelling_names_every_kind_and_only_kinds():
    for values in ROW_KINDS.values():
        assert set(values.values()) == {INSERT, UPDATE, DELETE}
    assert Changes(op_column="op").delete_values == ("delete",)
    assert Changes(op_column="op", op_values="debezium").delete_values == ("d",)
    assert row_kind(Changes(op_column="op", op_values="debezium"), "r", "f") == INSERT


@pytest.mark.parametrize("value", ["upsert", "D", "", None])
def test_an_unknown_op_value_is_one_line_naming_the_file_and_the_value(value):
    with pytest.raises(DataError) as info:
        row_kind(Changes(op_column="op"), value, "base-3.parquet")
    text = str(info.value)
    assert "\n" not in text and text.startswith("base-3.parquet: op column 'op' holds ")
    assert ("NULL" if value is None else repr(value)) in text
    assert "insert, update, delete" in text


def test_an_unknown_spelling_is_refused():
    with pytest.raises(ConfigError, match="workload.op_values: 'x' is not one of lakesoul"):
        _ = Changes(op_values="x").spelling


@pytest.mark.parametrize(
    ("typ", "name"),
    [
        (pa.string(), "string"),
        (pa.large_string(), "string"),
        (pa.int32(), "int32"),
        (pa.int64(), "int64"),
        (pa.binary(16), "16-byte binary"),
        (pa.binary(), "16-byte binary"),
        (pa.binary(8), None),
        (pa.float64(), None),
        (pa.int16(), None),
    ],
)
def test_key_types(typ, name):
    found = key_type(typ)
    assert (found.name if found else None) == name
    if found is not None:
        assert found.checks_length == (name == "16-byte binary")


def test_a_configs_rules():
    cfg = load_config(
        overrides={
            "workload.key": "tenant,id",
            "workload.op_column": "op",
            "write.drop_null_keys": True,
        }
    )
    rules = changes_of(cfg)
    assert rules == Changes(("tenant", "id"), "op", "lakesoul", True)
    assert not rules.upserts_only and not rules.contest_key
    assert changes_of(load_config()) == Changes()


FULL = ChangeSupport(
    deletes="MERGE ... THEN DELETE",
    partial_columns="UPDATE SET of the batch's columns",
    absent_is_not_null=True,
    key_types=("string", "int64"),
    composite_keys=True,
)


def test_the_default_support_takes_the_contests_upserts_and_nothing_more():
    none = ChangeSupport()
    assert change_refusal(none, Changes(), {"uuid": "string"}, False, (), "x") is None
    deletes = change_refusal(none, Changes(op_column="op"), {"uuid": "string"}, False, (), "x")
    assert deletes is not None and "delete" in deletes and "'op'" in deletes
    two = change_refusal(none, Changes(key=("a", "b")), {"a": "string"}, False, (), "x")
    assert two is not None and "2 columns (a, b)" in two


@pytest.mark.parametrize(
    ("support", "rules", "keys", "partial", "nulls", "needle"),
    [
        (FULL, Changes(key=("k",)), {"k": "int32"}, False, (), "int32 column (k)"),
        (ChangeSupport(deletes="d"), Changes(), {"uuid": "string"}, True, (), "partial-update"),
        (
            ChangeSupport(partial_columns="p"),
            Changes(),
            {"uuid": "string"},
            True,
            ("name",),
            "NULL-overwriting operator of name",
        ),
    ],
)
def test_a_refusal_is_one_line_naming_the_mechanism(support, rules, keys, partial, nulls, needle):
    why = change_refusal(support, rules, keys, partial, nulls, "fmt")
    assert why is not None and why.startswith("fmt: ") and needle in why and "\n" not in why


def test_full_support_takes_deletes_partial_columns_and_a_composite_key():
    rules = Changes(key=("a", "b"), op_column="op")
    keys = {"a": "string", "b": "int64"}
    assert change_refusal(FULL, rules, keys, True, ("name",), "fmt") is None
