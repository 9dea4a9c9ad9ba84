"""The Read job: merge operators against the oracle, version ranges, schema evolution,
LakeSoul's own reader, bad input."""

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from contest.cli.main import main
from contest.data.generator import generate
from contest.read.job import ReadError
from contest.read.operators import MergeOperatorError
from contest.write.files import write_dataframe
from meta import catalog
from meta.commits import commit_files
from tests.support.config import cli
from tests.support.contract_cases import CASES, versions_spec, write_case
from tests.support.pipeline import merge_and_read, oracle, read_rows, with_write, write


@pytest.mark.parametrize("name", sorted(CASES))
def test_contract_cases_through_the_pipeline(name, spark, pg, cfg, tmp_path):
    case = CASES[name]
    data = write_case(case, tmp_path / "data")
    _, table = write(
        spark,
        pg,
        with_write(cfg, versions=versions_spec(case) or ""),
        data,
        tmp_path / f"c_{name.lower()}",
    )
    assert merge_and_read(spark, pg, cfg, table) == case["expected"]


@pytest.fixture(scope="module")
def nulls_table(spark, pg, cfg, tmp_path_factory):
    root = tmp_path_factory.mktemp("rnull")
    generate(root / "data", 0.0005, seed=21, nulls=True, progress=False)
    _, table = write(spark, pg, cfg, root / "data", root / "rnulls")
    from meta.merge import merge_table

    merge_table(pg, table)
    return root / "data", table


def test_generated_data_with_sql_nulls_equals_the_oracle(spark, pg, cfg, nulls_table):
    data, table = nulls_table
    assert read_rows(spark, pg, cfg, table) == oracle(data)


def test_lakesoul_native_reader_sees_the_same_keys(pg, cfg, nulls_table):
    data, table = nulls_table
    native = catalog.native_catalog(pg).table(table.name)
    got = native.scan().to_arrow_table()
    assert sorted(got.column("uuid").to_pylist()) == [r["uuid"] for r in oracle(data)]


def test_as_of_version_and_between_versions(spark, pg, cfg, nulls_table):
    data, table = nulls_table
    assert read_rows(spark, pg, cfg, table, as_of=3) == oracle(data, only={0, 1, 2, 3})
    changes = read_rows(spark, pg, cfg, table, from_version=3, to_version=6)
    assert changes == oracle(data, only={4, 5, 6})


def test_sum_operator_only_and_default_last(spark, pg, cfg, nulls_table):
    data, table = nulls_table
    cfg2 = dataclasses.replace(cfg, read=type(cfg.read)(operators={"requests": "SumAll"}))
    rows = read_rows(spark, pg, cfg2, table)
    expected = oracle(data)
    assert [r["requests"] for r in rows] == [e["requests"] for e in expected]
    assert any(r["name"] == "null" for r in rows)  # UseLast keeps the literal string


def test_bad_operators_are_named(spark, pg, cfg, nulls_table):
    _, table = nulls_table
    for ops, msg in (
        ({"nope": "SumAll"}, "'nope'"),
        ({"city": "SumAll"}, "numeric"),
        ({"city": "Median"}, "unknown merge operator"),
        ({"city": "Product"}, "Product needs a int64 column"),
    ):
        cfg2 = dataclasses.replace(cfg, read=type(cfg.read)(operators=ops))
        with pytest.raises(MergeOperatorError, match=msg):
            read_rows(spark, pg, cfg2, table)


def test_missing_and_empty_tables(spark, pg, cfg, tmp_path, capsys):
    assert main(cli(cfg, "read", "--table", "no_such_table", "--out", str(tmp_path / "o"))) == 2
    assert "no LakeSoul table named default.no_such_table" in capsys.readouterr().err
    empty = catalog.create_table(
        pg,
        "empty_t",
        tmp_path / "empty_t",
        pa.schema([("uuid", pa.string())]),
        ["uuid"],
        2,
        replace=True,
    )
    with pytest.raises(ReadError, match="has no commits"):
        read_rows(spark, pg, cfg, empty)


def _write_rows(spark, pg, table, rows, ddl, version):
    files = write_dataframe(spark.createDataFrame(rows, ddl).coalesce(1), table).files
    commit_files(pg, table, files, version=version)


def test_history_reads_with_the_newest_schema(spark, pg, cfg, tmp_path):
    v1 = pa.schema([("uuid", pa.string()), ("requests", pa.int64())])
    t = catalog.create_table(pg, "evolve_t", tmp_path / "evolve_t", v1, ["uuid"], 2, replace=True)
    _write_rows(spark, pg, t, [("a", 1), ("b", 2)], "uuid string, requests bigint", 0)
    t = catalog.evolve_schema(pg, t, v1.append(pa.field("city", pa.string())))
    _write_rows(spark, pg, t, [("a", 10, "x")], "uuid string, requests bigint, city string", 1)
    cfg2 = dataclasses.replace(
        cfg, read=type(cfg.read)(operators={"requests": "SumAll", "city": "UseLastNotNull"})
    )
    assert read_rows(spark, pg, cfg2, t, as_of=0) == [
        {"uuid": "a", "requests": 1, "city": None},
        {"uuid": "b", "requests": 2, "city": None},
    ]
    assert read_rows(spark, pg, cfg2, t) == [
        {"uuid": "a", "requests": 11, "city": "x"},
        {"uuid": "b", "requests": 2, "city": None},
    ]


