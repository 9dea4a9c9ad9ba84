"""The environment timed jobs inherit: native debugging switches that change what a job
costs (RUST_BACKTRACE: LakeSoul's Rust IO captures a backtrace per error value) are not
passed on; everything else is. And the config they read names the project's jar."""

from pathlib import Path

from contest.config import load_config
from contest.evaluation.jobs import TIMING_UNSAFE_ENV, child_env, job_env


def test_job_env_drops_rust_backtrace_and_keeps_the_rest():
    base = {"RUST_BACKTRACE": "1", "RUST_LIB_BACKTRACE": "full", "PATH": "/bin", "HOME": "/h"}
    assert job_env(base) == {"PATH": "/bin", "HOME": "/h"}
    assert base["RUST_BACKTRACE"] == "1"  # the caller's mapping is left alone


def test_timed_jobs_run_without_rust_backtrace(monkeypatch):
    monkeypatch.setenv("RUST_BACKTRACE", "1")
    monkeypatch.setenv("RUST_LIB_BACKTRACE", "1")
    monkeypatch.setenv("CONTEST_TEST_MARKER", "kept")
    env = child_env(load_config())
    assert not set(TIMING_UNSAFE_ENV) & set(env)
    assert env["CONTEST_TEST_MARKER"] == "kept"
    assert env["PYSPARK_PYTHON"]  # what child_env adds is still there


def test_a_jobs_config_names_the_projects_jar_by_path(tmp_path):
    """A job on a cluster runs from a zip of the package: it cannot find jvm/target from
    its own code, so the config it reads names the checkout's jar (or keeps the given one)."""
    import dataclasses

    import contest
    from contest.evaluation.jobs import child_config

    cfg = load_config(env={}, overrides={"work_dir": str(tmp_path / "w")})
    child = child_config(cfg)
    checkout = Path(contest.__file__).resolve().parents[1]
    assert child.spark.stock_helper_jar == str(checkout / "jvm/target/contest-lakesoul-stock.jar")
    assert Path(child.work_dir).is_absolute()
    spark = dataclasses.replace(cfg.spark, stock_helper_jar="/j.jar")
    given = dataclasses.replace(cfg, spark=spark)
    assert child_config(given).spark.stock_helper_jar == "/j.jar"
