"""A Spark schema made in Python from Arrow types is the one Spark's own parser makes
of the DDL names the harness has always used for them."""

import pyarrow as pa
import pytest

from contest.data.spark_types import spark_struct, spark_type

TYPES = [
    pa.int64(),
    pa.int32(),
    pa.float64(),
    pa.bool_(),
    pa.string(),
    pa.large_string(),
    pa.binary(),
    pa.date32(),
    pa.timestamp("us", tz="UTC"),
    pa.timestamp("us"),
    pa.decimal128(38, 6),
]


@pytest.mark.spark
def test_the_python_schema_is_the_parsed_ddl(spark):
    fields = [(f"c{i}", t) for i, t in enumerate(TYPES)]
    ddl = ", ".join(f"`{n}` {spark_type(t)}" for n, t in fields)
    parsed = spark.createDataFrame([], ddl).schema
    assert spark_struct(fields) == parsed
    assert spark_struct(pa.schema(fields)) == parsed
