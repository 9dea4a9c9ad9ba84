import pyarrow as pa
import pytest

from contest.read.operators import CONTEST_OPERATORS, MergeOperatorError, merge_rows


def test_each_operator_on_one_key():
    t = pa.table(
        {
            "k": ["a", "a", "a", "b"],
            "s": pa.array([1, None, 2**40, None], pa.int64()),
            "last": ["x", None, None, "y"],
            "nn": ["x", "y", None, None],
            "name": ["n1", "null", None, "null"],
        }
    )
    out = merge_rows(
        t, ["k"], {"s": "SumAll", "nn": "UseLastNotNull", "name": "UseLastNotNullNorNullString"}
    )
    assert out.to_pylist() == [
        {"k": "a", "s": 2**40 + 1, "last": None, "nn": "y", "name": "n1"},
        {"k": "b", "s": None, "last": "y", "nn": None, "name": None},
    ]


def test_null_like_strings_are_values():
    t = pa.table({"k": ["a", "a", "b", "b"], "name": ["x", "NULL", "x", ""]})
    out = merge_rows(t, ["k"], {"name": "UseLastNotNullNorNullString"})
    assert out.column("name").to_pylist() == ["NULL", ""]


def test_operator_errors_name_the_column():
    t = pa.table({"k": ["a"], "v": ["x"]})
    with pytest.raises(MergeOperatorError, match="'v'.*numeric"):
        merge_rows(t, ["k"], {"v": "SumAll"})
    with pytest.raises(MergeOperatorError, match="'w'"):
        merge_rows(t, ["k"], {"w": "UseLast"})
    with pytest.raises(MergeOperatorError, match="unknown merge operator"):
        merge_rows(t, ["k"], {"v": "Bogus"})


def test_contest_operators_cover_every_non_key_column():
    assert set(CONTEST_OPERATORS) == {
        "ip",
        "hostname",
        "requests",
        "name",
        "city",
        "job",
        "phonenum",
    }
