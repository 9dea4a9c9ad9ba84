"""`contest workload run --data --out` end to end with a native strategy (delta-rs: plain
Python processes, no JVM, no PostgreSQL) on a tiny generated cdc data set (deletes,
re-inserts, a batch of some columns) under a workload file holding only the op column,
the base phase and `[longevity]`: the data's shape from its files, two maintenance
policies each on its own table, every read checked by the oracle, the read after
maintenance at the version of the read before it, each lane's last read kept with the
contract's columns only, and an --out folder already holding something refused."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from contest.cli.main import main
from contest.data.batches import COLUMNS
from contest.results.workloads import load
from tests.support.config import cli

# base-0 and two change batches: inserts, re-inserts and deletes of every column, then
# updates of some columns and deletes (LakeSoul's spelling, the default op_values).
GEN = """
[workload]
name = "tiny-cdc"
batches = 3
first_rows = 120
batch_rows = 30
update_share = 0.5
op_column = "op"
delete_share = 0.15
reinsert_share = 0.1
"""
# What a user writes for their own change data: the op column, the base, the rounds.
MINIMAL = """
[workload]
op_column = "op"

[[phase]]
kind = "upsert"
batches = 0

[longevity]
upsert = 1
read_every = 2
maintenance = ["none", "every:2"]
"""


def test_policies_on_their_own_tables_and_their_last_reads_kept(cfg, tmp_path, capsys):
    (tmp_path / "gen.toml").write_text(GEN)
    data = tmp_path / "data"
    argv = ["gen", "--workload", str(tmp_path / "gen.toml"), "--scale", "1", "--out", str(data)]
    assert main(cli(cfg, *argv)) == 0
    spec = tmp_path / "mini.toml"
    spec.write_text(MINIMAL)
    records, out = tmp_path / "mini.jsonl", tmp_path / "out"
    argv = ["workload", "run", str(spec), "--strategies", "delta-rs", "--data", str(data)]
    argv += ["--work", str(tmp_path / "work"), "--results", str(records), "--out", str(out)]
    capsys.readouterr()
    code = main(cli(cfg, *argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    report = json.loads(captured.out.strip().splitlines()[-1])
    assert report["ok"] and "spark-submit" not in captured.err

    recs = load(records)
    # One long-lived application per lane (a longevity run's default): every phase ran
    # in it, each command's own log beside the application's, and its whole process is
    # the lane's last record, after the lane's last step.
    assert {r.application for r in recs} == {"one"}
    # The full disclosure once per lane, on its first record (its page reads it there).
    stamped = [(r.policy, r.step) for r in recs if r.environment and r.config]
    assert sorted(stamped) == [("every:2", 1), ("none", 1)]
    # Every command's noise measured, however short (a warm native read: milliseconds).
    jobs = [r for r in recs if r.phase in ("upsert", "read")]
    assert jobs and all(r.outside_share is not None for r in jobs)
    apps = [r for r in recs if r.phase == "application"]
    assert sorted(r.policy for r in apps) == ["every:2", "none"]
    assert all(r.ok and r.seconds and r.peak_rss_bytes for r in apps)
    logs = tmp_path / "work" / "eval" / "logs"
    assert len(list(logs.glob("workload-delta-rs-*-application.log"))) == 2
    assert len(list(logs.glob("workload-delta-rs-none-*-write.log"))) == 3
    recs = [r for r in recs if r.phase != "application"]
    assert all(max(r.step for r in recs if r.policy == a.policy) < a.step for a in apps)
    lanes = {p: [r for r in recs if r.policy == p] for p in ("none", "every:2")}
    assert sum(map(len, lanes.values())) == len(recs)
    # The table after each phase: its folder's data files and bytes, and its log (a
    # Delta log entry a commit: one more after each upsert), counted between phases.
    ups = [r for r in lanes["none"] if r.phase == "upsert"]
    assert all(r.data_files and r.data_bytes and r.delete_files is not None for r in ups)
    logs = [r.metadata_files or 0 for r in ups]
    assert logs[0] > 0 and logs == sorted(set(logs))
    assert all(r.metadata_bytes and r.metadata_rows is None for r in ups)
    for mine in lanes.values():
        assert all(r.ok and r.strategy == "delta-rs" for r in mine)
        assert [r.batch_first for r in mine if r.phase == "upsert"] == [0, 1, 2]  # 3 files
        reads = [r for r in mine if r.phase == "read"]
        assert all(r.correct is True and r.version == 2 for r in reads)
    # none: one read, after the last round (read_every = 2 skips round 1's).
    assert [r.label for r in lanes["none"] if r.phase == "read"] == ["read"]
    # every:2: compaction and expiry (delta-rs has neither: skipped, said why) between
    # the round's read and the read that must equal it.
    tail = lanes["every:2"][-4:]
    assert [r.phase for r in tail] == ["read", "compact", "vacuum", "read"]
    assert tail[-1].label == "read after maintenance" and tail[0].version == tail[-1].version
    assert all("no compact here" in (r.skipped or "") for r in tail if r.phase == "compact")
    page = records.with_suffix(".md").read_text()
    assert "| delta-rs (none) |" in page and "| delta-rs (every:2) |" in page

    kept = {p: pq.read_table(out / "delta-rs" / p).sort_by("uuid") for p in ("none", "every-2")}
    assert sorted(p.name for p in (out / "delta-rs").iterdir()) == ["every-2", "none"]
    for policy, table in kept.items():
        assert table.column_names == list(COLUMNS)  # no op column, nothing internal
        last = [r for r in recs if r.phase == "read" and r.policy == policy.replace("-", ":")]
        assert table.num_rows == last[-1].rows
    assert kept["none"].equals(kept["every-2"])

    # The run's own tables are gone at its end; --keep-tables keeps them.
    tables = tmp_path / "work" / "eval" / "tables"
    assert not tables.exists() or not any(tables.iterdir())
    again = [a for a in argv if a not in ("--out", str(out))]
    again[again.index(str(records))] = str(tmp_path / "again.jsonl")
    assert main(cli(cfg, *again, "--keep-tables")) == 0
    assert sorted(p.name.split("_")[2] for p in tables.iterdir()) == ["rs", "rs"]
    capsys.readouterr()

    # The same --out again: refused in one line before any work, nothing replaced.
    before = sorted(p.stat().st_mtime_ns for p in out.rglob("*.parquet"))
    assert main(cli(cfg, *argv)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "exists and is not empty: not overwritten" in err[0]
    assert sorted(p.stat().st_mtime_ns for p in out.rglob("*.parquet")) == before
