"""The cores a score divides by, and the options a cluster job is submitted with."""

import pytest

from contest.config import Config
from contest.errors import RunError
from contest.evaluation.submit import cluster_options, job_cores, scored_cores


def test_scored_cores_are_the_granted_ones():
    assert scored_cores(None, {"write": 2, "read": 2}) == 2
    assert scored_cores(2, {"write": 2, "read": 2}) == 2
    assert scored_cores(4, {"write": None, "read": None}) == 4  # a job that did not say


def test_a_run_granted_other_cores_than_asked_is_not_scored():
    with pytest.raises(RunError, match="granted 1 cores but --cores is 2"):
        scored_cores(2, {"write": 1, "read": 1})
    with pytest.raises(RunError, match="different cores"):
        scored_cores(None, {"write": 2, "read": 1})
    with pytest.raises(RunError, match="did not report"):
        scored_cores(None, {"write": None, "read": None})


def test_job_cores_come_from_the_jobs_last_json_line(tmp_path):
    log = tmp_path / "job.log"
    log.write_text('noise\n{"table": "t", "spark_cores": 3}\nwrote t\n')
    assert job_cores(log) == 3
    log.write_text("no json here\n")
    assert job_cores(log) is None
    assert job_cores(tmp_path / "missing.log") is None


def test_cluster_options(tmp_path):
    zip_path = tmp_path / "contest.zip"
    opts = cluster_options(Config(), "spark://127.0.0.1:7077", 2, zip_path, s3a=False)
    assert opts[:2] == ["--py-files", str(zip_path)]
    assert "spark.cores.max=2" in opts
    assert "spark.scheduler.minRegisteredResourcesRatio=1.0" in opts
    # local runs stay as they were: no options at all
    assert cluster_options(Config(), "local[2]", 2, None, s3a=False) == []
    assert cluster_options(Config(), "local[2]", 2, None, s3a=True)[0] == "--packages"
