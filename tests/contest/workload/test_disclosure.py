"""A workload's phase records carry the full disclosure a benchmark's stamp does
(contest/evaluation/disclosure.py): the CPU, every library's version and the strategy's
effective configuration; its disclosure page shows them, an older line's page says
what it lacks."""

from __future__ import annotations

import json

from contest.config import as_dict, load_config
from contest.evaluation.strategies import STRATEGIES
from contest.infra.machine import machine_facts
from contest.results.disclosure import disclose, render
from contest.results.registry import FILES
from contest.workload.phases import Runner


def test_a_phase_record_discloses_its_machine_libraries_and_configuration(tmp_path) -> None:
    cfg = load_config(preset=STRATEGIES["optimized"], overrides={"work_dir": str(tmp_path)})
    rec = Runner("tiny", 0.01, [], print).refused("optimized", cfg, "no such operator")
    env = rec.environment or {}
    assert env["machine"]["cpu_model"] == machine_facts(tmp_path)["cpu_model"]
    assert "pyarrow" in env["libraries"] and env["jvm_packages"]
    assert rec.config == as_dict(cfg)
    # Written and read back as a published workload file's line.
    line = json.loads(json.dumps(rec.to_dict(), sort_keys=True))
    (back,) = [FILES["workloads"].parse(line)]
    (d,) = disclose("workloads/tiny", [back])
    page = render(d)
    assert f"CPU: {env['machine']['cpu_model'] or 'CPU model not recorded'}" in page
    assert f"pyarrow {env['libraries']['pyarrow']}" in page
    assert '"work_dir": "' + str(tmp_path) in page


def test_an_older_phase_line_says_what_it_did_not_record() -> None:
    old = {"workload": "tiny", "run_id": "r", "strategy": "optimized", "step": 1,
           "phase": "upsert", "label": "upsert 0", "machine_id": "vm-1"}  # fmt: skip
    rec = FILES["workloads"].parse(old)
    assert "environment" not in rec.to_dict() and "config" not in rec.to_dict()
    page = render(disclose("workloads/tiny", [rec])[0])
    assert "machine id `vm-1`; CPU: CPU model not recorded" in page
    assert "environment (libraries' versions): not recorded" in page
    assert "Not recorded (lines from before the records carried it)." in page
