"""Phase records rendered and published: the markdown page with the degradation rates,
the chart beside it, and `contest workload publish` (no Spark: records built here)."""

from contest.cli.main import main
from contest.results.workloads import PhaseRecord, append, load
from contest.workload.report import degradation, markdown


def _run(run_id: str, strategy: str, reads: list[float]) -> list[PhaseRecord]:
    out, step, applied = [], 1, 0
    for n, seconds in enumerate(reads):
        applied += 2
        base = {"workload": "w", "run_id": run_id, "strategy": strategy}
        out.append(
            PhaseRecord(
                **base, step=step, phase="upsert", label="upsert", batch_first=applied - 2,
                batch_last=applied - 1, batches_applied=applied, seconds=1.0 + n,
                files_per_bucket=float(n + 1), stored_bytes=1000,
            )
        )  # fmt: skip
        out.append(
            PhaseRecord(
                **base, step=step + 1, phase="read", label="read", batches_applied=applied,
                seconds=seconds, version=applied - 1, correct=True,
            )
        )  # fmt: skip
        step += 2
        if n == 1:
            out.append(
                PhaseRecord(**base, step=step, phase="compact", label="compact", seconds=0.5)
            )
            step += 1
    return out


def test_degradation_of_a_run_and_its_page():
    recs = _run("r1", "optimized", [1.0, 2.0, 1.0, 1.5])
    overall, between = degradation(recs)
    assert between == (1.0 + 0.5) / 2  # 1 -> 2, then after the compaction 1 -> 1.5
    assert overall == (1.0 - 0.5 + 0.5) / 3
    page = markdown("w", recs, ["w.png"])
    assert "| r1 | optimized | 4 | yes | +33.3% | +75.0% | - | - |" in page  # no job s
    assert "![w.png](w.png)" in page


def test_the_reads_own_seconds_have_their_degradation_too():
    """The job's own seconds (the process's less its fixed start and stop) degrade at
    their own rate: here the process is flat while the read's own work doubles."""
    recs = _run("r1", "optimized", [5.0, 5.0, 5.0, 5.0])
    for r, own in zip([r for r in recs if r.phase == "read"], [1.0, 2.0, 1.0, 2.0], strict=True):
        r.job_seconds = own
    assert degradation(recs) == (0.0, 0.0)
    assert degradation(recs, "job_seconds") == ((1.0 - 0.5 + 1.0) / 3, 1.0)
    page = markdown("w", recs, [])
    assert "| r1 | optimized | 4 | yes | +0.0% | +0.0% | +50.0% | +100.0% |" in page
    assert "| 5.000 | 2.000 |" in page  # the phases table: seconds, then job s


def test_a_skipped_compaction_does_not_split_the_reads_and_says_why():
    """Stock LakeSoul's compaction step is recorded as skipped: the reads around it are
    one segment (no compaction ran between them), and the page says why."""
    recs = _run("r1", "lakesoul-stock", [1.0, 2.0, 1.0, 1.5])
    compact = next(r for r in recs if r.phase == "compact")
    why = "write.engine=lakesoul-stock: no compaction for it in this harness"
    compact.seconds, compact.skipped = None, why
    overall, between = degradation(recs)
    assert between == overall == (1.0 - 0.5 + 0.5) / 3
    page = markdown("w", recs, [])
    assert "| compact |" in page and f"skipped: {why}" in page


def test_publish_appends_a_run_once_and_renders_it(tmp_path, capsys):
    local = tmp_path / "local.jsonl"
    append(local, _run("r1", "optimized", [1.0, 1.1]) + _run("r2", "optimized", [1.0, 1.2]))
    target = tmp_path / "pub" / "w.jsonl"
    argv = ["workload", "publish", "w", "--source", str(local), "--to", str(target)]
    assert main(argv) == 0
    assert {r.run_id for r in load(target)} == {"r2"}  # the last run by default
    assert target.with_suffix(".md").is_file() and target.with_suffix(".png").stat().st_size > 0
    capsys.readouterr()
    assert main(argv) == 2  # already published
    assert "already in" in capsys.readouterr().err
    assert main([*argv, "--run", "r9"]) == 2


def test_chart_legend_outside_axis_labels_and_files_only_where_counted():
    """One legend below the panels (not over the lines), a y label on each panel, and
    no files-per-bucket line for a strategy whose files were counted at compactions
    only (a peer's: drawn as a flat 1 before)."""
    import matplotlib.pyplot as plt

    from contest.workload.report import chart_figure

    peer = _run("r2", "delta-merge", [2.0, 2.2, 2.4])
    for i, p in enumerate(peer):  # a peer's files are counted at its compaction only
        peer[i] = PhaseRecord(
            **{**p.to_dict(), "files_per_bucket": 1.0 if p.phase == "compact" else None}
        )
    fig = chart_figure(_run("r1", "optimized", [1.0, 1.1, 1.2]) + peer)
    fig.canvas.draw()
    assert all(ax.get_legend() is None for ax in fig.axes)
    (legend,) = fig.legends
    legend_top = legend.get_window_extent().y1
    assert all(legend_top <= ax.get_window_extent().y0 for ax in fig.axes)
    assert all(ax.get_ylabel() for ax in fig.axes)
    files = fig.axes[3]
    assert [line.get_label() for line in files.get_lines()] == ["optimized r1"]
    plt.close(fig)


