"""spark-submit options from several sources: one --packages, additive settings joined."""

import pytest

from contest.evaluation.submit import merge_options


def test_repeated_list_flags_and_additive_confs_are_joined():
    stock = [
        "--packages",
        "a:b:1,c:d:2",
        "--jars",
        "/x.jar",
        "--conf",
        "spark.executor.extraJavaOptions=-Dlakesoul_home=/p",
    ]
    s3 = ["--packages", "h:aws:3", "--conf", "spark.cores.max=2"]
    cluster = [
        "--conf",
        "spark.executor.extraJavaOptions=-Dx=1",
        "--conf",
        "spark.cores.max=4",
        "--py-files",
        "/pkg.zip",
    ]
    out = merge_options(stock, s3, cluster)
    pairs = list(zip(out[::2], out[1::2], strict=True))
    assert ("--packages", "a:b:1,c:d:2,h:aws:3") in pairs
    assert [p for p in pairs if p[0] == "--packages"] == [("--packages", "a:b:1,c:d:2,h:aws:3")]
    assert ("--conf", "spark.executor.extraJavaOptions=-Dlakesoul_home=/p -Dx=1") in pairs
    assert ("--conf", "spark.cores.max=4") in pairs  # last wins for plain settings
    assert ("--jars", "/x.jar") in pairs and ("--py-files", "/pkg.zip") in pairs
    assert merge_options([], []) == []


@pytest.mark.jars  # the peers' fetched jars and the record merger's, made by ./build.sh
def test_every_strategys_timed_job_resolves_nothing(cfg, tmp_path):
    """Nothing charged to one side: each strategy's timed job gets its JVM libraries as
    jars by path (resolved by Spark's Ivy before it starts), never --packages, which
    made every peer job resolve inside its timed window."""
    from pathlib import Path

    from contest.config import load_config
    from contest.evaluation.jobs import spark_submit
    from contest.evaluation.strategies import STRATEGIES
    from contest.peers.registry import package_sets

    for name in ("paimon-agg", "delta-dv", "iceberg-mor", "hudi-merger"):
        strat = load_config(
            env={},
            overrides={"state_dir": cfg.state_dir, "work_dir": str(tmp_path)},
            preset=STRATEGIES[name],
        )
        cmd = spark_submit(strat, "write", 2, tmp_path / "c.toml", [])
        assert "--packages" not in cmd, name
        jars = [Path(j) for j in cmd[cmd.index("--jars") + 1].split(",")]
        assert all(j.is_file() for j in jars), name
        pinned = package_sets()[strat.peer.format.removesuffix("-merger")][0]
        group, artifact, version = pinned.split(":")
        assert any(j.name == f"{group}_{artifact}-{version}.jar" for j in jars), name
        # A jar the format names through spark.jars (hudi-merger's record merger) stays:
        # --jars is spark.jars, and spark-submit would drop it otherwise.
        assert not any(c.startswith("spark.jars=") for c in cmd), name
        if name == "hudi-merger":
            assert any(j.name == "contest-lakesoul-stock.jar" for j in jars)
