"""The write's one-line summary: counts, the first failure, and a next step that the
engine that wrote can actually take."""

from contest.write.report import BatchResult, WriteReport


def _report(**kw) -> WriteReport:
    report = WriteReport("default.t", "/tables/t", **kw)
    report.batches = [
        BatchResult("base-0.parquet", 0, commit_id="c0"),
        BatchResult("base-1.parquet", 1, error="disk full"),
    ]
    return report


def test_summary_names_the_failure_and_suggests_resume():
    line = _report().summary()
    assert "1 of 2 batches committed" in line
    assert "FAILED 1 (base-1.parquet)" in line and "disk full" in line
    assert line.endswith("-- rerun with --resume to finish")


def test_an_engine_without_resume_says_what_to_do_instead():
    line = _report(retry_hint="rerun the write with --replace").summary()
    assert "--resume" not in line and line.endswith("-- rerun the write with --replace")
