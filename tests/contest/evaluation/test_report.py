"""Results: medians over correct runs, ratios against optimized, the report files."""

from __future__ import annotations

import json

from contest.evaluation.report import compare_table, load_runs, median_of, write_report
from contest.results.runs import JobLoad, RunRecord


def raw(strategy, score, correct=True, write=10.0, read=5.0, scale=0.1):
    """A schema-1 line, as runs.jsonl held before records were typed."""
    return {
        "strategy": strategy,
        "rows_per_core_s": score if correct else None,
        "correct": correct,
        "write_s": write,
        "read_s": read,
        "merge_s": 0.01,
        "scale": scale,
        "when": "2026-11-26T00:00:00Z",
    }


def rec(*args, **kwargs):
    return RunRecord.from_dict(raw(*args, **kwargs))


def test_medians_count_only_correct_runs_and_ratios_use_them():
    records = [
        rec("optimized", 300.0),
        rec("optimized", 100.0),
        rec("optimized", 200.0),
        rec("baseline-mor", 100.0),
        rec("baseline-mor", 999.0, correct=False),
    ]
    table, summary = compare_table(records)
    opt = summary["strategies"]["optimized"]
    assert opt["rows_per_core_s"] == 200.0 and opt["runs"] == 3 and opt["correct"] == 3
    assert summary["strategies"]["baseline-mor"]["correct"] == 1
    assert summary["ratios"] == {"optimized/baseline-mor": 2.0}
    assert "optimized/baseline-mor = 2.0x (single run: not a measured difference)" in table
    assert summary["ratio_notes"] == {
        "optimized/baseline-mor": "single run: not a measured difference"
    }
    assert "200.0 [100.0–300.0]" in table and "100.0 (1 run)" in table
    assert "busy machine" not in table
    assert median_of([None]) is None and median_of([3.0, None, 1.0]) == 2.0


def test_report_writes_table_and_chart(tmp_path):
    runs = tmp_path / "runs.jsonl"
    runs.write_text(
        "\n".join(json.dumps(r) for r in [raw("optimized", 150.0), raw("baseline-cow", 50.0)])
        + "\n"
    )
    assert len(load_runs(runs)) == 2
    readme, chart = write_report(runs)
    text = readme.read_text()
    assert "| 0.1 | optimized | 1 | 1 | ? | 150.0 (1 run) | 10.0 (1 run) |" in text
    assert chart.stat().st_size > 1000 and chart.read_bytes()[:4] == b"\x89PNG"


def test_ratio_says_whether_the_ranges_overlap_and_busy_runs_are_flagged():
    apart = [rec("optimized", 300.0), rec("optimized", 310.0)]
    apart += [rec("baseline-cow", 100.0), rec("baseline-cow", 120.0)]
    _, summary = compare_table(apart)
    assert summary["ratios"] == {"optimized/baseline-cow": 2.77}
    assert summary["ratio_notes"] == {}  # beyond the spread: a measured difference
    close = [rec("optimized", 300.0), rec("optimized", 200.0)]
    close += [rec("baseline-cow", 250.0), rec("baseline-cow", 150.0)]
    busy = RunRecord.from_dict({**raw("baseline-cow", 180.0), "machine_cores": 2})
    busy.load["write"] = JobLoad(load1_before=3.0, outside_share=0.3)
    # An older run's load average judges nothing: only the noise during its jobs.
    old = RunRecord.from_dict({**raw("baseline-cow", 170.0), "machine_cores": 2})
    old.load["write"] = JobLoad(load1_before=3.0)
    table, summary = compare_table([*close, busy, old])
    assert "no significant difference" in summary["ratio_notes"]["optimized/baseline-cow"]
    assert summary["strategies"]["baseline-cow"]["busy"] == 1
    assert (
        "busy machine: 1 of 6 run(s) (baseline-cow: other work held 30% of the CPUs during "
        "the job (write))" in table
    )
    spread = summary["strategies"]["baseline-cow"]["spread"]["rows_per_core_s"]
    assert spread == {"n": 4, "median": 175.0, "min": 150.0, "max": 250.0}


