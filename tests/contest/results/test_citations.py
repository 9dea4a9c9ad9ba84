"""Every ratio written by hand in results/ cites the sitting whose records give it, and
is one of that sitting's figures at the rounding shown (contest/results/citations.py,
contest/results/figures.py); the pages `contest report` generates are left out (their
figures come from the records already)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from contest.cli.pages import regenerate
from contest.results.citations import TARGET, Cited, cited, traced
from contest.results.figures import by_sitting, workloads
from contest.results.workloads import PhaseRecord

RESULTS = Path(__file__).resolve().parents[3] / "results"


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, set[Path]]:
    """A copy of results/ with every page `contest report` writes written again, and the
    pages it wrote (relative)."""
    copy = tmp_path_factory.mktemp("results") / "results"
    shutil.copytree(RESULTS, copy)
    shutil.copytree(RESULTS.parent / "sweeps", copy.parent / "sweeps")
    written = {p.relative_to(copy) for p in regenerate(copy)}
    return copy, written


@pytest.fixture(scope="module")
def hand_written(regenerated: tuple[Path, set[Path]]) -> list[Path]:
    """Every page under results/ that `contest report` does not write: NOTES.md,
    notes/*.md, peers.md, ... (the disclosure pages are all generated: the test below)."""
    _, written = regenerated
    pages = sorted(p.relative_to(RESULTS) for p in RESULTS.rglob("*.md"))
    return [RESULTS / p for p in pages if p not in written and p.parts[0] != "disclosure"]


def test_the_generated_pages_are_told_apart(hand_written: list[Path]) -> None:
    names = {p.relative_to(RESULTS).as_posix() for p in hand_written}
    assert {"NOTES.md", "notes/duckdb.md", "peers.md"} <= names
    assert not names & {"README.md", "duckdb.md", "peer_sittings.md", "scale.md"}


def test_the_committed_pages_are_what_contest_report_writes(
    regenerated: tuple[Path, set[Path]],
) -> None:
    """Every committed disclosure page and generated page, byte for byte (none stale)."""
    copy, written = regenerated
    committed = {p.relative_to(RESULTS) for p in (RESULTS / "disclosure").rglob("*")}
    # None stale: each is a sitting's page the regenerated index links.
    index = (copy / "disclosure" / "README.md").read_text()
    linked = {Path("disclosure") / name for name in re.findall(r"\]\(([^)]+\.md)\)", index)}
    assert committed - {Path("disclosure/README.md")} == linked
    for rel in committed | {w for w in written if w.suffix == ".md"}:
        assert (copy / rel).read_bytes() == (RESULTS / rel).read_bytes(), rel


def test_every_hand_written_ratio_cites_a_sitting_that_gives_it(
    hand_written: list[Path],
) -> None:
    figures = by_sitting(RESULTS)
    bad = []
    for page in hand_written:
        for c in cited(page.read_text()):
            where = f"{page.relative_to(RESULTS)}:{c.line}: {c.text}x"
            if c.sitting is None:
                bad.append(f"{where} cites no sitting")
            elif c.sitting == TARGET:
                continue
            elif c.sitting not in figures:
                bad.append(f"{where}: no records of sitting {c.sitting}")
            elif traced(c, figures[c.sitting]) is None:
                bad.append(f"{where} is no figure of sitting {c.sitting}")
    assert not bad, "\n".join(bad)


def test_a_citation_covers_the_figures_before_it_on_its_line() -> None:
    text = "a 2.12x and 1.5x [1.4-1.6] (sitting s1), then 3x (target) and 9.9x\nno 7x here"
    assert list(cited(text)) == [
        Cited(1, "2.12", "s1"),
        Cited(1, "1.5", "s1"),
        Cited(1, "3", TARGET),
        Cited(1, "9.9", None),
        Cited(2, "7", None),
    ]
    # Not ratios: part of a word, a hex number, a version.
    assert list(cited("0x1f, 3x3 grid, v1.2x4, max")) == []


def test_a_ratio_written_as_a_bare_decimal_is_held_to_the_same_rule() -> None:
    """The forms the pages use: after the word ratio, after a quotient of names or of
    numbers; a bound after a comparison, a number with a unit, a version, a date or a
    size is none."""
    text = (
        "79.9 s: ratio 0.53 (sitting s1), the goal of >= 1.0 is not met\n"
        "Ratio DuckDB / optimized (>= 1.0: optimized is as fast): **0.527**\n"
        "after / before **0.90**: not slower; stock was 42.7 / 17.0 = **2.5** (target)\n"
        "one round, DuckDB 37.9 s, ratio 0.463.\n"
        "Ratio below 0.8 in three sittings; the ratio >= 1.0; a ratio of 2.6 GB or 0.5 s\n"
        "Paimon 0.79 / 1.11 s; pyarrow 20.0.0 / duckdb 1.1.3 on 2026-11-29; write 9.8/8.6"
    )
    assert list(cited(text)) == [
        Cited(1, "0.53", "s1"),
        Cited(2, "0.527", None),
        Cited(3, "0.90", TARGET),
        Cited(3, "2.5", TARGET),
        Cited(4, "0.463", None),
    ]


def test_a_figure_is_traced_at_the_rounding_it_shows() -> None:
    figures = {"optimized / delta (median)": 2.1249, "delta / optimized (median)": 1 / 2.1249}
    assert traced(Cited(1, "2.12", "s"), figures) == "optimized / delta (median)"
    assert traced(Cited(1, "2.1", "s"), figures) == "optimized / delta (median)"
    assert traced(Cited(1, "2.13", "s"), figures) is None  # 2.1249 shows as 2.12
    assert traced(Cited(1, "2.40", "s"), figures) is None


def test_the_figures_of_a_sitting_are_recomputed_from_its_records() -> None:
    figures = by_sitting(RESULTS)
    # The scale-1 headline (README.md): optimized over the fastest peer, lakesoul-stock,
    # 4.27x [3.94-4.38] round by round.
    headline = figures["2026-11-29T00:28:53Z"]
    for shown in ("4.27", "3.94", "4.38"):
        assert traced(Cited(1, shown, "s"), headline) is not None
    # Scale 10 on the harness's data: the sitting DuckDB's page shows, 1.71x; the 2.40x
    # once cited for a twentieth sitting (17:10 UTC) has no record.
    scale10 = figures["2026-11-28T11:07:30Z"]
    assert (traced(Cited(1, "1.71", "s"), scale10) or "").startswith("duckdb: ")
    assert not [s for s in figures if s.startswith("2026-11-28T17:1")]
    assert all(traced(Cited(1, "2.40", s), f) is None for s, f in figures.items())


def test_a_tables_ratio_column_holds_figures_cited_by_its_cell_or_its_header() -> None:
    """Every decimal of a column headed ratio(s) or last / first is a figure, cited by a
    citation in its cell, else by its header's; the other cells read as prose."""
    text = (
        "| variant | sitting 1, s | ratios (sitting m) | note |\n"
        "|---|---:|---|---|\n"
        "| a | 1.563 | 1.73, 1.91 | 2.30x (sitting s) |\n"
        "| b | 1.2 | 1.28 (sitting t) | 4.5 s |\n"
        "\n"
        "| strategy | last / first |\n"
        "|---|---:|\n"
        "| optimized | **1.10** |\n"
    )
    assert list(cited(text)) == [
        Cited(3, "1.73", "m"),
        Cited(3, "1.91", "m"),
        Cited(3, "2.30", "s"),
        Cited(4, "1.28", "t"),
        Cited(8, "1.10", None),
    ]


def test_a_workload_runs_last_read_over_each_earlier_one_is_its_figure() -> None:
    reads = [
        PhaseRecord("w", "r1", "optimized", step, "read", "read", seconds=s)
        for step, s in ((1, 8.0), (3, 10.0), (5, 12.0))
    ]
    upsert = PhaseRecord("w", "r1", "optimized", 2, "upsert", "upsert", seconds=99.0)
    got = workloads([*reads, upsert])
    assert sorted(round(v, 4) for v in got.values()) == [0.6667, 0.8333, 1.2, 1.5]


def test_each_policy_of_a_strategy_is_a_lane_of_its_own_in_the_figures() -> None:
    # Two maintenance policies are two tables: their reads never pool into one run.
    def read(step: int, s: float, policy: str) -> PhaseRecord:
        return PhaseRecord("w", "r1", "optimized", step, "read", "read", seconds=s, policy=policy)

    got = workloads([read(1, 8.0, "none"), read(2, 8.0, "every:20"), read(3, 12.0, "none")]
                    + [read(4, 9.0, "every:20")])  # fmt: skip
    assert sorted(round(v, 4) for v in got.values()) == [0.6667, 0.8889, 1.125, 1.5]
    assert any(k.startswith("optimized (every:20) last read / read 1") for k in got)
