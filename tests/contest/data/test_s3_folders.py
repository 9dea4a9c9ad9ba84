"""Batch folders and result folders in the object store (the embedded S3 server): found,
checked with the same one-line errors as local ones, and the oracle and the check read
them."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data.batches import DataError, discover
from contest.data.checker import SUCCESS_MARKER, compare, result_files
from contest.data.oracle import expected_result, expected_rows
from contest.infra.folders import remove_tree
from tests.support.config import cli
from tests.support.contract_cases import CASES, versions_spec, write_case
from tests.support.s3 import configured, delete, fresh_prefix, names, put, upload

CASE = CASES["sql_nulls_in_each_column_kind"]


@pytest.fixture(scope="module")
def store(s3):
    with configured(s3):
        yield s3


@pytest.fixture
def remote_data(store, tmp_path):
    uri = upload(write_case(CASE, tmp_path / "d"), fresh_prefix("data"))
    yield uri
    remove_tree(uri)


def test_discover_an_s3_folder(remote_data, tmp_path):
    batches = discover(remote_data + "/", versions_spec(CASE))
    local = discover(tmp_path / "d", versions_spec(CASE))
    assert [b.path for b in batches] == [f"{remote_data}/base-{i}.parquet" for i in (0, 1)]
    assert [(b.name, b.rows, b.bytes, b.version) for b in batches] == [
        (b.name, b.rows, b.bytes, b.version) for b in local
    ]
    assert all(b.mtime_ns > 0 for b in batches)


@pytest.mark.parametrize(
    "breakage,message",
    [
        ("no_folder", "{uri}-nothing-here: no such data folder"),
        ("gap", "{uri}/base-1.parquet: missing (batches must be base-0..base-2 without gaps)"),
        ("not_parquet", "{uri}/base-1.parquet: not a parquet file (ArrowInvalid)"),
        ("schema", "{uri}/base-1.parquet: schema differs: missing column(s) phonenum"),
        ("empty", "{uri}: no batch files (expected base-0.parquet, base-1.parquet, ..., or a"),
    ],
)
def test_bad_s3_folders_one_line(remote_data, tmp_path, breakage, message):
    uri = remote_data
    fs_one = f"{uri}/base-1.parquet"
    target = uri
    if breakage == "no_folder":
        target = f"{uri}-nothing-here"
    elif breakage == "gap":
        put(f"{uri}/base-2.parquet", (tmp_path / "d" / "base-1.parquet").read_bytes())
        delete(fs_one)
    elif breakage == "not_parquet":
        put(fs_one, b"uuid,ip\n")
    elif breakage == "schema":
        table = pq.read_table(tmp_path / "d" / "base-1.parquet").drop_columns(["phonenum"])
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        put(fs_one, sink.getvalue().to_pybytes())
    elif breakage == "empty":
        put(f"{uri}/notes.txt", b"no batches here")
        for i in (0, 1):
            delete(f"{uri}/base-{i}.parquet")
    with pytest.raises(DataError) as err:
        discover(target)
    text = str(err.value)
    assert text.startswith(message.format(uri=uri)) and "\n" not in text


def test_oracle_reads_s3_batches(remote_data, tmp_path):
    batches = discover(remote_data, versions_spec(CASE))
    assert expected_rows(batches) == CASE["expected"]
    report = expected_result(batches, tmp_path / "o" / "expected.parquet")
    assert pq.read_table(report.path).to_pylist() == CASE["expected"]
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["expected.parquet"]


def test_check_reads_an_s3_result(remote_data, tmp_path):
    expected = expected_result(discover(remote_data, versions_spec(CASE)), tmp_path / "e.parquet")
    result = fresh_prefix("result")
    table = pq.read_table(expected.path)
    for i, part in enumerate((table.slice(0, 1), table.slice(1))):
        sink = pa.BufferOutputStream()
        pq.write_table(part, sink)
        put(f"{result}/part-{i:05d}.parquet", sink.getvalue().to_pybytes())
    with pytest.raises(DataError, match="no _SUCCESS marker: the result is incomplete"):
        result_files(result)
    put(f"{result}/{SUCCESS_MARKER}", b"")
    put(f"{result}/.staging/part-9.parquet", b"ignored: hidden")
    assert len(result_files(result)) == 2
    report = compare(result, expected.path)
    assert report.ok and report.actual_rows == len(CASE["expected"]), report.render()
    # A wrong result is found wrong the same way as a local one.
    delete(f"{result}/part-00001.parquet")
    assert not compare(result, expected.path).ok
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "e.parquet"]
    remove_tree(result)
    assert names(result) == []


def test_gen_writes_batches_to_s3(store, capsys):
    uri = fresh_prefix("gen")
    try:
        assert main(cli(store, "gen", "--scale", "0.001", "--out", uri)) == 0
        assert json.loads(capsys.readouterr().out)["files"] == 11
        batches = discover(uri)
        assert [b.name for b in batches] == [f"base-{i}.parquet" for i in range(11)]
        assert sum(b.rows for b in batches) == 30_000
    finally:
        remove_tree(uri)
