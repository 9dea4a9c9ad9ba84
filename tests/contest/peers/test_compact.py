"""A peer format's own compaction (`contest compact` with peer.format set), per format on
real jars and real Spark: a few tiny batches upserted (deletion vectors, delete files,
log files or sorted runs pile up), compacted, and read: the read still equals the
oracle, and the files a read opens went down, the format's delete or log files gone."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.config import load_config, override
from contest.evaluation.strategies import STRATEGIES
from tests.support.config import cli
from tests.support.peer_child import child_config, run_child

# Spark runs in a child process per format (its jars are fixed when its JVM starts).
pytestmark = [pytest.mark.spark, pytest.mark.slow]

SPEC = """
[workload]
batches = 3
first_rows = 200
batch_rows = 80
update_share = 0.8
repeat_share = 0.1
"""

# One strategy per format, in as few child processes (JVMs) as their jars allow: hudi-mor
# runs in hudi-merger's session (the same jars and settings, and the merger's jar).
# delta-dv compacts with OPTIMIZE, then REORG for the deletion vectors; delta-merge's
# OPTIMIZE alone runs in tests/contest/workload/test_runner.py.
GROUPS = [["delta-dv"], ["iceberg-mor"], ["hudi-merger", "hudi-mor"], ["paimon-agg"]]


@pytest.fixture(scope="module")
def tiny(cfg, tmp_path_factory):
    """Three batches and the oracle's result of them."""
    root = tmp_path_factory.mktemp("peer-compact")
    spec, data, expected = root / "tiny.toml", root / "data", root / "expected"
    spec.write_text(SPEC)
    assert main(cli(cfg, "gen", "--workload", str(spec), "--scale", "1", "--out", str(data))) == 0
    assert main(cli(cfg, "oracle", "--data", str(data), "--out", str(expected))) == 0
    return data, pq.read_table(expected / "expected.parquet").sort_by("uuid")


def set_format(child, strategy: str) -> list[str]:
    """The `--set` making the group's session config the strategy's (asserted to be
    its preset's: only peer.format differs)."""
    fmt = STRATEGIES[strategy]["peer.format"]
    assert (
        override(child, {"peer.format": fmt}).peer == load_config(preset=STRATEGIES[strategy]).peer
    )
    return ["--set", f"peer.format={fmt}"]


@pytest.mark.parametrize("group", GROUPS, ids=["+".join(g) for g in GROUPS])
def test_compaction_keeps_the_result_and_lowers_the_files(cfg, tiny, tmp_path, group):
    data, expected = tiny
    child = child_config(cfg, group[0], tmp_path)
    commands = []
    for strategy in group:
        table, out = tmp_path / strategy / "ccf", tmp_path / f"result-{strategy}"
        fmt = set_format(child, strategy)
        commands += [
            [*fmt, "write", "--data", str(data), "--table", str(table)],
            [*fmt, "compact", "--table", str(table)],
            [*fmt, "read", "--table", str(table), "--out", str(out)],
        ]
    done = run_child(child, commands, tmp_path)
    for i, strategy in enumerate(group):
        write, compact, read = done[3 * i : 3 * i + 3]
        check(strategy, write, compact["report"], read, tmp_path / f"result-{strategy}", expected)


def check(strategy: str, write: dict, report: dict, read: dict, out, expected) -> None:
    print(strategy, json.dumps(report))  # shown with -rP: what each format compacted
    assert [b["version"] for b in write["report"]["batches"]] == [0, 1, 2]
    before, after = report["before"], report["after"]
    assert report["format"] == STRATEGIES[strategy]["peer.format"]
    assert report["files_after"] < report["files_before"], report
    assert after["delete_files"] == 0 and after["log_files"] == 0, report
    assert report["files_per_bucket"] == after["files_per_bucket"] <= before["files_per_bucket"]
    got = pq.read_table(out).sort_by("uuid")
    assert report["rows"] == got.num_rows == expected.num_rows == read["report"]["rows"]
    assert got.select(expected.column_names).equals(
        expected.cast(got.select(expected.column_names).schema)
    )
    metrics = report["metrics"]
    if strategy == "delta-dv":  # the deletion vectors the merges wrote are gone
        assert before["delete_files"] >= 1 and metrics["numDeletionVectorsRemoved"] >= 1
        assert after["data_files"] == 1
    elif strategy == "iceberg-mor":  # position deletes applied, dangling ones dropped
        assert before["delete_files"] >= 1 and after["data_files"] == 1
        assert metrics["rewritten_data_files_count"] >= 2
    elif strategy.startswith("hudi"):  # each file group's logs merged into a base file
        assert before["log_files"] >= 1 and metrics["file_groups_compacted"] >= 1
        assert after["buckets"] == before["buckets"] == after["data_files"]
    else:  # paimon: one sorted run per bucket
        assert after["data_files"] == after["buckets"] <= 8
