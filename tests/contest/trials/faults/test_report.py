"""The fault experiments' outcomes: the goal, the records and the table rendered from
the newest record of each experiment."""

from __future__ import annotations

import json

import pytest

from contest.errors import UsageError
from contest.results.benchmarks import FaultRecord
from contest.sitting import Results
from contest.trials.faults.bench import FaultsBench, experiments
from contest.trials.faults.plan import EXPERIMENTS
from contest.trials.faults.report import Outcome, latest_outcomes, render_markdown


def write_fault_results(outcomes, info, folder):
    results = Results(folder, FaultsBench.stem)
    results.append({**info, **o.to_dict()} for o in outcomes)
    return FaultsBench().publish(results)


def test_goal_and_results_files(tmp_path):
    good = Outcome("kill_write", "exp a", "contest write --resume", trials=2, recovered=2)
    lossy = Outcome("kill_merge", "exp b", "x", trials=1, recovered=1, lost=1)
    unsafe = Outcome("pg_crash_unsafe", "exp c", "x", trials=1, recovered=1, lost=3)
    unsafe.expected_losses = True
    skipped = Outcome("disk_full", "exp d", "x", not_run="mount refused: permission denied")
    assert good.goal_met and not lossy.goal_met and unsafe.goal_met and not skipped.goal_met
    write_fault_results([skipped, lossy], {"scale": 0.01, "when": "t1"}, tmp_path)
    lossy.lost = 0  # a later run of one experiment replaces its row
    md = write_fault_results([lossy, unsafe, good], {"scale": 0.01, "when": "t2"}, tmp_path)
    text = md.read_text()
    assert "| exp a | 2 |" in text and "losses expected" in text and "NOT MET" not in text
    assert "mount refused: permission denied" in text and "t1" in text and "t2" in text
    assert text.index("exp a") < text.index("exp b") < text.index("exp c") < text.index("exp d")
    assert "| exp b | 1 | 0 | 0 |" in text and "| exp b | 1 | 0 | 1 |" not in text
    rows = [json.loads(x) for x in (tmp_path / "faults.jsonl").read_text().splitlines()]
    assert [r["name"] for r in rows] == [
        "disk_full",
        "kill_merge",
        "kill_merge",
        "pg_crash_unsafe",
        "kill_write",
    ]
    typed = [FaultRecord.from_dict(r) for r in rows]
    assert [o.name for o in latest_outcomes(typed)][:2] == ["kill_write", "kill_merge"]
    assert render_markdown([]).startswith("# Fault injection")


def test_only_names_known_experiments():
    assert experiments(None) == EXPERIMENTS
    assert experiments(["kill_read", "pg_crash"]) == ("kill_read", "pg_crash")
    with pytest.raises(UsageError, match="unknown experiment kill_all"):
        experiments(["kill_read", "kill_all"])
    with pytest.raises(UsageError, match="none given"):
        experiments([])
