"""Each peer strategy end to end on the contract cases: `contest evaluate` with real
jars and real Spark (a timed spark-submit write and read) and the default cores, the
oracle's verdict, the hand-written expected rows, the cores the jobs held, and the write
amplification the format reports; a library that cannot be resolved is one line naming
it and the pre-fetch command."""

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.evaluation.strategies import STRATEGIES
from contest.peers.registry import SPARK, implementation_of
from tests.support.combined_cases import write_combined
from tests.support.config import cli

pytestmark = [pytest.mark.spark]

# Every strategy on a peer format run by Spark (a new preset is covered as it is added;
# the native libraries' have their own test, test_native_end_to_end.py).
PEERS = sorted(
    name
    for name, preset in STRATEGIES.items()
    if preset.get("peer.format") and implementation_of(name).runtime is SPARK
)


@pytest.fixture(scope="module")
def contract_data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("contract") / "data"
    return folder, write_combined(folder)


def _last_json(out: str) -> dict:
    return json.loads(out.strip().splitlines()[-1])


def _evaluate(cfg, tmp_path, strategy, data, *extra):
    """Without --cores: the score divides by the cores the jobs report they held."""
    args = cli(cfg, *extra, "evaluate", "--strategy", strategy, "--data", str(data))
    return main([*args, "--work", str(tmp_path / "work"), "--results", "-"])


@pytest.mark.slow
@pytest.mark.parametrize("strategy", PEERS)
def test_peer_is_exact_on_the_contract_cases(cfg, tmp_path, capsys, contract_data, strategy):
    data, expected = contract_data
    code = _evaluate(cfg, tmp_path, strategy, data)
    out, err = capsys.readouterr()
    rec = _last_json(out)
    assert code == 0, err[-3000:]
    assert rec["correct"] and rec["check"].startswith("OK")
    assert rec["merge_s"] is None  # no LakeSoul metadata to merge
    cores = os.cpu_count()
    assert rec["spark_cores"] == {"write": cores, "read": cores} and rec["cores"] == cores
    got = pq.read_table(rec["result_dir"]).to_pylist()
    assert sorted(got, key=lambda r: r["uuid"]) == expected
    report = rec["peer_write"]
    assert rec["stored_bytes"] == report["table_bytes"] > 0
    batches = report["batches"]
    assert [b["version"] for b in batches] == [0, 1, 2] and report["ok"]
    merges = batches[1:]
    if strategy == "delta-merge":  # copy-on-write: touched files are rewritten
        assert all(b["metrics"]["numTargetFilesRemoved"] >= 1 for b in merges)
    elif strategy == "delta-dv":  # deletion vectors instead of rewrites
        assert all(b["metrics"]["numTargetFilesRemoved"] == 0 for b in merges)
        assert sum(b["delete_files_added"] for b in merges) >= 1
    elif strategy == "iceberg-mor":  # position-delete files, no data file removed
        assert all(b["metrics"].get("deleted-data-files", 0) == 0 for b in merges)
        assert all(b["metrics"]["added-delete-files"] >= 1 for b in merges)
    elif strategy == "iceberg-dv":  # format v3: deletion vectors (Puffin), no data file removed
        assert all(b["metrics"].get("deleted-data-files", 0) == 0 for b in merges), report
        assert all(b["metrics"]["added-dvs"] >= 1 for b in merges), report
        assert all(b["metrics"].get("added-position-delete-files", 0) == 0 for b in merges)
        assert all(b["delete_files_added"] >= 1 for b in merges), report
    elif strategy == "paimon-agg":  # appends, the later ones from concurrent writers
        assert batches[0]["operation"] == "create+append" and report["threads"] > 1
        assert all(b["operation"] == "append" for b in merges)
        # Applied at once: their own files are unknown, never reported as 0 added.
        assert all(b["together"] and b["data_files_added"] is None for b in merges)
        assert not batches[0]["together"] and batches[0]["data_files_added"] >= 1
        assert batches[0]["metrics"]["total_record_count"] >= 1
    else:  # Hudi MOR upserts land in log files
        assert strategy in ("hudi-mor", "hudi-merger")
        assert all(b["operation"] == "upsert" and b["log_files_added"] >= 1 for b in merges)


@pytest.mark.slow
def test_iceberg_copy_on_write_bucketed_and_hash_distributed_is_exact(
    cfg, tmp_path, capsys, contract_data
):
    """The copy-on-write MERGE (the peer-iceberg sweep's case) rewrites the touched data
    files instead of adding delete files, and stays exact; here on a table PARTITIONED
    BY bucket(4, uuid) with rows hashed to writers (the sweep's other options)."""
    data, expected = contract_data
    sets = ("peer.merge_mode=copy-on-write", "peer.buckets=4", "peer.distribution=hash")
    code = _evaluate(cfg, tmp_path, "iceberg-mor", data, *(a for s in sets for a in ("--set", s)))
    out, err = capsys.readouterr()
    rec = _last_json(out)
    assert code == 0, err[-3000:]
    assert rec["correct"]
    got = pq.read_table(rec["result_dir"]).to_pylist()
    assert sorted(got, key=lambda r: r["uuid"]) == expected
    merges = rec["peer_write"]["batches"][1:]
    assert all(b["metrics"].get("added-delete-files", 0) == 0 for b in merges)
    assert all(b["metrics"].get("deleted-data-files", 0) >= 1 for b in merges)
    table = Path(rec["peer_write"]["table"])
    assert {p.name.split("=")[0] for p in (table / "data").iterdir()} == {"uuid_bucket"}
    meta = json.loads(
        max((table / "metadata").glob("v*.metadata.json"), key=os.path.getmtime).read_text()
    )
    assert [f["transform"] for f in meta["partition-specs"][-1]["fields"]] == ["bucket[4]"]
    assert meta["properties"]["write.distribution-mode"] == "hash"


def test_unresolvable_package_is_one_line_naming_it(cfg, tmp_path, capsys, contract_data):
    data, _ = contract_data
    bogus = "io.delta:delta-no-such-artifact_2.12:0.0.1"
    code = _evaluate(cfg, tmp_path, "delta-merge", data, "--set", f"peer.packages={bogus}")
    out, err = capsys.readouterr()
    rec = _last_json(out)
    assert code == 1 and rec["failed_phase"] == "packages (delta)"
    assert rec["write_s"] is None  # nothing was timed
    line = rec["error"]
    assert "\n" not in line and bogus in line
    assert f"contest packages fetch --coordinates {bogus}" in line
    assert line in err  # shown to the user as it fails
