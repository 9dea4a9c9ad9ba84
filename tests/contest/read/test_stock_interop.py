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
from meta.merge import merge_table
from tests.support.config import cli
from tests.support.lakesoul import result_rows, run_child
from tests.support.pipeline import oracle, read_rows, write

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


@pytest.fixture(scope="module")
def interop(cfg, pg, spark, tmp_path_factory) -> dict:
    """Both directions' LakeSoul jobs in one child process (one JVM with LakeSoul's jars):
    a table written by LakeSoul's writers; the NativeIOReader's read of a table the
    project wrote (and merged) with the project's operators."""
    tmp = tmp_path_factory.mktemp("interop")
    data = tmp / "data"
    generate(data, 0.0002, seed=16, nulls=True, progress=False)
    lakesoul_dir = tmp / "tables" / "written_by_lakesoul"
    writers = ["jvm", "pypi"] * 5 + ["jvm"]
    for i, writer in enumerate(writers):
        if writer == "pypi":
            one_row_per_key(data / f"base-{i}.parquet")
    project_data = tmp / "project-data"
    generate(project_data, 0.0002, seed=17, progress=False)
    _, project = write(spark, pg, cfg, project_data, tmp / "tables" / "written_by_project")
    merge_table(pg, project)
    native = tmp / "native"
    run_child(
        cfg,
        [
            {"do": "lakesoul_table", "data": str(data), "table": str(lakesoul_dir),
             "writers": writers},
            {"do": "stock_read", "table": project.name, "out": str(native),
             "operators": SAME_OPERATORS},
        ],
        tmp,
    )  # fmt: skip
    return {"data": data, "lakesoul": lakesoul_dir, "writers": writers, "project": project,
            "native": native}  # fmt: skip


def test_lakesoul_written_table_is_read_exactly_by_contest_read(cfg, pg, interop, tmp_path):
    data, table_dir, writers = interop["data"], interop["lakesoul"], interop["writers"]
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


def test_project_written_table_is_read_alike_by_lakesoul_native_reader(cfg, pg, spark, interop):
    same = dataclasses.replace(cfg, read=dataclasses.replace(cfg.read, operators=SAME_OPERATORS))
    project = read_rows(spark, pg, same, interop["project"])
    native = result_rows(interop["native"])
    assert len(native) == len(project) > 0
    assert native == project
