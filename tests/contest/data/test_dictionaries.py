"""Dictionary columns kept from the file to the writer: which schemas may drop
ARROW:schema, casts and concatenations that keep or decode dictionaries, and which
columns of a parquet file are read as dictionaries."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.data.dictionaries import (
    DICTIONARY_PAGE_MAX,
    cast_keeping_dictionaries,
    concat_tables,
    dictionary_columns,
    writes_without_arrow_schema,
)

DICT = pa.dictionary(pa.int32(), pa.string())


@pytest.mark.parametrize(
    ("field_type", "plain"),
    [
        (pa.string(), True),
        (pa.int32(), True),
        (pa.uint64(), True),
        (pa.float64(), True),
        (pa.bool_(), True),
        (pa.date32(), True),
        (DICT, True),
        (pa.large_string(), False),  # read back as string without the key
        (pa.timestamp("us", tz="Europe/Oslo"), False),  # the zone is lost
        (pa.float16(), False),
        (pa.list_(pa.int32()), False),
    ],
)
def test_which_schemas_read_back_the_same_without_arrow_schema(tmp_path, field_type, plain):
    schema = pa.schema([("k", pa.string()), ("v", field_type)])
    assert writes_without_arrow_schema(schema) is plain
    if plain and field_type != DICT:  # the claim, checked on a file
        table = schema.empty_table()
        pq.write_table(table, tmp_path / "f.parquet", store_schema=False)
        assert pq.read_table(tmp_path / "f.parquet").schema == schema
    assert not writes_without_arrow_schema(schema.with_metadata({"a": "b"}))
    assert not writes_without_arrow_schema(
        pa.schema([pa.field("k", pa.string(), metadata={"c": "d"})])
    )


def test_a_cast_keeps_dictionaries_of_the_fields_type_only():
    table = pa.table(
        {
            "s": pa.array(["x", None, "y"]).dictionary_encode(),
            "n": pa.array([1, 2, 3], pa.int32()),
            "b": pa.array(["1", "2", "3"]).dictionary_encode(),
        }
    )
    want = pa.schema([("s", pa.string()), ("n", pa.int64()), ("b", pa.binary())])
    out = cast_keeping_dictionaries(table, want)
    assert out.schema.types == [DICT, pa.int64(), pa.binary()]
    assert out.cast(want).to_pylist() == table.cast(want).to_pylist()


def test_concatenation_unifies_dictionaries_and_decodes_mixed_columns():
    a = pa.table({"s": pa.array(["x", "y"]).dictionary_encode(), "t": ["p", "q"]})
    b = pa.table({"s": pa.array(["z", None, "x"]).dictionary_encode(), "t": ["r", "s", "t"]})
    both = concat_tables([a, b])
    assert both.schema.field("s").type == DICT
    assert both.column("s").num_chunks == 1  # one dictionary: a writer stores it as it is
    assert both.column("s").to_pylist() == ["x", "y", "z", None, "x"]
    c = b.set_column(0, "s", pa.array(["u", "v", None]))  # plain in this part
    mixed = concat_tables([a, c])
    assert mixed.schema.field("s").type == pa.string()
    assert mixed.column("s").to_pylist() == ["x", "y", "u", "v", None]
    assert concat_tables([a]).to_pylist() == a.to_pylist()


def _file(path, n, **kwargs):
    table = pa.table(
        {
            "few": [["oslo", "lima", None][i % 3] for i in range(n)],
            "many": [f"value-{i:08d}" for i in range(n)],
            "n": list(range(n)),
        }
    )
    pq.write_table(table, path, **kwargs)
    return pq.read_metadata(path)


def test_only_small_dictionaries_are_read_as_dictionaries(tmp_path):
    meta = _file(tmp_path / "a.parquet", 5000, row_group_size=2000)
    assert meta.num_row_groups == 3
    assert dictionary_columns(meta, ["few", "many", "n", "absent"]) == ["few"]
    # A dictionary that grew past the writer's limit fell back to plain values: a
    # dictionary read would hash each; the one page written is over DICTIONARY_PAGE_MAX
    # (uncompressed; compressed, a third of it).
    for codec in ("none", "snappy"):
        big = _file(
            tmp_path / f"{codec}.parquet",
            40_000,
            dictionary_pagesize_limit=DICTIONARY_PAGE_MAX * 2,
            compression=codec,
        )
        many = big.row_group(0).column(1)
        page = many.data_page_offset - many.dictionary_page_offset
        assert many.has_dictionary_page and 2 * page < many.total_compressed_size
        assert (page > DICTIONARY_PAGE_MAX) == (codec == "none")
        assert dictionary_columns(big, ["few", "many"]) == ["few"]
    # Without dictionaries (use_dictionary off), nothing is read as one.
    plain = _file(tmp_path / "c.parquet", 5000, use_dictionary=False)
    assert dictionary_columns(plain, ["few"]) == []


def test_a_dictionary_read_gives_the_strings_back(tmp_path):
    _file(tmp_path / "a.parquet", 5000, row_group_size=2000)
    plain = pq.read_table(tmp_path / "a.parquet")
    pf = pq.ParquetFile(tmp_path / "a.parquet", read_dictionary=["few"])
    parts = [pa.Table.from_batches([b]) for b in pf.iter_batches(batch_size=1500)]
    assert parts[0].schema.field("few").type == DICT
    assert concat_tables(parts).cast(plain.schema).equals(plain)
