"""How `contest bench duckdb` runs its DuckDB reference and says so: at DuckDB's defaults
by default (exempt from the harness's memory bound), rows under a memory limit apart
from it, older lines labelled as capped at the oracle's budget; made records, no runs."""

from __future__ import annotations

from typing import Any

import pytest

from contest.benchmarks.duckdb.bench import RoundStep, round_steps
from contest.benchmarks.duckdb.page import CHANGED, render, summarize
from contest.benchmarks.duckdb.reference import MEMORY, VARIANTS, optimized_peak
from contest.config import load_config
from contest.errors import RunError
from contest.infra.memory_bound import PROCESS_TREE_BOUND_BYTES, bound_for, over_bound
from contest.results.benchmarks import DuckDBRecord

DEFAULTS_ROW = {
    "duckdb_memory": "defaults",
    "memory_limit": None,
    "memory_limit_setting": "18.8 GiB",
    "threads": 2,
    "duckdb_version": "2.0.1",
    "parts": 1,
}


def rec(contender: str, rnd: int, seconds: float, **kw: Any) -> DuckDBRecord:
    return DuckDBRecord.from_dict(
        {"contender": contender, "round": rnd, "seconds": seconds, "correct": True, "sitting": "s"}
        | {"cores": 2, "data": "d"}
        | kw
    )


def test_the_duckdb_row_runs_at_its_defaults_and_an_equal_memory_row_stays_apart() -> None:
    records = []
    for rnd in (1, 2, 3):
        records.append(rec("optimized", rnd, 40.0 + rnd, peak_rss_bytes=9_000_000_000))
        records.append(
            rec("duckdb", rnd, 30.0 + rnd, peak_rss_bytes=12_000_000_000, **DEFAULTS_ROW)
        )
        equal = DEFAULTS_ROW | {"duckdb_memory": "equal", "memory_limit": 5 << 30}
        equal["memory_limit_setting"] = "5.0 GiB"
        records.append(rec("duckdb", rnd, 60.0 + rnd, peak_rss_bytes=6_000_000_000, **equal))
    s = summarize(records)
    assert list(s.runs) == ["optimized", "duckdb", "duckdb [equal memory]", "floor"]
    # The ratio is the defaults row's alone: 32 / 42.
    assert s.median_s["duckdb"] == 32.0 and s.ratio_duckdb_to_optimized == 0.762
    page = render(records)
    assert CHANGED in page
    # DuckDB's tree over 8 GB is no mark (exempt); optimized's is.
    assert "| duckdb (defaults) | 32.0 [31.0-33.0] n=3 | 31.0, 32.0, 33.0 | 0.00, 12.00 |" in page
    assert (
        "| optimized | 42.0 [41.0-43.0] n=3 | 41.0, 42.0, 43.0 | 0.00, 9.00 (over the 8 GB " in page
    )
    assert "| duckdb (equal memory) | 62.0 [61.0-63.0] n=3 |" in page
    assert (
        "- duckdb (defaults): DuckDB 2.0.1, threads 2, memory_limit not set (DuckDB's "
        "default: 18.8 GiB), one query." in page
    )
    assert (
        "- duckdb (equal memory): DuckDB 2.0.1, threads 2, memory_limit 5.0 GiB (at "
        "optimized's peak process-tree memory), one query." in page
    )
    assert "duckdb (defaults) / optimized, round by round" in page
    assert "duckdb (equal memory) / optimized, round by round" in page
    # Never the variant's seconds in the defaults row's median, nor its rounds there.
    assert "61.0" not in page.split("| duckdb (defaults) |")[1].split("\n")[0]


def test_key_ranges_and_older_lines_say_how_duckdb_ran() -> None:
    ranges = rec("duckdb", 1, 50.0, **(DEFAULTS_ROW | {"parts": 4}))
    page = render([rec("optimized", 1, 40.0), ranges])
    assert "| duckdb (defaults; 4 key ranges) | 50.0 |" in page
    assert (
        "memory_limit not set (DuckDB's default: 18.8 GiB), 4 key ranges, one query each." in page
    )
    # An older line has none of the new fields: capped at the oracle's budget then; it
    # names its contender `engine` (before the glossary), read as `contender`.
    old = DuckDBRecord.from_dict(
        {"round": 1, "engine": "duckdb", "seconds": 62.3, "correct": True, "parts": 1}
    )
    assert old.contender == "duckdb" and "engine" not in old.to_dict()
    assert old.at_oracle_budget_before and old.label == "duckdb"
    assert (
        not ranges.at_oracle_budget_before and not rec("optimized", 1, 1.0).at_oracle_budget_before
    )
    page = render([rec("optimized", 1, 40.0), old])
    assert "| duckdb (capped at the oracle's budget, older sittings) | 62.3 |" in page
    assert "memory_limit the oracle's budget (at most 4 GiB; not recorded then)" in page


