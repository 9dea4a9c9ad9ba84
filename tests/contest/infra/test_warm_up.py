"""spark.warm_up: the tiny action a new session runs on a thread of its own."""

from __future__ import annotations

from contest.infra import warm_up


def test_the_warm_up_runs_one_python_arrow_job_in_its_own_group(spark):
    before = set(spark.sparkContext.statusTracker().getJobIdsForGroup(warm_up.GROUP))
    thread = warm_up.start(spark)
    thread.join(timeout=300)
    assert not thread.is_alive() and thread.daemon and thread.name == warm_up.GROUP
    tracker = spark.sparkContext.statusTracker()
    jobs = set(tracker.getJobIdsForGroup(warm_up.GROUP)) - before
    assert len(jobs) == 1
    (job,) = jobs
    assert tracker.getJobInfo(job).status == "SUCCEEDED"
    # Its group was its own thread's: this thread's jobs are in none.
    assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") != warm_up.GROUP