def test_a_run_whose_every_strategy_refused_writes_its_report_in_a_new_folder(tmp_path):
    """`contest workload run wide --strategies paimon-agg` once ended in a traceback
    (FileNotFoundError writing wide.png: the folder was never made, no record written).
    Now the refusal is a record of its own and the page says it in one line."""
    from contest.workload.report import write_report

    why = "lakesoul-stock: merge operator Max (column peak_01) is not expressible"
    refused = PhaseRecord(
        workload="wide", run_id="r1", strategy="lakesoul-stock", step=0, phase="refused",
        label="refused", skipped=why,
    )  # fmt: skip
    target = tmp_path / "results" / "machine" / "workloads" / "wide.jsonl"
    wrote = write_report(target, "wide", [])
    assert all(p.is_file() for p in wrote)
    page = markdown("wide", [refused], [])
    assert "| r1 | lakesoul-stock | 0 | refused |" in page
    assert f"skipped: {why}" in page


def test_reads_by_kind_count_exact_refused_and_wrong_reads():
    """The page's 'Reads by kind': a refused read is counted as refused with
    its one line shown in the phases, never as wrong; a strategy refused whole says so."""
    base = {"workload": "w", "run_id": "r1"}
    recs = [
        PhaseRecord(**base, strategy="a", step=1, phase="read", label="read as of 2",
                    version=2, correct=True),
        PhaseRecord(**base, strategy="a", step=2, phase="changes",
                    label="changes after 1 up to 4", version=4, from_version=1, correct=True),
        PhaseRecord(**base, strategy="a", step=3, phase="changes",
                    label="changes after 2 up to 8", refused="start vacuumed: from 8 on"),
        PhaseRecord(**base, strategy="a", step=4, phase="read", label="read", version=8,
                    correct=False, ok=False, error="wrong"),
        PhaseRecord(**base, strategy="b", step=0, phase="refused", label="refused",
                    skipped="head only"),
    ]  # fmt: skip
    page = markdown("w", recs, [])
    assert "| r1 | a | as of | 1 | 0 | 0 |" in page
    assert "| r1 | a | changes | 1 | 1 | 0 |" in page
    assert "| r1 | a | head | 0 | 0 | 1 |" in page
    assert "| r1 | b | every | - | all: head only | - |" in page
    assert "refused: start vacuumed: from 8 on" in page and "| 1..4 |" in page


def test_noise_measured_during_the_jobs_is_summed_up_and_busy_phases_marked():
    recs = _run("r1", "optimized", [1.0, 1.0])
    assert "Noise measured" not in markdown("w", recs, [])  # lines from before it
    reads = [r for r in recs if r.phase == "read"]
    reads[0].outside_share, reads[0].peak_outside_share, reads[0].steal_share = 0.02, 0.2, 0.0
    reads[1].outside_share, reads[1].peak_outside_share, reads[1].steal_share = 0.03, 0.6, 0.001
    assert reads[0].busy is None and "60%" in str(reads[1].busy)
    again = PhaseRecord.from_dict(reads[1].to_dict())
    assert again.busy == reads[1].busy  # the shares survive the JSON line
    page = markdown("w", recs, [])
    assert "during 2 phases' jobs" in page and "mean at most 3.0%" in page
    assert "2-s peak at most 60%" in page and "1 busy" in page
    assert "| yes; busy: other work held 60% of the CPUs at a peak during the job |" in page


def test_a_page_of_several_runs_gives_each_runs_own_conditions():
    old, new = _run("r1", "optimized", [1.0, 1.0]), _run("r2", "optimized", [1.0, 1.0])
    for r in old:
        r.git_commit, r.load1 = "aaa", 20.0
    for r in new:
        r.git_commit, r.load1, r.outside_share, r.peak_outside_share = "bbb", 2.0, 0.01, 0.1
    page = markdown("w", old + new, [])
    assert (
        "Run r1: machine" in page
        and "commit aaa; 1-minute load during the phases 20.0-20.0" in page
    )
    assert (
        "Run r2: machine" in page and "commit bbb; 1-minute load during the phases 2.0-2.0" in page
    )
    assert page.count("Noise measured") == 1  # r1's lines had none
    assert page.index("Run r2") < page.index("Noise measured during 5 phases' jobs")


def test_the_summary_gives_each_strategys_run_one_row():
    """First and last plain read with their ratio, write per batch over the upserts, the
    mean compaction, the most files per bucket, what was stored at the end; `-` where
    nothing was measured."""
    recs = _run("r1", "optimized", [1.0, 2.0, 1.0, 1.5])
    page = markdown("w", recs, [])
    # upserts after the base (batches 0-1): 2+3+4 s over 6 batches; the one compaction
    # 0.5 s; 4 files at most.
    row = (
        "| r1 | optimized | yes (4) | 1.00 (2) | 1.50 (8) | 1.50 | - | 1.50 | 0.5 | 4 | 0 "
        "| - | - | - |"
    )
    assert row in page
    assert page.index("## Summary") < page.index("## Degradation rate")


def test_the_summary_says_no_for_a_wrong_read_and_counts_refused_and_busy_phases():
    recs = _run("r1", "b", [2.0, 3.0, 4.0])
    reads = [r for r in recs if r.phase == "read"]
    reads[1].correct = False
    reads[0].job_seconds, reads[1].job_seconds = 1.0, 3.0
    reads[2].refused, reads[2].correct = "no time travel", None
    for r in recs:
        r.outside_share, r.peak_outside_share, r.steal_share = 0.01, 0.1, 0.0
        r.peak_rss_bytes = 2_000_000_000
    reads[0].peak_outside_share = 0.7  # busy: a 70% peak
    page = markdown("w", recs, [])
    row = next(line for line in page.splitlines() if line.startswith("| r1 | b | NO"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "NO (2); 1 refused"
    # The refused read is not the last read: the last that answered is the second.
    assert cells[3:7] == ["2.00 (2)", "3.00 (4)", "1.50", "1.00 -> 3.00"]
    assert cells[11:] == ["2.0", "1.0% / 70%", "1 of 7"]
