"""History reads of change data on Delta and Iceberg (`contest read --as-of-version`
with peer.format set): the table written from change files (deletes, a re-insert) read
as of each version by the format's own time travel equals the oracle over the batches up
to it, deletes applied; a changes read (`--from-version`) is refused in one line, as for
upserts (docs/guides/workloads.md: the formats' change feeds give post-images or skip
MERGEs). Real Spark, the format's own library, one child JVM per format."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from contest.config import override
from contest.data import operators as ops
from contest.data.batches import discover, upto
from contest.data.changes import Changes
from contest.data.oracle import expected_rows
from tests.contest.maintenance.test_erasure import CASE
from tests.contest.peers.test_compact import child_config, set_format
from tests.contest.read.test_changes import plain
from tests.support.contract_cases import write_change_case
from tests.support.lakesoul import run_module

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # a child JVM a format, a minute or two


@pytest.mark.parametrize("strategy", ["delta-merge", "iceberg-mor"])
def test_as_of_reads_of_change_data_apply_the_deletes_up_to_the_version(cfg, tmp_path, strategy):
    data = write_change_case(CASE, tmp_path / "data")
    child = override(
        child_config(cfg, strategy, tmp_path),
        {"workload.key": ["uuid"], "workload.op_column": "op"},
    )
    fmt = set_format(child, strategy)
    table = tmp_path / strategy / "hist"
    commands = [[*fmt, "write", "--data", str(data), "--table", str(table)]]
    for v in range(4):
        out = tmp_path / f"v{v}"
        commands.append(
            [*fmt, "read", "--table", str(table), "--as-of-version", str(v), "--out", str(out)]
        )
    commands.append(
        [*fmt, "read", "--table", str(table), "--from-version", "0", "--to-version", "3",
         "--out", str(tmp_path / "changes")]
    )  # fmt: skip
    proc = run_module("tests.support.contest_child", child, commands, tmp_path, timeout=900)
    done = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [d["code"] for d in done[:-1]] == [0] * 5, proc.stderr[-4000:]
    assert done[-1]["code"] != 0  # the changes read: refused
    assert not (tmp_path / "changes").exists()
    batches = discover(data, schema=None)
    rules = Changes(op_column="op")
    for v in range(4):
        want = plain(expected_rows(upto(batches, v), ops.CONTRACT, rules), ("uuid",))
        got = plain(pq.read_table(tmp_path / f"v{v}").to_pylist(), ("uuid",))
        assert [{k: r[k] for k in want[0]} for r in got] == want, v
    # Version 1 deleted a and c; version 2 inserted a again and deleted d.
    v1 = {r["uuid"] for r in pq.read_table(tmp_path / "v1").to_pylist()}
    v2 = {r["uuid"] for r in pq.read_table(tmp_path / "v2").to_pylist()}
    assert v1 == {"b", "d", "f"} and v2 == {"a", "b", "e", "f"}