def test_chart_has_a_panel_per_scale_from_zero_with_whiskers_and_n(tmp_path):
    from collections import defaultdict

    import matplotlib.pyplot as plt

    from contest.evaluation.report import chart_figure

    groups = defaultdict(list)
    for strategy, score, scale in [
        ("optimized", 190_000.0, 1.0),
        ("optimized", 210_000.0, 1.0),
        ("baseline-mor", 120_000.0, 1.0),
        ("optimized", 900.0, 0.01),
        ("a-strategy-with-a-long-name", 700.0, 0.01),
    ]:
        groups[(scale, strategy)].append(rec(strategy, score, scale=scale))
    fig = chart_figure(groups)
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["scale 0.01", "scale 1"]
    small, big = axes
    # Each scale has its own axis from zero: scale 0.01's bars fill their panel.
    assert small.get_xlim()[0] == 0 and small.get_xlim()[1] < 2_000
    assert big.get_xlim()[0] == 0 and big.get_xlim()[1] > 210_000
    texts = [t.get_text() for t in big.texts]
    assert "200,000 (n=2)" in texts and "120,000 (n=1)" in texts
    assert " not run" in texts  # the long-named strategy has no run at scale 1
    wrong = rec("baseline-mor", 1.0, correct=False, scale=0.01)
    groups[(0.01, "baseline-mor")].append(wrong)
    plt.close(fig)
    fig = chart_figure(groups)
    assert " no correct run" in [t.get_text() for t in fig.axes[0].texts]
    small, big = fig.axes
    # Strategy names are the shared y axis's tick labels, one per row.
    names = [t.get_text() for t in small.get_yticklabels()]
    assert sorted(names) == ["a-strategy-with-a-long-name", "baseline-mor", "optimized"]
    # The min–max whisker of optimized at scale 1 spans 190,000–210,000.
    segments = [seg for coll in big.collections for seg in coll.get_segments()]
    assert any(seg[0][0] == 190_000 and seg[1][0] == 210_000 for seg in segments)
    plt.close(fig)


def sitting_run(strategy, rnd, score, sitting="2026-11-27T10:00:00Z", **kw):
    """A run of a peer sitting (`contest bench peers`), as its record holds it."""
    settings = {
        "codec": "preset",
        "rounds": 3,
        "strategies": ["optimized", "paimon-agg", "delta-dv", "baseline-mor"],
    }
    return {
        **raw(strategy, score, **kw),
        "sitting": sitting,
        "compare_round": rnd,
        "attempt": 1,
        "settings": settings,
        "environment": {"machine": {"cpu_model": "Test CPU 9000"}},
    }


def test_the_headline_comes_only_from_sittings(tmp_path):
    runs = tmp_path / "runs.jsonl"
    # Pooled history: optimized's runs across commits and loads, never the headline.
    lines = [raw("optimized", s, scale=1.0) for s in (180.0, 200.0, 220.0)]
    runs.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    readme, _ = write_report(runs)
    text = readme.read_text()
    head = text.split("## History")[0]
    assert "no sitting published yet: no headline figure" in head and "200" not in head
    assert "## History: every published run, pooled (not a comparison)" in text

    # One sitting at scale 1: three rounds; round 2's paimon-agg busy (left out).
    sitting = [
        sitting_run("optimized", 1, 300.0, scale=1.0),
        sitting_run("paimon-agg", 1, 100.0, scale=1.0),
        sitting_run("delta-dv", 1, 10.0, scale=1.0),
        sitting_run("optimized", 2, 330.0, scale=1.0),
        {
            **sitting_run("paimon-agg", 2, 300.0, scale=1.0),
            "load": {"write": {"outside_share": 0.4}},
        },
        sitting_run("delta-dv", 2, 11.0, scale=1.0),
        sitting_run("optimized", 3, 360.0, scale=1.0),
        sitting_run("paimon-agg", 3, 120.0, scale=1.0),
        sitting_run("delta-dv", 3, 12.0, scale=1.0),
    ]
    # The harness's own baseline, faster than every peer, is not the one to beat.
    sitting += [sitting_run("baseline-mor", r, 250.0, scale=1.0) for r in (1, 2, 3)]
    (tmp_path / "peer_sittings.jsonl").write_text("\n".join(json.dumps(r) for r in sitting) + "\n")
    readme, _ = write_report(runs)
    head = readme.read_text().split("## History")[0]
    # optimized's median of its three rounds, the fastest peer (paimon-agg, its two
    # quiet rounds) and the round-by-round ratio 300/100, 360/120: 3.00x, n = 2.
    assert (
        "- scale 1, contest / contest files, codec preset: **330 rows/core/s** [300–360] n=3"
        in head
    )
    # Two peers ran (paimon-agg, delta-dv): the sitting's own, named as such.
    assert (
        "optimized / the fastest of the sitting's 2 peers (paimon-agg): 3.00x [3.00-3.00] n=2"
        in head
    )
    assert "(sitting `2026-11-27T10:00:00Z`, Test CPU 9000)" in head  # the sitting's CPU
