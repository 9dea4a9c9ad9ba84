"""A longevity block's maintenance policies and reads as plans (pure, no jobs): where
`read_every` puts the checked reads, where `every:N` puts compaction, expiry and the
read that must equal the one before, `none` and `auto` issuing none, `compact_every`
as it was, one-line errors naming the file and key; an `auto` lane's configuration and
words from the format's registry entry; and the shipped cdc-longevity workload."""

from __future__ import annotations

from typing import Any

import pytest

from contest.config import load_config
from contest.data.workload import workload_settings
from contest.errors import ConfigError
from contest.evaluation.strategies import STRATEGIES
from contest.results.workloads import PhaseRecord
from contest.workload.maintenance import (
    Policy,
    auto_config,
    auto_note,
    auto_of,
    parse_maintenance,
    round_kinds,
)
from contest.workload.plan import (
    ONE_APPLICATION,
    PER_PHASE,
    build_plan,
    build_plans,
    load_plans,
)
from contest.workload.report import markdown

BASE = [{"kind": "upsert", "batches": 0}]


def longevity(**block) -> dict:
    return {"phase": BASE, "longevity": {"upsert": 1, **block}}


def labels(steps) -> list[str]:
    return [s.label for s in steps]


def test_read_every_k_rounds_and_always_after_the_last():
    steps = build_plan(longevity(read_every=3, maintenance="none"), 8, "w")  # rounds 1-7
    reads = [s.round for s in steps if s.kind == "read"]
    assert reads == [3, 6, 7]
    assert labels(steps[-3:]) == ["upsert 7", "merge", "read"]
    assert not any(s.kind in ("compact", "vacuum") for s in steps)


def test_every_n_compacts_expires_and_reads_again_bracketed_by_reads():
    steps = build_plan(longevity(read_every=4, maintenance="every:2"), 7, "w")  # rounds 1-6
    after_round: dict[int, list[str]] = {}
    for s in steps:
        if s.kind != "upsert":
            after_round.setdefault(s.round, []).append(s.label)
    maintained = ["merge", "read", "compact", "vacuum", "read after maintenance"]
    # Round 2 and 6: maintenance, a read forced before it; round 4: the due read, then
    # maintenance; the last round's maintenance too (its read after is the last read).
    assert after_round == {2: maintained, 4: maintained, 6: maintained}
    rechecks = [s for s in steps if s.recheck]
    assert len(rechecks) == 3 and all(s.kind == "read" for s in rechecks)


def test_auto_and_none_issue_no_maintenance_and_share_their_steps():
    plan = build_plans(longevity(read_every=2, maintenance=["none", "auto", "every:3"]), 7, "w")
    assert plan.named and [p.name for p in plan.policies] == ["none", "auto", "every:3"]
    assert [p.folder for p in plan.policies] == ["none", "auto", "every-3"]
    none, auto, every = plan.steps.values()
    assert none == auto
    assert (
        sum(s.kind == "compact" for s in every) == 2 and sum(s.kind == "vacuum" for s in every) == 2
    )


def test_compact_every_is_every_m_on_compaction_alone_and_names_no_policy():
    plan = build_plans(longevity(compact_every=2), 7, "w")  # rounds 1-6
    assert not plan.named
    (policy,) = plan.policies
    assert (policy.name, policy.compact_only) == ("every:2", True)
    steps = plan.steps[policy]
    assert [s.round for s in steps if s.kind == "compact"] == [2, 4]  # never after the last
    assert not any(s.kind == "vacuum" or s.recheck for s in steps)
    assert round_kinds(2, 6, policy, 1, True) == ["merge", "read", "compact"]
    assert round_kinds(2, 6, Policy("every", 2), 1, True) == [
        "merge", "read", "compact", "vacuum", "recheck",
    ]  # fmt: skip


def test_a_file_without_longevity_has_one_unnamed_plan():
    plan = build_plans({}, 3, "w")
    assert not plan.named and [p.name for p in plan.policies] == ["none"]
    assert plan.application == PER_PHASE  # the contest's procedure: a process a phase


