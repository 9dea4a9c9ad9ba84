"""`contest bench duckdb` end to end at a tiny scale on real Spark and DuckDB: every
engine of every round recorded and checked, and nothing left behind that the next engine
would have to share the disk with (at scale 10 the disk is the limit)."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

from contest.benchmarks.duckdb.bench import RoundStep, disk_plan, round_steps
from contest.cli.main import main
from contest.config import load_config
from contest.errors import UsageError
from tests.support.config import cli


@pytest.mark.parametrize(
    ("free_gb", "cached", "repeat", "variants", "lean", "refused"),
    [
        (80, False, 3, 1, False, None),  # everything side by side fits
        (68, False, 1, 0, True, None),  # fits once the batches go after optimized's write
        (68, False, 3, 0, None, "one round, no --variant"),
        (68, False, 1, 1, None, "one round, no --variant"),
        (45, True, 1, 0, None, "not this sitting.s to remove"),
        (50, False, 1, 0, None, "even with the batches removed"),
    ],
)
def test_scale_10_runs_lean_or_is_refused_before_any_work(
    tmp_path, monkeypatch, free_gb, cached, repeat, variants, lean, refused
):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(250e9, 0, free_gb * 1e9))
    cfg = load_config(env={}, overrides={"work_dir": str(tmp_path)})
    folder = tmp_path / "data" / "scale-10-seed-2022"
    if cached:
        folder.mkdir(parents=True)
        (folder / ".complete").write_text("ok\n")
    if refused:
        with pytest.raises(UsageError, match=refused):
            disk_plan(cfg, 10, folder, repeat, variants)
    else:
        assert disk_plan(cfg, 10, folder, repeat, variants) is lean


@pytest.mark.parametrize(
    ("limit", "parts", "queries"),
    [(None, 0, 1), (None, 4, 4), (256 << 20, 0, 1), (256 << 20, 1, 1), (256 << 20, 4, 4)],
)
def test_duckdb_reference_is_exact_in_one_query_or_in_key_ranges(tmp_path, limit, parts, queries):
    """The reference merge, one query or one per key range, at DuckDB's defaults (no
    limit) or under a limit, checked by the oracle: every key once, in as many files as
    ranges; 0 is one query at the defaults, and under a limit where the aggregate fits
    it. Its line says how DuckDB ran."""
    import duckdb

    from contest.benchmarks.duckdb.merge import run
    from contest.data.batches import discover
    from contest.data.checker import SUCCESS_MARKER, compare
    from contest.data.generator import generate
    from contest.data.oracle import expected_result

    generate(tmp_path / "data", 0.0005, seed=7, nulls=True, progress=False)
    expected = expected_result(discover(tmp_path / "data"), tmp_path / "expected.parquet")
    out = tmp_path / "duckdb"
    got = run(tmp_path / "data", out, threads=2, memory_limit=limit, versions=None, parts=parts)
    assert (got["parts"], got["rows"]) == (queries, expected.rows)
    assert len(list(out.glob("part-*.parquet"))) == queries
    assert got["duckdb_version"] == duckdb.__version__ and got["threads"] == 2
    assert got["memory_limit"] == limit
    # DuckDB's own limit when none is set (80% of the memory), else the one set.
    assert got["memory_limit_setting"].endswith("GiB" if limit is None else "256.0 MiB")
    (out / SUCCESS_MARKER).touch()  # as the bench marks a finished merge
    assert compare(out, expected.path).ok


@pytest.mark.slow
def test_a_tiny_lean_sitting_drops_each_engines_output_once_checked(
    cfg, pg, tmp_path: Path, monkeypatch
) -> None:
    import shutil
    from collections import namedtuple

    # A disk that holds the batches, the oracle's result and the table, not a result too:
    # at 0.0005 of scale 1's bytes, as scale 10 on this machine's 70 GB.
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _: usage(250e9, 0, 3.4e6))
    out = tmp_path / "published"
    argv = ["bench", "duckdb", "--scale", "0.0005", "--repeat", "1", "--cores", "2"]
    # Its own work folder: data another test cached at this scale is not this sitting's
    # to remove (and would make it a full sitting).
    work = tmp_path / "work"
    argv += ["--results", str(out), "--work", str(work)]
    assert main(cli(cfg, *argv)) == 0
    lines = [json.loads(ln) for ln in (out / "duckdb.jsonl").read_text().splitlines()]
    # Optimized last: its write is the last use of the batches.
    assert [x["contender"] for x in lines] == ["duckdb", "floor", "optimized"]
    assert all(x["correct"] and x["seconds"] > 0 for x in lines)
    assert len({x["sitting"] for x in lines}) == 1
    # DuckDB at its defaults, as users run it: no limit set, one query, threads = cores.
    duck = lines[0]
    assert duck["duckdb_memory"] == "defaults" and duck["memory_limit"] is None
    assert (duck["parts"], duck["threads"]) == (1, 2)
    assert duck["duckdb_version"] == importlib.metadata.version("duckdb")
    assert "| duckdb (defaults) |" in (out / "duckdb.md").read_text()
    # Each contender started with the batches read into the page cache (untimed).
    assert all(x["read_ahead_bytes"] > 0 for x in lines)
    # The batches this sitting generated, the optimized table and result and DuckDB's
    # result are gone once used; the oracle's result stays for the next sitting.
    assert not any((work / "data").rglob("*.parquet"))
    assert not any((work / "eval" / "tables").rglob("*.parquet"))
    assert not (work / "eval" / "result" / "ccf").exists()
    assert not (work / "bench" / "duckdb" / "result").exists()
    assert any((work / "oracle").rglob("*.parquet"))


def test_each_round_rotates_the_engines_and_a_lean_sitting_runs_optimized_last() -> None:
    specs = [None, "write.batch_piece_rows=0"]
    first = round_steps(specs, 1, lean=False)
    assert first == [
        RoundStep("optimized"),
        RoundStep("optimized", specs[1]),
        RoundStep("duckdb"),
        RoundStep("floor"),
    ]
    # Every engine takes every place once over as many rounds as there are engines.
    orders = [round_steps(specs, rnd, lean=False) for rnd in range(1, 5)]
    for place in range(4):
        assert sorted(map(str, (o[place] for o in orders))) == sorted(map(str, first))
    assert orders[1][0] == RoundStep("optimized", specs[1])
    assert orders[1][-1] == RoundStep("optimized")
    steps = round_steps([None], 1, lean=True)
    assert steps == [RoundStep("duckdb"), RoundStep("floor"), RoundStep("optimized")]


def test_the_duckdb_merge_takes_your_key_row_kinds_and_operators(tmp_path):
    """The hand-made composite-key folder (Debezium's kinds, files of some columns):
    DuckDB's merge at its defaults writes the result the user's workload says."""
    import pyarrow.parquet as pq

    from contest.benchmarks.duckdb.merge import main as merge_main
    from contest.data.changes import Changes
    from tests.support.own_data import EXPECTED, write_own_data

    data = write_own_data(tmp_path / "data")
    ops = {"qty": "UseLast", "price": "UseLast", "label": "UseLast"}
    rules = Changes(key=("tenant", "item_id"), op_column="op", op_values="debezium")
    out = tmp_path / "duckdb"
    argv = ["--data", str(data), "--out", str(out), "--threads", "2"]
    argv += ["--operators", json.dumps(ops), "--changes", json.dumps(rules.__dict__)]
    assert merge_main(argv) == 0
    got = pq.read_table(out).to_pylist()
    assert sorted(got, key=lambda r: (r["tenant"], r["item_id"])) == EXPECTED


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.pg
def test_a_sitting_on_your_files_is_exact_and_names_them(cfg, pg, tmp_path: Path) -> None:
    import hashlib

    from tests.support.own_data import write_own_data

    data = write_own_data(tmp_path / "data")
    wl = tmp_path / "mine.toml"
    assert main(["dataset", "describe", str(data), "--out", str(wl)]) == 0
    out, work = tmp_path / "published", tmp_path / "work"
    argv = ["bench", "duckdb", "--data", str(data), "--workload", str(wl), "--repeat", "1"]
    argv += ["--cores", "2", "--results", str(out), "--work", str(work)]
    assert main(cli(cfg, *argv)) == 0
    lines = [json.loads(ln) for ln in (out / "duckdb.jsonl").read_text().splitlines()]
    assert sorted(x["contender"] for x in lines) == ["duckdb", "floor", "optimized"]
    assert all(x["correct"] for x in lines), lines
    part1 = (data / "part-1.parquet").read_bytes()
    for line in lines:
        assert [f["name"] for f in line["data_files"]] == [
            f"part-{i}.parquet" for i in range(1, 13)
        ]
        assert line["data_files"][0]["sha256"] == hashlib.sha256(part1).hexdigest()
    assert {p.name for p in data.iterdir()} == {f"part-{i}.parquet" for i in range(1, 13)}
