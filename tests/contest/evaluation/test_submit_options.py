"""spark-submit options from several sources: one --packages, additive settings joined."""

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
