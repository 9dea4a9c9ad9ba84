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


def test_a_batch_line_says_how_its_rows_were_split(caplog):
    import logging

    from contest.write.report import log_batch

    cases = [
        (BatchResult("b", 0, commit_id="c"), "no shuffle, write"),
        (BatchResult("b", 0, shuffled=True, parts=8, commit_id="c"), "by key into 8 parts"),
        (BatchResult("b", 0, parts=8, commit_id="c"), "no shuffle, 8 parts by row range"),
    ]
    with caplog.at_level(logging.INFO, logger="contest.write"):
        for res, text in cases:
            log_batch(res)
            assert text in caplog.records[-1].getMessage()
            assert caplog.records[-1].getMessage().startswith("b v0: 0 rows, ")
