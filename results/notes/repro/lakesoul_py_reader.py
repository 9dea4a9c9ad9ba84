"""Minimal reproduction for LakeSoul's Python engine (`lakesoul` 2.0.0 on PyPI), in the
shape of an upstream report: two behaviours of its merge-on-read scan that make it
read another LakeSoul engine's primary-key table differently from that engine.

1. The scan merges a key's rows with the last value only: the native IO config has
   `merge_operators`, but `scan().options(reader_options=...)` ignores the key without
   an error, so a table written for a sum (LakeSoul's Spark `MergeOpLong`) reads wrong.
2. A key whose last row is a delete (the table's `lakesoul_cdc_change_column`) comes
   back from the scan, with and without the `cdc_column` reader option.

Run with a LakeSoul metadata PostgreSQL (`contest db up` starts one; its JDBC URL,
user and password are in .state/lakesoul.properties):

    python results/notes/repro/lakesoul_py_reader.py --pg-url jdbc:postgresql://... \
        --user lakesoul_test --password lakesoul_test

It creates two tables under a fresh temporary folder, prints what each scan returned
beside what the contract expects, then drops its tables (its own, by name)."""

from __future__ import annotations

import argparse
import tempfile
import uuid

import pyarrow as pa
from lakesoul import LakeSoulCatalog


def operators(catalog: LakeSoulCatalog, root: str) -> None:
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), ("n", pa.int64())])
    name = f"repro_ops_{uuid.uuid4().hex[:8]}"
    table = catalog.create_table(
        name, path=f"{root}/{name}", schema=schema, primary_keys=["k"], hash_bucket_num=1
    )
    try:
        for n in (1, 2):  # two upserts of key a: a sum is 3, the last value 2
            table.write_arrow(pa.table({"k": ["a"], "n": [n]}, schema=schema), format="parquet")
        for options in ({}, {"merge_operators": "n:org.apache.spark.sql.lakesoul.MergeOpLong"}):
            got = table.scan().options(reader_options=options).to_arrow_table().to_pylist()
            print(f"1. reader_options={options}: {got} (a sum of n expects n=3)")
    finally:
        catalog.drop_table(name)


def deletes(catalog: LakeSoulCatalog, root: str) -> None:
    schema = pa.schema(
        [pa.field("k", pa.string(), nullable=False), ("n", pa.int64()), ("op", pa.string())]
    )
    name = f"repro_cdc_{uuid.uuid4().hex[:8]}"
    table = catalog.create_table(
        name,
        path=f"{root}/{name}",
        schema=schema,
        primary_keys=["k"],
        hash_bucket_num=1,
        properties={"lakesoul_cdc_change_column": "op"},
    )
    try:
        rows = {"k": ["a", "b"], "n": [1, 1], "op": ["insert", "insert"]}
        table.write_arrow(pa.table(rows, schema=schema), format="parquet")
        gone = {"k": ["a"], "n": [None], "op": ["delete"]}
        table.write_arrow(pa.table(gone, schema=schema), format="parquet")
        for options in ({}, {"cdc_column": "op"}):
            got = table.scan().options(reader_options=options).to_arrow_table().to_pylist()
            print(f"2. reader_options={options}: {got} (expects key b only)")
    finally:
        catalog.drop_table(name)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg-url", required=True, help="jdbc:postgresql://host:port/db")
    parser.add_argument("--user", required=True)
    parser.add_argument("--password", required=True)
    args = parser.parse_args()
    catalog = LakeSoulCatalog(pg_url=args.pg_url, pg_username=args.user, pg_password=args.password)
    with tempfile.TemporaryDirectory() as root:
        operators(catalog, root)
        deletes(catalog, root)


if __name__ == "__main__":
    main()
