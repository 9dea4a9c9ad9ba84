"""A longevity run's table life (contest/workload/life.py) and its measures (metrics.py):
what a commit adds to a read, what maintenance costs, and the table age from which
compacting every N commits pays for itself, judged by the `none` lane (no Spark:
records built here)."""

from __future__ import annotations

import pytest

from contest.results.workloads import PhaseRecord
from contest.workload.life import growth, life_table, maintenance_cost, read_every
from contest.workload.metrics import growth_per_commit, pays_off_from
from contest.workload.report import by_run


def test_growth_is_the_median_slope_of_reads_against_commits():
    assert growth_per_commit([(10, 1.0), (20, 2.0), (30, 3.0)]) == pytest.approx(0.1)
    # Pairs' slopes 0.02, 0.005, -0.01: the median.
    assert growth_per_commit([(10, 1.0), (20, 1.2), (30, 1.1)]) == pytest.approx(0.005)
    # A slow first read (its application's first read) does not tilt it: 0.01 a commit.
    points = [(10, 9.0), (20, 1.2), (30, 1.3), (40, 1.4), (50, 1.5)]
    assert growth_per_commit(points) == pytest.approx(0.01)
    assert growth_per_commit([(10, 1.0), (10, 2.0)]) is None  # one commit count: no slope
    assert growth_per_commit([]) is None


def test_compacting_pays_from_the_age_where_its_cycles_reads_save_its_cost():
    # 0.01 s a commit; a read every 5 commits; compacting every 20 (4 reads a cycle) at
    # 2 s: at commit c each of the 4 reads is 0.01 c cheaper, so c = 2 / (0.04) = 50.
    assert pays_off_from(2.0, 0.01, 20, 5) == pytest.approx(50.0)
    assert pays_off_from(2.0, 0.0, 20, 5) is None  # flat reads: never in read time
    assert pays_off_from(2.0, None, 20, 5) is None
    assert pays_off_from(2.0, -0.01, 20, 5) is None


def lane(policy: str, reads: list[float], every: int = 0, cost: float = 0.0) -> list[PhaseRecord]:
    """A lane's records: base, then a commit at a time, a read every 2 commits (read s
    from `reads`), a compaction and an expiry after every `every` commits."""
    base = {"workload": "w", "run_id": "r1", "strategy": "s", "policy": policy}
    out = [PhaseRecord(**base, step=1, phase="upsert", label="upsert 0", batch_first=0)]
    for n, seconds in enumerate(reads):
        for c in (2 * n + 1, 2 * n + 2):
            out.append(
                PhaseRecord(
                    **base, step=len(out) + 1, phase="upsert", label="u", batch_first=c,
                    batches_applied=c + 1, seconds=0.5, application="one",
                )
            )  # fmt: skip
        applied = 2 * n + 3
        out.append(
            PhaseRecord(
                **base, step=len(out) + 1, phase="read", label="read", seconds=seconds,
                batches_applied=applied, correct=True, data_files=applied * 4,
                delete_files=applied, data_bytes=applied * 1_000_000, metadata_files=applied,
                metadata_bytes=applied * 100, application="one",
            )
        )  # fmt: skip
        if every and (2 * n + 2) % every == 0:
            for kind in ("compact", "vacuum"):
                out.append(
                    PhaseRecord(
                        **base, step=len(out) + 1, phase=kind, label=kind, seconds=cost / 2,
                        batches_applied=applied, application="one",
                    )
                )  # fmt: skip
    return out


def test_a_lanes_growth_maintenance_and_read_spacing():
    none = lane("none", [1.0, 1.2, 1.4, 1.6])
    assert growth(none) == pytest.approx(0.1)  # 0.2 s per 2 commits
    assert read_every(none) == 2
    assert maintenance_cost(none) == (0, None)
    every = lane("every:4", [1.0, 1.2, 1.0, 1.2], every=4, cost=3.0)
    assert maintenance_cost(every) == (2, pytest.approx(3.0))  # compact + vacuum, twice


def test_the_life_section_has_a_row_per_lane_and_pays_off_from_the_none_lanes_growth():
    records = lane("none", [1.0, 1.2, 1.4, 1.6]) + lane("every:4", [1.0, 1.2, 1.0, 1.2], 4, 3.0)
    text = "\n".join(life_table(by_run(records)))
    lines = [ln.split(" | ") for ln in text.splitlines() if ln.startswith("| r1")]
    rows = {cells[1]: cells for cells in lines}
    assert set(rows) == {"s (none)", "s (every:4)"}
    none, every = rows["s (none)"], rows["s (every:4)"]
    assert none[2:5] == ["one application", "8", "+10.000"]  # 0.1 s a commit
    assert none[5] == "-" and none[-1].rstrip(" |") == "-"  # no maintenance: nothing to pay
    assert every[5] == "2 x 3.00"
    # 3 s / (0.1 s a commit x 4 commits / 2 commits a read) = commit 15
    assert every[-1].rstrip(" |") == "15"
    assert none[7:10] == ["36 / 9", "9 files", "9.0"]  # the last read's table
    # Total: the commits, reads and maintenance of the lane.
    assert float(none[6]) == pytest.approx(8 * 0.5 + 5.2)


def test_a_run_naming_no_policy_has_no_life_section():
    records = lane("none", [1.0, 1.1])
    for r in records:
        r.policy = None
    assert life_table(by_run(records)) == []
