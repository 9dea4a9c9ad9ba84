"""Interop with LakeSoul's own JVM libraries (2.6.2, real jars), both ways:
- a table written by LakeSoul's writers (the JVM NativeIOWriter: snappy; the PyPI
  package's writer: zstd) and committed by DBManager without user-defined versions is
  read exactly by the project's `contest read`;
- a table the project wrote is read by LakeSoul's NativeIOReader with the same merge
  operators as the project's read, with the same result."""

import dataclasses

import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data.generator import generate
from meta import catalog
from meta.commits import head_snapshot
from tests.support.config import cli
from tests.support.lakesoul import result_rows, run_child
from tests.support.pipeline import merge_and_read, oracle, write

pytestmark = pytest.mark.slow


def one_row_per_key(path) -> None:
    """Keep a key's first row only: LakeSoul's PyPI writer (2.0.0) sorts a batch's rows by
    key without keeping the order of a key's rows, so no reader could apply them in order
    (README, "LakeSoul's JVM libraries"); the JVM writer keeps it."""
    import pyarrow as pa

    t = pq.read_table(path)
    seen: set[str] = set()
    first = [not (k in seen or seen.add(k)) for k in t.column("uuid").to_pylist()]
    t = t.filter(pa.array(first))
    pq.write_table(t, path, compression="NONE")


SAME_OPERATORS = {
    "requests": "SumAll",
    **{c: "UseLastNotNull" for c in ("ip", "hostname", "name", "city", "job", "phonenum")},
}


def test_lakesoul_written_table_is_read_exactly_by_contest_read(cfg, pg, spark, tmp_path):
    data = tmp_path / "data"
    generate(data, 0.0002, seed=16, nulls=True, progress=False)
    table_dir = tmp_path / "tables" / "written_by_lakesoul"
    writers = ["jvm", "pypi"] * 5 + ["jvm"]
    for i, writer in enumerate(writers):
        if writer == "pypi":
            one_row_per_key(data / f"base-{i}.parquet")
    run_child(
        cfg,
        [{"do": "lakesoul_table", "data": str(data), "table": str(table_dir), "writers": writers}],
        tmp_path,
    )
    table = catalog.get_table(pg, table_dir.name)
    _, commits = head_snapshot(pg, table)
    assert len(commits) == 11 and all(c.version is None for c in commits)
    codecs = {
        writer: {
            pq.ParquetFile(f.path.removeprefix("file://")).metadata.row_group(0).column(1).compression
            for f in commit.files
        }
        for writer, commit in zip(writers, commits, strict=True)
    }  # fmt: skip
    assert codecs == {"jvm": {"SNAPPY"}, "pypi": {"ZSTD"}}
    out = tmp_path / "result"
    code = main(cli(cfg, "read", "--table", table_dir.name, "--out", str(out)))
    assert code == 0
    assert result_rows(out) == oracle(data)


def test_project_written_table_is_read_alike_by_lakesoul_native_reader(cfg, pg, spark, tmp_path):
    data = tmp_path / "data"
    generate(data, 0.0002, seed=17, progress=False)
    table_dir = tmp_path / "tables" / "written_by_project"
    _, table = write(spark, pg, cfg, data, table_dir)
    same = dataclasses.replace(cfg, read=dataclasses.replace(cfg.read, operators=SAME_OPERATORS))
    project = merge_and_read(spark, pg, same, table)
    out = tmp_path / "native"
    run_child(
        cfg,
        [{"do": "stock_read", "table": table.name, "out": str(out), "operators": SAME_OPERATORS}],
        tmp_path,
    )
    native = result_rows(out)
    assert len(native) == len(project) > 0
    assert native == project
