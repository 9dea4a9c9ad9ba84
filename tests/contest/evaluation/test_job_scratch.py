"""A timed job's Spark scratch folder (spark.local.dir) is under its run's folder for a
local master, made for the job and removed after it (a folder there before stays), and
the configured driver JVM options reach its command line."""

import dataclasses

from contest.evaluation.jobs import scratch_dir, scratch_folder, spark_submit


def _conf(cmd: list[str]) -> dict[str, str]:
    pairs = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--conf"]
    return dict(p.split("=", 1) for p in pairs)


def test_a_local_jobs_scratch_is_under_its_run_folder_and_a_clusters_is_its_workers(cfg, tmp_path):
    spark = dataclasses.replace(cfg.spark, java_options="-XX:+UseSerialGC")
    jit = dataclasses.replace(cfg, spark=spark)
    cmd = spark_submit(jit, "write", 2, tmp_path / "c.toml", [])
    assert _conf(cmd)["spark.local.dir"] == str(tmp_path / "spark-scratch")
    options = cmd[cmd.index("--driver-java-options") + 1]
    assert options.startswith("-Dlog4j2.configurationFile=") and "-XX:+UseSerialGC" in options
    remote = spark_submit(cfg, "write", 2, tmp_path / "c.toml", [], master="spark://h:7077")
    assert "spark.local.dir" not in _conf(remote)


def test_the_scratch_folder_is_the_jobs_only_when_it_made_it(tmp_path):
    with scratch_folder(tmp_path) as scratch:
        assert scratch == scratch_dir(tmp_path) and scratch.is_dir()
        (scratch / "blockmgr-1").mkdir()
    assert not scratch.exists()
    scratch.mkdir()
    (scratch / "theirs").write_text("kept")
    with scratch_folder(tmp_path):
        pass
    assert (scratch / "theirs").read_text() == "kept"
