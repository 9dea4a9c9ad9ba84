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


def test_stored_key_words_group_the_rows_and_leave_the_result():
    """write.key_words: the words stored beside the keys are what merge_rows groups by
    (no parse), and they are not columns of the result."""
    import numpy as np

    from contest.data.uuid_keys import WORD_COLUMNS, uuid_words

    keys = [
        "00000000-0000-4000-8000-000000000002",
        "00000000-0000-4000-8000-000000000001",
        "00000000-0000-4000-8000-000000000002",
    ]
    t = pa.table({"k": keys, "s": pa.array([1, 2, 3], pa.int64())})
    hi, lo = uuid_words(t.column("k"))
    stored = t.append_column(WORD_COLUMNS[0], pa.array(hi.view(np.int64)))
    stored = stored.append_column(WORD_COLUMNS[1], pa.array(lo.view(np.int64)))
    parsed = merge_rows(t, ["k"], {"s": "SumAll"})
    assert merge_rows(stored, ["k"], {"s": "SumAll"}) == parsed
    assert parsed.column("s").to_pylist() == [2, 4]
    # Words that say every row is one key group them as one: the stored words decide.
    same = stored.set_column(3, WORD_COLUMNS[1], pa.array(np.zeros(3, np.int64)))
    same = same.set_column(2, WORD_COLUMNS[0], pa.array(np.zeros(3, np.int64)))
    one = merge_rows(same, ["k"], {"s": "SumAll"})
    assert one.column_names == ["k", "s"] and one.column("s").to_pylist() == [6]


@pytest.mark.parametrize("seed", [0, 1])
def test_columns_moved_as_dictionaries_merge_as_strings(monkeypatch, seed):
    """Every operator that picks a row, on string columns of few values with NULLs and
    "null" strings: the same result, and the same types, encoded or not."""
    import random

    import contest.data.dictionaries as dictionaries
    from contest.data.operators import OPERATORS

    rnd = random.Random(seed)
    picking = [op.name for op in OPERATORS.values() if op.picks_a_row and "string" in op.types]
    assert {"UseLast", "UseLastNotNull", "UseLastNotNullNorNullString"} <= set(picking)
    n = 4000
    columns = {"k": [f"k{rnd.randrange(900)}" for _ in range(n)]}
    for name in picking:
        columns[name] = [rnd.choice(["a", "b", "null", None, "c"]) for _ in range(n)]
    table = pa.table(columns)
    ops = {name: name for name in picking}
    results = []
    for ratio in (1, 10**9):  # every such column encoded; none
        monkeypatch.setattr(dictionaries, "DICTIONARY_RATIO", ratio)
        results.append(merge_rows(table, ["k"], ops))
    assert results[0].schema == results[1].schema == table.schema
    assert results[0].equals(results[1]) and results[0].num_rows == len(set(columns["k"]))