def test_a_longevity_run_keeps_one_application_per_lane_unless_told_per_phase():
    assert build_plans(longevity(), 3, "w").application == ONE_APPLICATION
    assert build_plans(longevity(application="per-phase"), 3, "w").application == PER_PHASE


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"maintenance": "every:0"}, "longevity.maintenance: 'every:0': N in every:N is"),
        ({"maintenance": "every:x"}, "longevity.maintenance: 'every:x': N in every:N is"),
        ({"maintenance": "weekly"}, "longevity.maintenance: 'weekly' is not \"none\""),
        ({"maintenance": ["none", 3]}, "longevity.maintenance: 3 is not"),
        ({"maintenance": ["every:2", "none", "every:2"]}, "every:2 named twice"),
        ({"maintenance": []}, "longevity.maintenance: an empty list"),
        ({"maintenance": "none", "compact_every": 2}, "maintenance and compact_every both"),
        ({"read_every": 0}, "longevity.read_every: a whole number >= 1"),
        ({"read_every": "2"}, "longevity.read_every: a whole number >= 1"),
        ({"application": "many"}, "longevity.application: one of 'one', 'per-phase', not 'many'"),
    ],
)
def test_bad_maintenance_and_reads_are_one_line_errors(block, message):
    with pytest.raises(ConfigError) as err:
        build_plans(longevity(**block), 5, "my.toml")
    text = str(err.value)
    assert message in text and text.startswith("my.toml: ") and "\n" not in text


def test_parse_keeps_the_files_order():
    assert [p.name for p in parse_maintenance(["auto", "every:5", "none"], "k")] == [
        "auto", "every:5", "none",
    ]  # fmt: skip
    assert parse_maintenance("every:12", "k") == (Policy("every", 12),)


def test_an_auto_lane_gets_its_formats_own_triggers_back():
    """A preset that turns the format's default triggers off (hudi-mor: no inline
    compaction; paimon-agg: write-only) has those keys dropped on an `auto` lane, and
    the records say the trigger; a format without any says it has none."""
    for strategy, key in (("hudi-mor", "hoodie.compact.inline"), ("paimon-agg", "write-only")):
        cfg = load_config(preset=STRATEGIES[strategy])
        auto, dropped = auto_config(cfg, auto_of(strategy))
        assert dropped == [key] and key in cfg.peer.table and key not in auto.peer.table
        assert {k: v for k, v in cfg.peer.table.items() if k != key} == auto.peer.table
        assert key in auto_note(strategy, dropped)
    assert "inline compaction" in auto_note("hudi-mor:defaults", [])
    assert "sorted-run trigger" in auto_note("paimon-agg", [])
    for strategy in ("delta-rs", "optimized", "delta-merge", "iceberg-mor", "lakesoul-stock"):
        cfg = load_config(preset=STRATEGIES[strategy])
        assert auto_config(cfg, auto_of(strategy)) == (cfg, [])
        assert auto_note(strategy, []).startswith("none: ")


def test_cdc_longevity_has_200_change_batches_one_a_commit():
    settings = workload_settings("cdc-longevity")
    assert settings["workload.batches"] - 1 >= 200 and settings["workload.op_column"]
    assert settings["workload.batch_rows"] * 50 <= settings["workload.first_rows"]
    plan = load_plans("cdc-longevity", settings["workload.batches"])
    assert plan.named and [p.name for p in plan.policies] == ["none", "every:20"]
    none, every = plan.steps.values()
    ups = [s.batches for s in none if s.kind == "upsert"]
    assert ups[0] == (0,) and all(len(b) == 1 for b in ups) and len(ups) == 201
    assert sum(s.kind == "read" for s in none) == 20
    assert sum(s.kind == "compact" for s in every) == 10 and sum(s.recheck for s in every) == 10


def test_a_page_has_a_row_per_lane_and_says_what_auto_left_to_the_format():
    base: dict[str, Any] = {"workload": "w", "run_id": "r", "strategy": "hudi-mor"}
    recs = [
        PhaseRecord(**base, step=1, phase="read", label="read", policy=policy, seconds=1.0,
                    correct=True, auto_maintenance=note)
        for policy, note in (("none", None), ("auto", "Hudi's inline compaction: ..."))
    ]  # fmt: skip
    page = markdown("w", recs, [])
    assert "| r | hudi-mor (none) | 1 | yes |" in page and "| r | hudi-mor (auto) |" in page
    assert "- hudi-mor (auto): Hudi's inline compaction: ..." in page
    old = PhaseRecord.from_dict(
        {**base, "step": 1, "phase": "read", "label": "read"}
    )  # a line from before
    assert old.policy is None and old.lane == "hudi-mor"
