"""Batch discovery, versions and bad input: one clear error naming the file."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data.batches import DataError, batch_rows, discover, parse_versions
from tests.support.contract_cases import CASES, write_case


def test_batch_sizes_keep_the_contest_proportions():
    assert batch_rows(1) == [10_000_000] + [2_000_000] * 10
    assert sum(batch_rows(0.001)) == 30_000


def test_versions_default_and_mapping(tmp_path):
    assert parse_versions(None, [0, 1, 2]) == {0: 0, 1: 1, 2: 2}
    assert parse_versions("0=7,2=3", [0, 1, 2]) == {0: 7, 1: 1, 2: 3}
    f = tmp_path / "v.json"
    f.write_text('{"0": 9}')
    assert parse_versions(f"@{f}", [0, 1]) == {0: 9, 1: 1}


def test_two_batches_with_one_version_are_named():
    with pytest.raises(DataError, match="base-0.parquet and base-1.parquet both have version 1"):
        parse_versions("0=1", [0, 1])


def _folder(tmp_path):
    return write_case(CASES["key_only_in_a_later_batch"], tmp_path / "d")


@pytest.mark.parametrize(
    "breakage,message",
    [
        ("missing", "base-1.parquet: missing"),
        # A file without the key (one without a payload column is a partial batch, which
        # the workload's discovery takes: tests/contest/data/test_batch_columns.py).
        ("schema", "base-1.parquet: schema differs: missing column(s) uuid"),
        ("type", "base-1.parquet: column requests is string"),
        ("not_parquet", "base-1.parquet: not a parquet file"),
        ("empty", "no batch files"),
    ],
)
def test_bad_input_one_line_exit_2(tmp_path, capsys, breakage, message):
    d = _folder(tmp_path)
    b1 = d / "base-1.parquet"
    extra = d / "base-2.parquet"
    if breakage == "missing":
        b1.rename(extra)
    elif breakage == "schema":
        pq.write_table(pq.read_table(b1).drop_columns(["uuid"]), b1)
    elif breakage == "type":
        t = pq.read_table(b1)
        t = t.set_column(3, "requests", pa.array(["1"]))
        pq.write_table(t, b1)
    elif breakage == "not_parquet":
        b1.write_text("uuid,ip\n")
    elif breakage == "empty":
        for p in d.iterdir():
            p.unlink()
    with pytest.raises(DataError, match=message.replace("(", r"\(").replace(")", r"\)")):
        discover(d)
    code = main(["oracle", "--data", str(d), "--out", str(tmp_path / "o.parquet")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1 and message.split(":")[0] in err
