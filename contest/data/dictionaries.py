"""String columns of few distinct values as dictionaries, so that reordering rows (the
write's sort, the read's pick of each key's row) moves integers, not strings, and a
parquet writer stores their indices as they are instead of hashing every string again.
Files stay what they were: parquet's own types say string either way, and a file is
written without pyarrow's stored schema (which would say dictionary) only when its
types need no such key to read back the same (writes_without_arrow_schema); else the
caller casts back first."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

# A string column whose first rows hold at most one distinct value in this many is
# encoded: the contest's hostname, name, city and job. Gathering 5M such strings took
# ~0.3 s a column, encoding them ~0.07 s and gathering their indices a tenth of that;
# the cast back ~0.06 s.
DICTIONARY_RATIO = 16
DICTIONARY_SAMPLE_ROWS = 1 << 16
# A dictionary page read as a dictionary is at most this big: far below the 1 MiB at
# which parquet writers (pyarrow's, parquet-mr's) give up on a column's dictionary and
# write its remaining values plain, which a dictionary read would hash one by one.
DICTIONARY_PAGE_MAX = 64 << 10


def few_values_as_dictionaries(table: pa.Table, allowed: Collection[str]) -> pa.Table:
    """`table` with each string column among `allowed` that holds few distinct values
    (judged on its first rows) dictionary-encoded, so that reordering its rows moves
    integers, not strings."""
    columns = []
    for name, column in zip(table.column_names, table.columns, strict=True):
        if name in allowed and (
            pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
        ):
            sample = column.slice(0, DICTIONARY_SAMPLE_ROWS)
            if len(pc.unique(sample)) * DICTIONARY_RATIO <= len(sample):
                # One chunk: one dictionary (chunks encoded apart may not share one).
                column = pc.dictionary_encode(column.combine_chunks())
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


# Arrow types a parquet file gives back unchanged without pyarrow's stored schema (the
# ARROW:schema footer key, which is where a column written as a dictionary says so): a
# file of these types written without it reads back as it was written, its dictionary
# columns as plain strings. (A timestamp's zone, a large_string, a duration are kept
# only by that key.)
_PLAIN_TYPES = (
    pa.types.is_boolean,
    pa.types.is_integer,
    pa.types.is_float32,
    pa.types.is_float64,
    pa.types.is_string,
    pa.types.is_binary,
    pa.types.is_date32,
)


def plain(t: pa.DataType) -> pa.DataType:
    """A dictionary type's value type; any other type itself."""
    return t.value_type if pa.types.is_dictionary(t) else t


def writes_without_arrow_schema(schema: pa.Schema) -> bool:
    """Whether a file of `schema` may be written without ARROW:schema and read back the
    same: the condition for writing dictionary columns as they are (the file then says
    string, as a cast-back file does) instead of casting them back first."""
    if schema.metadata:
        return False
    return all(
        not f.metadata and any(is_type(plain(f.type)) for is_type in _PLAIN_TYPES) for f in schema
    )


def cast_keeping_dictionaries(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """`table` cast to `schema`, except that a dictionary column whose values are of
    the field's type stays a dictionary (a parquet writer stores its indices as they
    are, where a cast back to strings would make it hash every value again)."""
    fields = [
        f.with_type(have) if pa.types.is_dictionary(have) and have.value_type == f.type else f
        for f, have in zip(schema, table.schema.types, strict=True)
    ]
    return table.cast(pa.schema(fields, metadata=schema.metadata))


def concat_tables(parts: Sequence[pa.Table]) -> pa.Table:
    """The parts one after another as one chunk a column. A column that is a
    dictionary in some parts and not in others is decoded in all (its parts were read
    from files written apart); dictionaries of different parts are unified."""
    if len(parts) == 1:
        return parts[0].combine_chunks()
    first = parts[0].schema
    if any(p.schema != first for p in parts[1:]):
        types = [{p.schema.field(i).type for p in parts} for i in range(len(first))]
        target = pa.schema(
            [
                f.with_type(plain(f.type)) if len(ts) > 1 else f
                for f, ts in zip(first, types, strict=True)
            ]
        )
        parts = [p.cast(target) for p in parts]
    return pa.concat_tables(parts).combine_chunks()


def dictionary_columns(metadata: Any, names: Collection[str]) -> list[str]:
    """The string columns among `names` that a parquet file stores as small
    dictionaries in every row group (the dictionary page at most DICTIONARY_PAGE_MAX
    before compression and half the column chunk): read as dictionaries they cost no
    string decoding, and no hashing later. A column whose dictionary holds most of its
    values, or grew toward the writer's limit (past which values are written plain),
    is left out."""
    leaves = {metadata.schema.column(j).path: j for j in range(metadata.num_columns)}
    out = []
    for name in names:
        j = leaves.get(name)
        if j is None or str(metadata.schema.column(j).logical_type) != "String":
            continue
        if metadata.num_row_groups and all(
            _small_dictionary(metadata.row_group(g).column(j))
            for g in range(metadata.num_row_groups)
        ):
            out.append(name)
    return out


def _small_dictionary(chunk: Any) -> bool:
    if not chunk.has_dictionary_page or chunk.dictionary_page_offset is None:
        return False
    page = chunk.data_page_offset - chunk.dictionary_page_offset  # bytes in the file
    stored = chunk.total_compressed_size
    if not 0 < page or 2 * page > stored:
        return False
    # Its size before compression, at the column chunk's ratio (exact when uncompressed).
    return page * chunk.total_uncompressed_size <= DICTIONARY_PAGE_MAX * stored