def test_the_oracle_memory_row_is_labelled_and_keeps_its_limit() -> None:
    # A line without DuckDB's own word for its limit (a failed run's): the bytes set.
    oracle = DEFAULTS_ROW | {"duckdb_memory": "oracle", "memory_limit": 4 << 30}
    oracle["memory_limit_setting"] = None
    records = [rec("optimized", 1, 40.0), rec("duckdb", 1, 30.0, **DEFAULTS_ROW)]
    records.append(rec("duckdb", 1, 62.0, **oracle))
    assert records[-1].label == "duckdb [oracle memory]"
    page = render(records)
    assert "memory_limit 4.0 GiB (capped at the oracle's budget), one query." in page


def test_the_memory_variants_and_their_limits() -> None:
    assert VARIANTS == ("equal", "oracle") and "defaults" in MEMORY
    cfg = load_config(env={}, overrides={"oracle.memory_bytes": str(3 << 30)})
    assert MEMORY["defaults"].limit(cfg, []) is None
    assert MEMORY["oracle"].limit(cfg, []) == 3 << 30
    with pytest.raises(RunError, match="no optimized run has measured its peak"):
        optimized_peak(cfg, [])
    so_far = [
        rec("optimized", 1, 40.0, peak_rss_bytes=4_000_000_000),
        rec("optimized", 1, 40.0, peak_rss_bytes=7_000_000_000, variant="spark.cds=false"),
        rec("optimized", 2, 40.0, peak_rss_bytes=5_000_000_000),
        rec("duckdb", 1, 30.0, peak_rss_bytes=9_000_000_000, **DEFAULTS_ROW),
    ]
    # optimized's default runs only: not a variant's, not DuckDB's.
    assert MEMORY["equal"].limit(cfg, so_far) == 5_000_000_000


def test_duckdb_is_the_declared_exemption_from_the_memory_bound() -> None:
    assert bound_for("duckdb") is None
    assert bound_for("optimized") == bound_for("floor") == PROCESS_TREE_BOUND_BYTES
    assert over_bound("optimized", 8_000_000_001) and not over_bound("duckdb", 20_000_000_000)
    assert not over_bound("optimized", None)


def test_duckdb_variants_rotate_with_the_engines_after_optimized_in_round_one() -> None:
    steps = round_steps([None], 1, lean=False, duckdb_variants=["equal"])
    assert steps == [
        RoundStep("optimized"),
        RoundStep("duckdb"),
        RoundStep("duckdb", "equal"),
        RoundStep("floor"),
    ]
    orders = [round_steps([None], rnd, False, ["equal"]) for rnd in range(1, 5)]
    assert {o.index(RoundStep("duckdb", "equal")) for o in orders} == {0, 1, 2, 3}


def test_each_sitting_names_its_cpu_its_disclosure_and_the_noise_rule() -> None:
    stamp = {"machine_id": "m", "git_commit": "abc1234", "outside_share": 0.3}
    with_cpu = [
        rec(e, 1, 10.0, stamp=stamp | {"cpu_model": "AMD EPYC"}, **DEFAULTS_ROW)
        for e in ("optimized", "duckdb")
    ]
    text = render(with_cpu)
    assert "git abc1234, CPU: AMD EPYC, full disclosure: [disclosure/duckdb-s.md]" in text
    # Noise only over the stamp's window: shown as such, never judged busy.
    assert "| window 30% |" in text and "busy" not in text.split("| contender |")[1]
    assert "busy by the per-job noise" in text
    older = [rec(e, 1, 10.0, stamp=stamp, outside_share=0.2) for e in ("optimized", "duckdb")]
    text = render(older)
    assert "CPU: not recorded" in text
    assert "DuckDB (version not recorded)" in text
    assert "| 20% busy |" in text  # the contender's own processes' noise: judged
