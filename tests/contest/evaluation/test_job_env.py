"""The environment timed jobs inherit: native debugging switches that change what a job
costs (RUST_BACKTRACE: LakeSoul's Rust IO captures a backtrace per error value) are not
passed on; everything else is."""

from contest.config import load_config
from contest.evaluation.evaluate import TIMING_UNSAFE_ENV, child_env, job_env


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
