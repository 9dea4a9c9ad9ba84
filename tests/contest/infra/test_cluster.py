"""The whole pipeline on a Spark standalone cluster (2 workers x 1 core) with the table
on the embedded S3 server: write, metadata merge, read, oracle check; then LakeSoul's
own native reader on the same objects."""

import json

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.infra.cluster import Standalone
from tests.support.config import cli

pytestmark = pytest.mark.slow


def test_the_cluster_runs_two_workers(cfg, standalone):
    status = Standalone.of(cfg).status()
    assert status["running"] and status["master_url"] == standalone["master_url"]
    assert status["aliveworkers"] == 2 and status["cores"] == 2


def test_evaluate_on_the_cluster_with_the_table_on_s3(cfg, pg, s3, standalone, capsys):
    import shutil

    local_tables = cfg.work_path / "eval" / "tables"
    shutil.rmtree(local_tables, ignore_errors=True)  # left by earlier local evaluations
    code = main(
        cli(
            cfg,
            "--set",
            "tables_dir=s3://lake/eval",
            "evaluate",
            "--scale",
            "0.0005",
            "--master",
            standalone["master_url"],
            "--cores",
            "2",
            "--results",
            "-",
        )
    )
    out, err = capsys.readouterr()
    rec = json.loads(out.strip().splitlines()[-1])
    assert code == 0, err[-3000:]
    assert rec["correct"] and rec["master"] == standalone["master_url"]
    assert rec["cores"] == 2 and rec["spark_cores"] == {"write": 2, "read": 2}
    # the table's files are objects of the S3 server, not files of the work folder
    objects = list((cfg.state_path / "s3" / "data" / "lake" / "eval").rglob("part-*.parquet"))
    assert len(objects) >= 11
    assert not local_tables.exists()

    # LakeSoul's native reader (object_store_options) reads the table from the store
    from contest.infra.storage import lakesoul_options
    from meta import catalog

    native = catalog.native_catalog(pg, cfg.table.namespace, lakesoul_options(s3.s3))
    got = native.table(rec["table"]).scan().to_arrow_table()
    result = pq.read_table(rec["result_dir"])
    assert set(pc.unique(got.column("uuid")).to_pylist()) == set(result.column("uuid").to_pylist())
