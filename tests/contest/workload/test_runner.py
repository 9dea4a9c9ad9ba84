"""`contest workload run` end to end on a tiny workload (whole spark-submit jobs, real
PostgreSQL): every phase recorded, every read checked by the oracle at the version it
read, a read while upserts land at one consistent version; a peer and stock LakeSoul
upserting a few batches at a time and reading their head; and `--latest-complete`
on a table with a missing version reads exactly the versions below the hole."""

import json

import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.results.workloads import load
from tests.support.config import cli

pytestmark = [pytest.mark.spark, pytest.mark.pg]

TINY = """
[workload]
name = "tiny"
batches = 4
first_rows = 300
batch_rows = 60
update_share = 0.7
repeat_share = 0.1

[workload.columns]
"peak" = "Max"

[[phase]]
kind = "upsert"
batches = 0

[[phase]]
kind = "read"

[[phase]]
kind = "concurrent"
batches = "1-2"
reads = 1

[[phase]]
kind = "merge"

[[phase]]
kind = "compact"

[[phase]]
kind = "read"
as_of = 1

[longevity]
upsert = 1
"""


def test_phase_runner_on_a_tiny_workload(cfg, pg, tmp_path, capsys):
    spec = tmp_path / "tiny.toml"
    spec.write_text(TINY)
    out = tmp_path / "tiny.jsonl"
    argv = ["workload", "run", str(spec), "--strategies", "optimized,lakesoul-stock"]
    argv += ["--scale", "1", "--work", str(tmp_path / "work"), "--results", str(out)]
    code = main(cli(cfg, *argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    # A workload a strategy cannot run at all (an operator its engine cannot express) is
    # refused up front, in one line, before any job (a peer's history reads go to its
    # own mechanism: test_a_peer_and_stock_lakesoul_run_phases).
    line = next(ln for ln in captured.err.splitlines() if ln.startswith("lakesoul-stock: "))
    assert "cannot run the workload's phases" in line and "merge operator Max (column peak)" in line
    report = json.loads(captured.out.strip().splitlines()[-1])
    assert report["ok"] and out.with_suffix(".md").is_file() and out.with_suffix(".png").is_file()

    recs = load(out)
    # The refusal is a record of its own (the page says it in one line).
    refused = [r for r in recs if r.phase == "refused"]
    assert [(r.strategy, r.step) for r in refused] == [("lakesoul-stock", 0)]
    assert "merge operator Max" in (refused[0].skipped or "")
    recs = [r for r in recs if r.phase != "refused"]
    assert {r.strategy for r in recs} == {"optimized"}
    # A longevity run's lane runs in one long-lived application (its whole process the
    # last record): every phase but the concurrent step's (processes of their own, beside
    # each other) and the merge (in this process) a command of it, within its life.
    app = recs.pop()
    assert app.phase == "application" and app.ok and app.step == recs[-1].step + 1
    inside = [r for r in recs if r.phase in ("upsert", "read", "compact")]
    assert app.seconds is not None and app.seconds > sum(r.seconds or 0 for r in inside)
    assert {r.application for r in recs} == {"one"}
    # upsert 0, read, concurrent (its read, its upsert), merge, compact, read as of 1
    # (across the compaction), then one longevity round of batch 3.
    assert [r.phase for r in recs] == [
        "upsert", "read", "concurrent-read", "concurrent-upsert", "merge", "compact",
        "read", "upsert", "merge", "read",
    ]  # fmt: skip
    assert all(r.ok for r in recs)
    reads = [r for r in recs if r.phase.endswith("read")]
    assert all(r.correct is True for r in reads)
    assert [r.version for r in reads if r.phase == "read"] == [0, 1, 3]
    concurrent = next(r for r in recs if r.phase == "concurrent-read")
    assert concurrent.version in (0, 1, 2)  # whatever had landed: one version, checked
    assert [r.batches_applied for r in recs][-1] == 4 and recs[-1].round == 1
    assert sum(r.rows or 0 for r in recs if "upsert" in r.phase) == 300 + 3 * 60
    merge, compact = recs[4], recs[5]
    assert merge.files_per_bucket is not None and merge.files_per_bucket > 1
    assert compact.files_per_bucket == 1.0 and compact.seconds and compact.seconds > 0
    assert all(r.stored_bytes and r.stored_bytes > 0 for r in recs)
    # The folder's data files and the metadata's rows in PostgreSQL after each phase: a
    # commit adds rows (its commit, its partition's version), a read none; the
    # compaction's new files join the old ones until a vacuum.
    assert all(r.data_files and r.data_bytes and r.delete_files == 0 for r in recs)
    assert all(r.metadata_rows and r.metadata_bytes and r.metadata_files is None for r in recs)
    rows = [r.metadata_rows or 0 for r in recs]
    assert rows[7] > rows[6] == rows[5] > rows[1] == rows[0]  # upsert 3 > read, compact > read
    assert (recs[5].data_files or 0) > (recs[4].data_files or 0)
    assert all(r.peak_rss_bytes for r in recs if r.phase in ("upsert", "read", "compact"))
    # Noise measured during every job that runs alone; a concurrent step's jobs would
    # read each other as noise, and the merge runs no job.
    jobs = [r for r in recs if r.phase in ("upsert", "read", "compact")]
    assert all(r.outside_share is not None and r.steal_share is not None for r in jobs)
    assert all(r.outside_share is None for r in recs if r.phase.startswith(("concurrent", "merge")))
    page = out.with_suffix(".md").read_text()
    assert "Degradation rate" in page and "| optimized |" in page
    assert f"Noise measured during {len(jobs)} phases' jobs" in page


HEADS = """
[workload]
name = "heads"
batches = 4
first_rows = 200
batch_rows = 50
update_share = 0.7
repeat_share = 0.1

[[phase]]
kind = "upsert"
batches = 0

[[phase]]
kind = "concurrent"
batches = "1-2"
reads = 1

[[phase]]
kind = "merge"

[[phase]]
kind = "compact"

[[phase]]
kind = "read"
"""


PEER = "delta-merge:defaults"


@pytest.mark.slow
def test_a_peer_and_stock_lakesoul_run_phases(cfg, pg, tmp_path, capsys):
    """delta-merge at Delta's documented defaults (a `:defaults` row, named and filed as
    evaluate's are) and lakesoul-stock: batch 0, then batches 1-2 appended (batch 3
    never) in a concurrent step (its read skipped: a head-only read), a read of the
    head, exact at the batches upserted so far (a write that took every batch would be
    wrong). Each upsert's job applied exactly the batches --only named, the second onto
    the table the first created. The peer's merge and stock's compaction are skipped,
    said why; stock's merge and the peer's own compaction run. (Nine whole jobs in all:
    one read per strategy keeps it near two minutes.)"""
    from contest.peers.write import report_from_log
    from contest.workload.lanes import report_line

    spec = tmp_path / "heads.toml"
    spec.write_text(HEADS)
    out = tmp_path / "heads.jsonl"
    work = tmp_path / "work"
    argv = ["workload", "run", str(spec), "--strategies", f"{PEER},lakesoul-stock"]
    # The tables kept: the peer's ledger is asked again below.
    argv += ["--scale", "1", "--work", str(work), "--results", str(out), "--keep-tables"]
    code = main(cli(cfg, *argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    assert "cannot run" not in captured.err

    recs = load(out)
    # Interleaved step by step, the order rotated each step (recorded as each ends).
    first: dict[int, str] = {}
    for r in recs:
        first.setdefault(r.step, r.strategy)
    assert [first[n] for n in sorted(first)][:3] == [PEER, "lakesoul-stock", PEER]
    for strategy in (PEER, "lakesoul-stock"):
        mine = [r for r in recs if r.strategy == strategy]
        assert [r.phase for r in mine] == [
            "upsert", "concurrent-upsert", "concurrent-read", "merge", "compact", "read",
        ]  # fmt: skip
        assert all(r.ok for r in mine), [r.error for r in mine]
        read = mine[-1]
        assert (read.version, read.correct, read.batches_applied) == (2, True, 3)
        assert read.rows and read.rows >= 200
        assert [r.rows for r in mine if "upsert" in r.phase] == [200, 100]
        assert "no read of one known version while upserts land" in (mine[2].skipped or "")
        assert mine[2].correct is None and mine[2].seconds is None
        assert all(r.stored_bytes and r.stored_bytes > 0 for r in mine)
    delta = [r for r in recs if r.strategy == PEER]
    stock = [r for r in recs if r.strategy == "lakesoul-stock"]
    # The peer compacts its own way (OPTIMIZE): timed, one file left, every row kept.
    compact = delta[4]
    assert compact.skipped is None and compact.seconds and compact.seconds > 0
    assert compact.files_per_bucket == 1.0 and compact.rows == delta[-1].rows
    assert stock[4].skipped and "no compaction for it in this harness" in stock[4].skipped
    assert stock[4].seconds is None
    assert delta[3].skipped == "peer format delta: no LakeSoul metadata to merge"
    assert stock[3].skipped is None and stock[3].seconds is not None
    assert stock[0].files_per_bucket is not None  # a LakeSoul table's layout

    logs = work / "eval" / "logs"
    peer_logs = [logs / f"workload-delta-merge_defaults-00{n}-write.log" for n in (1, 2)]
    peer_writes = [report_from_log(log) for log in peer_logs]
    assert [[b["version"] for b in w["batches"]] for w in peer_writes] == [[0], [1, 2]]
    assert [w["appended"] for w in peer_writes] == [False, True]
    assert [b["operation"] for b in peer_writes[1]["batches"]] == ["merge", "merge"]
    stock_writes = [report_line(logs / f"workload-lakesoul-stock-00{n}-write.log") for n in (1, 2)]
    assert [[b["version"] for b in w["batches"]] for w in stock_writes] == [[0], [1, 2]]
    page = out.with_suffix(".md").read_text()
    assert f"| {PEER} |" in page and "skipped: peer format delta" in page

    # The peer table's batch ledger refuses, before any Spark starts, batch 2 again and
    # batch 1 after it (each would be counted twice); the table's log is untouched.
    (table,) = (work / "eval" / "tables").glob("ccf_delta_merge_*")
    (data,) = (work / "data").glob("*scale-1-seed-*")
    log = sorted((table / "_delta_log").glob("*.json"))
    config = work / "eval" / "delta-merge_defaults.toml"
    for again, why in (("2", "version 2 (base-2.parquet) is already applied"),
                       ("1", "version 1 (base-1.parquet) is already applied")):  # fmt: skip
        argv = ["write", "--config", str(config), "--data", str(data), "--table", str(table)]
        assert main(cli(cfg, *argv, "--append", "--only", again)) != 0
        err = capsys.readouterr().err
        assert why in err and "nothing written" in err
    assert sorted((table / "_delta_log").glob("*.json")) == log


def test_latest_complete_reads_below_a_missing_version(cfg, pg, spark, tmp_path, capsys):
    """Batches 0, 1 and 3 committed, 2 missing (as while a write lands out of order):
    the read takes version 1, reports it, and equals the oracle up to version 1."""
    data = tmp_path / "data"
    spec = tmp_path / "four.toml"
    spec.write_text("[workload]\nbatches = 4\nfirst_rows = 200\nbatch_rows = 50\n")
    assert main(cli(cfg, "gen", "--workload", str(spec), "--scale", "1", "--out", str(data))) == 0
    table = tmp_path / "t_latest"
    argv = ["write", "--data", str(data), "--table", str(table), "--only", "0,1,3", "--replace"]
    assert main(cli(cfg, *argv)) == 0, capsys.readouterr().err[-2000:]
    capsys.readouterr()
    result = tmp_path / "result"
    code = main(cli(cfg, "read", "--table", "t_latest", "--out", str(result), "--latest-complete"))
    out, err = capsys.readouterr()
    assert code == 0, err[-2000:]
    report = json.loads(out.strip().splitlines()[-1])
    assert report["version"] == 1
    expected = tmp_path / "expected"
    argv = ["oracle", "--data", str(data), "--out", str(expected), "--upto-version", "1"]
    assert main(cli(cfg, *argv)) == 0
    capsys.readouterr()
    got = pq.read_table(result).sort_by("uuid")
    want = pq.read_table(expected / "expected.parquet").sort_by("uuid")
    assert got.num_rows == want.num_rows and got.column("uuid").equals(want.column("uuid"))
    assert got.select(want.column_names).equals(want.cast(got.select(want.column_names).schema))
    # A plain read of the same table refuses the hole.
    assert main(cli(cfg, "read", "--table", "t_latest", "--out", str(tmp_path / "r2"))) == 2


def test_copy_on_write_read_as_of_a_version_before_its_overwrite(cfg, pg, spark, tmp_path, capsys):
    """A copy-on-write overwrite (version 2, covering 0-1) holds its own batch: a read
    as of version 1 must not take it for version 1 (it did: batch 2's rows in a read
    as of 1, found by the workload runner's checks). The read before it is refused in
    one line for now; as of 2 is the oracle's up to 2."""
    data = tmp_path / "data"
    spec = tmp_path / "three.toml"
    spec.write_text("[workload]\nbatches = 3\nfirst_rows = 200\nbatch_rows = 50\n")
    assert main(cli(cfg, "gen", "--workload", str(spec), "--scale", "1", "--out", str(data))) == 0
    cow = ["--set", "write.mode=cow", "--set", "write.reader=spark"]
    table = str(tmp_path / "t_cow_asof")
    assert main(cli(cfg, *cow, "write", "--data", str(data), "--table", table, "--replace")) == 0
    capsys.readouterr()
    before = [
        "read",
        "--table",
        "t_cow_asof",
        "--out",
        str(tmp_path / "r1"),
        "--as-of-version",
        "1",
    ]
    assert main(cli(cfg, *before)) == 2
    assert "cannot be read apart" in capsys.readouterr().err
    out = tmp_path / "r2"
    argv = ["read", "--table", "t_cow_asof", "--out", str(out), "--as-of-version", "2"]
    assert main(cli(cfg, *argv)) == 0, capsys.readouterr().err[-2000:]
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["version"] == 2
    assert main(cli(cfg, "check", "--result", str(out), "--data", str(data))) == 0


STOCK_COLUMNS = """
[workload]
name = "stock-columns"
batches = 3
first_rows = 2000
batch_rows = 600
update_share = 0.6
repeat_share = 0.1
null_share = 0.2
null_string_share = 0.3

[workload.columns]
"m" = "SumAll"
"t" = "UseLast"
"n" = "UseLastNotNull"
"l" = "UseLastNotNullNorNullString"
"""


@pytest.mark.slow
def test_stock_lakesoul_merges_a_workloads_extra_columns_exactly(cfg, pg, tmp_path, capsys):
    """The operators LakeSoul 2.6.2 has, on extra columns with NULLs and "null" strings:
    a count column beside the sum, "null" written as NULL."""
    spec = tmp_path / "stock-columns.toml"
    spec.write_text(STOCK_COLUMNS)
    out = tmp_path / "stock.jsonl"
    argv = ["workload", "run", str(spec), "--strategies", "lakesoul-stock", "--scale", "1"]
    argv += ["--work", str(tmp_path / "work"), "--results", str(out)]
    code = main(cli(cfg, *argv))
    captured = capsys.readouterr()
    assert code == 0, captured.err[-3000:]
    reads = [r for r in load(out) if r.phase == "read"]
    assert [r.correct for r in reads] == [True] and reads[0].version == 2
