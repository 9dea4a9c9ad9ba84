"""Results: medians over correct runs, ratios against optimized, the report files."""

from __future__ import annotations

import json

from contest.evaluation.records import RunRecord
from contest.evaluation.results import compare_table, load_runs, median_of, write_report


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
    assert "optimized/baseline-mor = 2.0x" in table
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
    assert "| 0.1 | optimized | 1 | 1 | 150.0 |" in text
    assert chart.stat().st_size > 1000 and chart.read_bytes()[:4] == b"\x89PNG"