def test_type_change_that_old_files_cannot_follow(spark, pg, cfg, tmp_path, capsys):
    v1 = pa.schema([("uuid", pa.string()), ("requests", pa.int64())])
    t = catalog.create_table(pg, "retype_t", tmp_path / "retype_t", v1, ["uuid"], 1, replace=True)
    _write_rows(spark, pg, t, [("a", 1)], "uuid string, requests bigint", 0)
    t = catalog.evolve_schema(pg, t, pa.schema([("uuid", pa.string()), ("requests", pa.string())]))
    _write_rows(spark, pg, t, [("b", "2")], "uuid string, requests string", 1)
    code = main(
        cli(
            cfg,
            "read",
            "--table",
            "retype_t",
            "--out",
            str(tmp_path / "o"),
            "--operator",
            "requests=UseLast",
        )
    )
    err = capsys.readouterr().err
    assert code == 2
    assert "column requests was int64 in the commit of version 0" in err
    assert "newest schema (read at version 1)" in err


@pytest.mark.parametrize("writer", ["arrow", "spark"])
def test_read_job_output_passes_the_checker(spark, pg, cfg, nulls_table, tmp_path, capsys, writer):
    data, table = nulls_table
    out = Path(tmp_path / "result")
    out.mkdir()
    (out / "stale.parquet").write_bytes(b"a file this tool did not make")
    read = cli(
        cfg, "--set", f"read.writer={writer}", "read", "--table", table.name, "--out", str(out)
    )
    assert main(read) == 2  # never empties a folder it did not make
    assert "not a previous result of this tool" in capsys.readouterr().err
    assert (out / "stale.parquet").exists()
    assert main([*read, "--overwrite"]) == 0
    capsys.readouterr()
    assert main(["check", "--result", str(out), "--data", str(data)]) == 0
    assert (out / "_SUCCESS").exists() and not (out / "stale.parquet").exists()
    assert main(read) == 0  # a previous result of this tool is replaced
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize(
    ("statistics", "with_stats"),
    [
        ("key", {"uuid"}),
        ("all", {"uuid", "ip", "hostname", "requests", "name", "city", "job", "phonenum"}),
        ("none", set()),
    ],
)
def test_the_results_files_carry_the_statistics_asked(
    spark, pg, cfg, nulls_table, tmp_path, statistics, with_stats
):
    """read.statistics: by default only the key's min/max (each file is sorted by it);
    the result's rows are the same whatever the setting."""
    import pyarrow.parquet as pq

    data, table = nulls_table
    out = tmp_path / "result"
    read = cli(cfg, "--set", f"read.statistics={statistics}", "read", "--table", table.name)
    assert main([*read, "--out", str(out)]) == 0
    files = sorted(out.glob("part-*.parquet"))
    assert files
    for path in files:
        meta = pq.ParquetFile(path).metadata
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            columns = [group.column(j) for j in range(group.num_columns)]
            assert {c.path_in_schema for c in columns if c.is_stats_set} == with_stats
    assert main(["check", "--result", str(out), "--data", str(data)]) == 0


def test_a_compaction_stands_whole_unless_the_range_cuts_it():
    from contest.read.job import stands_whole

    covers = (0, 1, 2, 3)
    assert stands_whole(covers, None, None)  # the whole table
    assert stands_whole(covers, None, 3) and stands_whole(covers, None, 7)
    assert not stands_whole(covers, None, 2)  # as of 2: the commits it merged
    assert stands_whole(covers, 3, 6) and stands_whole(covers, 5, 6)  # left out
    assert not stands_whole(covers, 1, 6)  # changes after 1: part of it
    assert stands_whole(covers, -1, 3)


@pytest.fixture(scope="module")
def uuid128_table(spark, pg, cfg, tmp_path_factory):
    """Generated data (UUID keys, SQL NULLs, keys repeated inside batches) written with
    write.sort = uuid128: the bucket files sorted by the keys' 128 bits."""
    root = tmp_path_factory.mktemp("ruuid")
    generate(root / "data", 0.0005, seed=23, nulls=True, progress=False)
    _, table = write(spark, pg, with_write(cfg, sort="uuid128"), root / "data", root / "ru128")
    from meta.merge import merge_table

    merge_table(pg, table)
    return root / "data", table


@pytest.mark.parametrize("method", ["numpy", "arrow", "duckdb", "polars"])
def test_each_merge_engine_on_a_uuid128_table_equals_the_oracle(
    spark, pg, cfg, uuid128_table, method
):
    data, table = uuid128_table
    read_cfg = dataclasses.replace(cfg, read=dataclasses.replace(cfg.read, merge=method))
    assert read_rows(spark, pg, read_cfg, table) == oracle(data)


@pytest.mark.pg
def test_a_missing_version_is_named_before_the_unmerged_snapshot(pg, cfg, tmp_path):
    """Versions 2 then 1 landed, 0 never did: the read names the missing version 0 (it
    said `run contest meta merge first`, which would not bring batch 0 back)."""
    from contest.data.workload import workload_schema
    from contest.read.job import ReadRequest, checked_commits
    from meta.commits import DataFile
    from meta.versions import plan_versions

    schema = workload_schema(cfg.workload)
    t = catalog.create_table(
        pg, "holes_unmerged", tmp_path / "hu", schema, ["uuid"], 1, replace=True
    )
    plan_versions(pg, t, {v: f"base-{v}.parquet" for v in range(3)})
    for v in (2, 1):  # out of version order, not merged
        part = DataFile(f"{t.path}/part-v{v}_0000.parquet", 10, tuple(schema.names), 0)
        commit_files(pg, t, [part], version=v, batch=f"base-{v}.parquet")
    request = ReadRequest(str(tmp_path / "out"))
    with pytest.raises(ReadError, match=r"missing version\(s\) 0 below the newest committed"):
        checked_commits(pg, cfg, t, request)
    with pytest.raises(ReadError, match="contest meta merge"):  # asked to read anyway
        checked_commits(pg, cfg, t, dataclasses.replace(request, allow_gaps=True))
