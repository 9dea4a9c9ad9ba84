"""A user's own change files through `--data DIR --workload FILE`: the hand-made
composite-key folder (tests/support/own_data.py) described by `contest dataset describe`,
then through `compare` (optimized and delta-merge, each an evaluate), a sweep case and
`workload run`, each exact by the oracle (and equal to the result written by hand); the
records name the files (name, bytes, SHA-256). Bad inputs end in one line, a non-zero
exit, nothing written: refused in the data phase, before Spark or any job starts."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data.workload import workload_settings
from contest.evaluation.sweep import case_config, load_sweep
from tests.support.config import cli
from tests.support.own_data import EXPECTED, FILES, row, write_own_data


def _described(tmp_path: Path, files=FILES) -> tuple[Path, Path]:
    data = write_own_data(tmp_path / "data", files)
    wl = tmp_path / "mine.toml"
    assert main(["dataset", "describe", str(data), "--out", str(wl)]) == 0
    return data, wl


def _evaluate(cfg, tmp_path, strategy, data, wl, runs="-"):
    args = cli(cfg, "evaluate", "--strategy", strategy, "--data", str(data))
    work = tmp_path / "work"
    return main([*args, "--workload", str(wl), "--work", str(work), "--results", str(runs)])


def _listing(folder: Path) -> list[tuple[str, int]]:
    return sorted((p.name, p.stat().st_size) for p in folder.iterdir())


def _refused(cfg, tmp_path, capsys, data, wl, says: str) -> None:
    before = _listing(data)
    code = _evaluate(cfg, tmp_path, "delta-merge", data, wl)
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert says in err[-1], err[-5:]
    assert _listing(data) == before
    # No job started: no table and no result were written.
    assert not (tmp_path / "work" / "eval" / "tables").exists()
    assert not (tmp_path / "work" / "eval" / "result").exists()


def test_a_file_without_a_key_column_is_refused(cfg, tmp_path, capsys):
    data, wl = _described(tmp_path)
    pq.write_table(pa.table({"tenant": ["a"], "op": ["c"], "qty": [1]}), data / "part-13.parquet")
    _refused(cfg, tmp_path, capsys, data, wl, "part-13.parquet: no key column 'item_id'")


def test_a_null_key_is_refused_naming_the_file_column_and_rows(cfg, tmp_path, capsys):
    files = [*FILES, [row("a", 1, "u", qty=5), {"tenant": None, "item_id": 3, "op": "c"}]]
    data, wl = _described(tmp_path, FILES)
    write_own_data(data, files)  # part-13 after the description: 1 row with a NULL tenant
    _refused(
        cfg, tmp_path, capsys, data, wl, "part-13.parquet: 1 row(s) with a NULL key column 'tenant'"
    )


def test_a_type_that_differs_between_files_is_refused(cfg, tmp_path, capsys):
    data, wl = _described(tmp_path)
    t = pa.table(
        {"tenant": ["a"], "item_id": pa.array([1], pa.int64()), "op": ["u"], "qty": ["three"]}
    )
    pq.write_table(t, data / "part-13.parquet")
    _refused(
        cfg, tmp_path, capsys, data, wl, "part-13.parquet: column qty is string, expected int64"
    )


def test_an_unknown_op_value_is_refused(cfg, tmp_path, capsys):
    files = [*FILES, [row("a", 1, "upsert", qty=5)]]
    data, wl = _described(tmp_path, FILES)
    write_own_data(data, files)
    _refused(cfg, tmp_path, capsys, data, wl, "part-13.parquet: op column 'op' holds 'upsert'")


def test_a_column_the_description_does_not_name_is_refused(cfg, tmp_path, capsys):
    data, wl = _described(tmp_path)
    t = pa.table(
        {"tenant": ["a"], "item_id": pa.array([1], pa.int64()), "op": ["u"], "colour": ["red"]}
    )
    pq.write_table(t, data / "part-13.parquet")
    _refused(cfg, tmp_path, capsys, data, wl, "part-13.parquet: unexpected column(s) colour")


def test_a_sweep_takes_your_data_and_workload(tmp_path, capsys):
    data, wl = _described(tmp_path)
    sweep = tmp_path / "s.toml"
    sweep.write_text('strategy = "delta-merge"\n[grid]\n"spark.shuffle_partitions" = [2, 4]\n')
    argv = ["sweep", str(sweep), "--data", str(data), "--workload", str(wl), "--check"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["cases"] == 2
    loaded = load_sweep(sweep, {}, workload_settings(str(wl)), str(data))
    assert loaded.data == str(data)
    w = case_config(loaded, loaded.cases[0], {}).workload
    assert (w.payload, w.key, w.op_column) == ("own", ["tenant", "item_id"], "op")


def test_bench_peers_refuses_a_strategy_your_data_needs_more_of_before_any_run(
    cfg, tmp_path, capsys
):
    data, wl = _described(tmp_path)
    before = _listing(data)
    argv = cli(cfg, "bench", "peers", "--data", str(data), "--workload", str(wl))
    argv += ["--strategies", "delta-merge,baseline-cow", "--rounds", "1"]
    code = main([*argv, "--work", str(tmp_path / "work"), "--results", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert "baseline-cow: cannot delete rows (op column 'op')" in err[-1], err[-5:]
    assert _listing(data) == before
    assert not (tmp_path / "work" / "eval").exists()  # no run started


def _log_named(tmp_path: Path) -> tuple[Path, Path]:
    """FILES with a log position (`lsn`, rising file by file) under names whose natural
    order is not the log's (the twelfth file's name sorts first)."""
    data = write_own_data(tmp_path / "data")
    for i in range(1, 13):
        part = data / f"part-{i}.parquet"
        table = pq.read_table(part)
        lsn = pa.array([100 * (i - 1) + j for j in range(table.num_rows)], pa.int64())
        pq.write_table(table.append_column("lsn", lsn), data / f"chunk-{13 - i:02d}.parquet")
        part.unlink()
    wl = tmp_path / "mine.toml"
    assert main(["dataset", "describe", str(data), "--out", str(wl)]) == 0
    return data, wl


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.pg
def test_files_ordered_by_a_log_position_are_exact(cfg, pg, tmp_path, capsys):
    data, wl = _log_named(tmp_path)
    before = _listing(data)
    args = cli(cfg, "--set", "workload.order_column=lsn", "evaluate", "--data", str(data))
    argv = [*args, "--workload", str(wl), "--work", str(tmp_path / "work"), "--results", "-"]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["correct"] and rec["data"] == str(data)
    got = [
        {k: v for k, v in r.items() if k != "lsn"}
        for r in pq.read_table(rec["result_dir"]).to_pylist()
    ]
    assert sorted(got, key=lambda r: (r["tenant"], r["item_id"])) == EXPECTED
    assert _listing(data) == before
    # The record names the user's files, not the staged batches.
    assert sorted(f["name"] for f in rec["data_files"]) == [
        f"chunk-{i:02d}.parquet" for i in range(1, 13)
    ]


def test_files_whose_log_ranges_overlap_are_refused(cfg, tmp_path, capsys):
    data, wl = _log_named(tmp_path)
    late = pa.table(
        {"tenant": ["a", "a"], "item_id": [1, 1], "op": ["u", "u"], "qty": [9, 8], "lsn": [50, 250]}
    )
    pq.write_table(late, data / "chunk-13.parquet")  # spans the second and third files
    before = _listing(data)
    args = cli(cfg, "--set", "workload.order_column=lsn", "evaluate", "--strategy", "delta-merge")
    argv = [*args, "--data", str(data), "--workload", str(wl), "--work", str(tmp_path / "work")]
    code = main([*argv, "--results", "-"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert (
        "chunk-11.parquet: its lsn range [100, 100] overlaps chunk-13.parquet's [50, 250]"
        in (err[-1])
    ), err[-5:]
    assert _listing(data) == before
    assert not (tmp_path / "work" / "eval" / "tables").exists()
    assert not list((tmp_path / "work").glob("data/staged-*"))


# Many small files (issue 60, "any size"): 10,000 files of a few KB, a thousand a batch.
SMALL_FILES, PER_BATCH = 10_000, 1_000


@pytest.mark.slow  # 10,000 files written, described, staged, then two spark-submit jobs
@pytest.mark.spark
@pytest.mark.pg
def test_ten_thousand_small_files_grouped_into_batches_are_exact(cfg, pg, tmp_path, capsys):
    """Ten thousand files of three rows (a few KB each: Debezium's kinds, a composite
    key, some keys deleted and created again) described, grouped a thousand to a batch
    (`workload.files_per_batch`), written and read by optimized: exact by the oracle,
    every job of the run under the harness's 8 GB bound, the user's folder untouched."""
    data = tmp_path / "small"
    data.mkdir()
    for i in range(SMALL_FILES):
        rows = [
            row("t", (i * 7 + j) % 1_500, "d" if (i + j) % 11 == 0 else "u", qty=i, label=f"{i}")
            for j in range(3)
        ]
        rows[0]["op"] = "c" if i % 5 else rows[0]["op"]
        pq.write_table(pa.Table.from_pylist(rows), data / f"part-{i + 1}.parquet")
    wl = tmp_path / "small.toml"
    assert main(["dataset", "describe", str(data), "--out", str(wl)]) == 0
    before = _listing(data)
    settings = ["--set", f"workload.files_per_batch={PER_BATCH}"]
    settings += ["--set", f"workload.batches={SMALL_FILES // PER_BATCH}"]
    args = cli(cfg, *settings, "evaluate", "--strategy", "optimized", "--data", str(data))
    code = main([*args, "--workload", str(wl), "--work", str(tmp_path / "w"), "--results", "-"])
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["correct"], err[-3000:]
    assert len(rec["data_files"]) == SMALL_FILES
    bound = 8 * 10**9
    peaks = [rec["write_peak_process_rss_bytes"], rec["read_peak_process_rss_bytes"]]
    assert all(p is not None and 0 < p < bound for p in peaks), peaks
    assert _listing(data) == before


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow  # two evaluations, each two spark-submit jobs
@pytest.mark.spark
@pytest.mark.pg
def test_compare_on_your_composite_key_files_is_exact_and_names_them(cfg, pg, tmp_path, capsys):
    """optimized (LakeSoul) and delta-merge through `contest compare`, each an evaluate:
    exact by the oracle, the last result equal to the one written by hand, the records
    naming the files, the folder untouched."""
    data, wl = _described(tmp_path)
    before = _listing(data)
    runs = tmp_path / "runs.jsonl"
    args = cli(cfg, "compare", "--strategies", "optimized,delta-merge", "--data", str(data))
    args += ["--workload", str(wl), "--work", str(tmp_path / "w")]
    code = main([*args, "--results", str(runs)])
    assert code == 0, capsys.readouterr().err[-3000:]
    recs = _records(runs)
    assert [r["strategy"] for r in recs] == ["optimized", "delta-merge"]
    assert all(r["correct"] for r in recs), recs
    got = pq.read_table(recs[-1]["result_dir"]).to_pylist()
    assert sorted(got, key=lambda r: (r["tenant"], r["item_id"])) == EXPECTED
    assert _listing(data) == before  # nothing written into the user's folder
    part1 = (data / "part-1.parquet").read_bytes()
    for rec in recs:
        files = rec["data_files"]
        assert [f["name"] for f in files] == [f"part-{i}.parquet" for i in range(1, 13)]
        assert files[0] == {
            "name": "part-1.parquet",
            "bytes": len(part1),
            "sha256": hashlib.sha256(part1).hexdigest(),
        }


@pytest.mark.slow  # a sweep case: two spark-submit jobs
@pytest.mark.spark
@pytest.mark.pg
def test_a_sweep_case_on_your_files_is_exact(cfg, pg, tmp_path, capsys):
    data, wl = _described(tmp_path)
    sweep = tmp_path / "s.toml"
    sweep.write_text(
        'strategy = "optimized"\nrepeat = 1\n[grid]\n"spark.shuffle_partitions" = [2]\n'
    )
    out = tmp_path / "sweep"
    args = cli(cfg, "sweep", str(sweep), "--data", str(data), "--workload", str(wl))
    code = main([*args, "--results", str(out), "--work", str(tmp_path / "w")])
    assert code == 0, capsys.readouterr().err[-3000:]
    [rec] = [r for f in out.glob("*.jsonl") for r in _records(f)]
    assert rec["correct"] and rec["data"] == str(data)
    assert [f["name"] for f in rec["data_files"]][:3] == [
        "part-1.parquet",
        "part-2.parquet",
        "part-3.parquet",
    ]


@pytest.mark.slow  # a workload run: a write and a read job a strategy
@pytest.mark.spark
@pytest.mark.pg
def test_a_workload_run_on_your_files_reads_exactly(cfg, pg, tmp_path, capsys):
    data, wl = _described(tmp_path)
    before = _listing(data)
    out = tmp_path / "records.jsonl"
    args = cli(cfg, "workload", "run", str(wl), "--data", str(data), "--strategies", "optimized")
    code = main([*args, "--work", str(tmp_path / "w"), "--results", str(out)])
    assert code == 0, capsys.readouterr().err[-3000:]
    reads = [r for r in _records(out) if r.get("correct") is not None]
    assert reads and all(r["correct"] for r in reads), reads
    assert _listing(data) == before
