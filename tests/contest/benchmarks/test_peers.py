"""`contest bench peers`: interleaved, rotated rounds in one sitting; busy and wrong runs
left out of the medians and named; ratios round by round with intervals; a full
disclosure; resuming on the same commit and machine only. The arithmetic on made
records, the whole sitting once on real Spark at a tiny scale."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from contest.benchmarks.peers.bench import PeersBench, codec_overrides, sitting_order
from contest.benchmarks.peers.disclosure import render_disclosure
from contest.benchmarks.peers.page import render_summary
from contest.cli.main import main
from contest.errors import UsageError
from contest.evaluation.strategies import round_order
from contest.infra.machine import git_state, machine_id
from contest.results.disclosure import disclosure_name
from contest.results.runs import JobLoad, RunRecord
from contest.results.sittings import summarize
from contest.sitting import Results
from tests.support.config import REPO, cli

SETTINGS = {"codec": "preset", "rounds": 3, "strategies": ["optimized", "paimon-agg"]}


def run(strategy: str, rnd: int, score: float, **kw: object) -> RunRecord:
    rec = RunRecord(
        strategy,
        sitting="2026-11-27T10:00:00Z",
        compare_round=rnd,
        attempt=1,
        position=1,
        correct=True,
        scale=0.1,
        rows_per_core_s=score,
        write_s=10.0,
        read_s=5.0,
        settings=dict(SETTINGS),
        git_commit="abc1234",
        machine_id="m-1",
    )
    return dataclasses.replace(rec, **kw)  # type: ignore[arg-type]


def test_rounds_rotate_so_no_strategy_keeps_its_place() -> None:
    names = ["a", "b", "c"]
    assert [round_order(names, r) for r in (1, 2, 3, 4)] == [
        ["a", "b", "c"],
        ["b", "c", "a"],
        ["c", "a", "b"],
        ["a", "b", "c"],
    ]
    assert round_order([], 3) == []


def test_strategies_run_once_are_in_the_first_round_only() -> None:
    names = ["optimized", "slow", "b", "c"]
    assert [sitting_order(names, ["slow"], r) for r in (1, 2, 3)] == [
        ["optimized", "slow", "b", "c"],
        ["b", "c", "optimized"],
        ["c", "optimized", "b"],
    ]
    assert sitting_order(names, [], 2) == round_order(names, 2)


def test_a_sitting_with_once_strategies_labels_their_single_runs() -> None:
    settings = {**SETTINGS, "strategies": ["optimized", "paimon-agg", "hudi-mor"]}
    settings["once"] = ["hudi-mor"]
    recs = [run("optimized", n, 300.0 + n, settings=settings) for n in (1, 2, 3)]
    recs += [run("paimon-agg", n, 100.0, settings=settings) for n in (1, 2, 3)]
    recs.append(run("hudi-mor", 1, 50.0, settings=settings))
    s = summarize(recs)
    assert s.once == ["hudi-mor"]
    page = "\n".join(render_summary(s))
    assert "(hudi-mor in the first round only)" in page
    assert "| hudi-mor | 1 of 1 | 50 (single run) |" in page
    assert "6.02x (single run)" in page and "n=3" in page
    assert "; CPU: CPU not recorded." in page  # these records name no CPU model
    env = {"machine": {"cpu_model": "Test CPU 9000"}}
    page = "\n".join(
        render_summary(summarize([dataclasses.replace(r, environment=env) for r in recs]))
    )
    assert "; CPU: Test CPU 9000." in page


def test_a_peers_defaults_row_is_its_second_row_not_another_strategy() -> None:
    """`paimon-agg:defaults` beside `paimon-agg`: a two-row table (tuned / defaults in
    the rounds both ran), left out of the geometric mean of the strategies."""
    names = ["optimized", "paimon-agg", "paimon-agg:defaults"]
    settings = {**SETTINGS, "strategies": names, "once": ["paimon-agg:defaults"]}
    recs = [run("optimized", n, 300.0, settings=settings) for n in (1, 2, 3)]
    recs += [run("paimon-agg", n, 100.0 + n, settings=settings) for n in (1, 2, 3)]
    recs.append(run("paimon-agg:defaults", 1, 50.0, settings=settings))
    s = summarize(recs)
    [pair] = s.two_rows
    assert (pair.strategy, pair.tuned.strategy, pair.defaults.strategy) == (
        "paimon-agg", "paimon-agg", "paimon-agg:defaults"
    )  # fmt: skip
    assert pair.ratio is not None and pair.ratio.interval.median == pytest.approx(101.0 / 50.0)
    assert s.peer_ratios == [pytest.approx(300.0 / 102.0)]
    page = "\n".join(render_summary(s))
    assert "each other strategy (1; `:defaults` rows apart): 2.94x" in page
    assert (
        "| paimon-agg | 102 (n=3) | 50 (single run) | 2.02x (single run) "
        "| 2.94x [2.91-2.97] n=3 (75%) | 6.00x (single run) |"
    ) in page


def test_once_must_name_the_sittings_peers(cfg) -> None:
    argv = ["bench", "peers", "--scales", "0.0005", "--strategies", "optimized,paimon-agg"]
    for bad in ("hudi-mor", "optimized"):
        assert main(cli(cfg, *argv, "--once", bad)) == 2


def test_one_codec_for_every_strategy() -> None:
    assert codec_overrides("preset") == {}
    assert codec_overrides("zstd") == {
        "write.codec": "zstd",
        "read.codec": "zstd",
        "peer.codec": "zstd",
    }


def test_each_peer_has_a_defaults_row_that_keeps_only_what_makes_it_itself() -> None:
    """`<strategy>:defaults`: the same format and mechanism, none of the preset's
    tuning; named like any strategy (evaluate, compare, bench peers), never a file's
    or table's name as it is (Hadoop reads `:` as a URI scheme)."""
    from pathlib import Path

    from contest.config import load_config
    from contest.evaluation.evaluate import table_name_of
    from contest.evaluation.strategies import (
        DEFAULTS,
        STRATEGIES,
        is_strategy,
        preset,
        strategy_names,
    )

    peers = {n for n, p in STRATEGIES.items() if p.get("peer.format")}
    assert set(DEFAULTS) == peers
    for name in peers:
        tuned, plain = preset(name), preset(f"{name}:defaults")
        assert plain["peer.format"] == tuned["peer.format"]
        for key in ("peer.deletion_vectors", "peer.merge_mode", "peer.format_version"):
            assert plain.get(key) == tuned.get(key), (name, key)  # the mechanism stays
        assert not {"peer.codec", "peer.buckets", "peer.table", "spark.conf"} & set(plain)
        load_config(preset=plain)  # a valid configuration
    assert preset("paimon-agg:defaults")["write.threads"] == 1  # dynamic buckets: one writer
    assert not is_strategy("optimized:defaults") and not is_strategy("iceberg-mor:tuned")
    assert "iceberg-dv:defaults" in strategy_names(variants=True)
    assert "iceberg-dv:defaults" not in strategy_names()
    assert ":" not in table_name_of("iceberg-mor:defaults", Path("/w"))
    PeersBench().check(_args("--strategies", "optimized,paimon-agg:defaults"))
    with pytest.raises(UsageError, match="--strategies"):
        PeersBench().check(_args("--strategies", "optimized:defaults"))


def _args(*argv: str):
    from contest.cli.main import build_parser

    return build_parser().parse_args(["bench", "peers", *argv])


def test_busy_and_wrong_runs_leave_the_medians_and_are_named() -> None:
    busy = JobLoad(outside_share=0.4, peak_outside_share=0.9, steal_during=0.0)
    records = [
        run("optimized", 1, 300.0),
        run("paimon-agg", 1, 100.0),
        run("paimon-agg", 2, 110.0),
        run("optimized", 2, 330.0),
        run("optimized", 3, 900.0, load={"write": busy}),  # busy: left out
        run("optimized", 3, 315.0, attempt=2),  # its re-run counts
        run("paimon-agg", 3, 5.0, correct=False, failed_phase="check"),  # wrong: left out
    ]
    s = summarize(records)
    rows = {r.strategy: r for r in s.rows}
    assert s.strategies == ["optimized", "paimon-agg"]
    assert rows["optimized"].score is not None and rows["optimized"].score.n == 3
    assert rows["optimized"].score.median == 315.0
    assert rows["optimized"].attempts == 4
    # Paired by round: rounds 1 and 2 only (paimon-agg's round 3 was wrong).
    ratio = rows["paimon-agg"].ratio
    assert ratio is not None and ratio.interval.n == 2
    assert ratio.interval.low == pytest.approx(3.0) and ratio.interval.high == 3.0
    assert len(s.excluded) == 2
    assert any("round 3, attempt 1: busy: other work held 40%" in e for e in s.excluded)
    assert any(e.startswith("paimon-agg, round 3") and "wrong" in e for e in s.excluded)
    page = PeersBench().render(records)
    assert "| paimon-agg | 2 of 3 |" in page and "3.00x [3.00-3.00] n=2 (50%)" in page
    assert "Left out of the medians" in page and disclosure_name(s.sitting) in page


def test_a_newer_sitting_leads_and_the_one_it_replaced_is_kept_whole() -> None:
    """A sitting on another host (one VM id, another CPU) is not pooled with the newer
    one, nor dropped: the page shows it under "Earlier sittings", its own ratios."""
    old = [run("optimized", 1, 300.0), run("paimon-agg", 1, 100.0)]
    new = [
        run(r.strategy, 1, r.rows_per_core_s or 0.0, sitting="2026-11-29T00:00:00Z") for r in old
    ]
    new[1] = dataclasses.replace(new[1], rows_per_core_s=60.0)
    page = PeersBench().render([*old, *new])
    head, earlier = page.split("# Earlier sittings")
    assert "2026-11-29T00:00:00Z" in head and "5.00x (single run)" in head
    assert "2026-11-27T10:00:00Z" not in head
    assert "### Scale 0.1" in earlier and "2026-11-27T10:00:00Z" in earlier
    assert "3.00x (single run)" in earlier


def test_a_single_round_says_so() -> None:
    s = summarize([run("optimized", 1, 300.0), run("paimon-agg", 1, 100.0)])
    ratio = next(r.ratio for r in s.rows if r.strategy == "paimon-agg")
    assert ratio is not None and ratio.text() == "3.00x (single run)"


def test_disclosure_names_machine_software_each_job_and_configuration() -> None:
    env = {
        "spark": "3.5.8",
        "machine": {"cpu_model": "CPU-X", "cores": 2, "os": "OS-Y", "java": "java-Z"},
        "jvm_packages": {"paimon": ["org.apache.paimon:paimon-spark-3.5:0.9.0"]},
    }
    busy = JobLoad(outside_share=0.25, peak_outside_share=0.5, steal_during=0.01)
    recs = [
        run("optimized", 1, 300.0, environment=env, config={"write": {"mode": "mor"}}),
        run("paimon-agg", 1, 100.0, load={"read": busy}),
    ]
    text = render_disclosure(recs)
    for needle in ("CPU-X", "OS-Y", "java-Z", "Spark 3.5.8", "paimon-spark-3.5:0.9.0", "abc1234"):
        assert needle in text
    assert "| 25%/50% |" in text and "other work held 25%" in text
    assert '"mode": "mor"' in text and "### paimon-agg" in text


def write_sitting(folder: Path, records: list[RunRecord]) -> Results:
    results = Results(folder, PeersBench.stem)
    results.append(r.to_dict() for r in records)
    return results


def test_resume_only_on_the_same_commit_machine_and_strategies(tmp_path: Path) -> None:
    import argparse

    from contest.sitting import Sitting
    from tests.support.config import make_config

    commit, dirty = git_state(REPO)
    me = machine_id()
    done = [
        run("optimized", 1, 300.0, git_commit=commit, machine_id=me),
        run("paimon-agg", 1, 100.0, git_commit=commit, machine_id=me),
        run(
            "paimon-agg",
            2,
            1.0,
            git_commit=commit,
            machine_id=me,
            load={"write": JobLoad(outside_share=0.5)},
        ),
    ]
    results = write_sitting(tmp_path, done)
    sitting = Sitting(PeersBench(), argparse.Namespace(), make_config(tmp_path), results)
    bench = PeersBench()
    names = ["optimized", "paimon-agg"]
    if dirty:
        with pytest.raises(UsageError, match="uncommitted changes"):
            bench.resumable(sitting, "2026-11-27T10:00:00Z", names, [])
        return
    sid, finished = bench.resumable(sitting, "2026-11-27T10:00:00Z", names, [])
    # Round 2's busy paimon-agg run had one retry left: not done.
    assert sid == "2026-11-27T10:00:00Z" and finished == {
        (0.1, 1, "optimized"),
        (0.1, 1, "paimon-agg"),
    }
    with pytest.raises(UsageError, match="ran --strategies optimized,paimon-agg"):
        bench.resumable(sitting, "2026-11-27T10:00:00Z", ["paimon-agg", "optimized"], [])
    with pytest.raises(UsageError, match="ran --strategies optimized,paimon-agg$"):
        bench.resumable(sitting, "2026-11-27T10:00:00Z", names, ["paimon-agg"])
    with pytest.raises(UsageError, match="no sitting"):
        bench.resumable(sitting, "nope", names, [])
    # The same VM id on other hardware (a VM moved hosts: AMD, then Intel) is refused.
    moved = {"machine": {"cpu_model": "CPU-of-another-host"}}
    elsewhere = write_sitting(
        tmp_path / "moved",
        [run("optimized", 1, 1.0, git_commit=commit, machine_id=me, environment=moved)],
    )
    sitting = Sitting(PeersBench(), argparse.Namespace(), make_config(tmp_path), elsewhere)
    with pytest.raises(UsageError, match="ran on CPU-of-another-host; this machine has"):
        bench.resumable(sitting, "2026-11-27T10:00:00Z", names, [])
    other = write_sitting(tmp_path / "other", [run("optimized", 1, 1.0, machine_id=me)])
    sitting = Sitting(PeersBench(), argparse.Namespace(), make_config(tmp_path), other)
    with pytest.raises(UsageError, match="ran on commit abc1234"):
        bench.resumable(sitting, "2026-11-27T10:00:00Z", names, [])


@pytest.mark.slow
def test_a_tiny_sitting_on_real_spark(cfg, pg, tmp_path: Path) -> None:
    out = tmp_path / "published"
    # A peer's defaults row (the format as it ships, untuned) beside the reference.
    plain = "paimon-agg:defaults"
    argv = ["bench", "peers", "--scales", "0.0005", "--strategies", f"optimized,{plain}"]
    argv += ["--rounds", "2", "--busy-retries", "0", "--results", str(out)]
    assert main(cli(cfg, *argv)) == 0
    lines = [json.loads(ln) for ln in (out / "peer_sittings.jsonl").read_text().splitlines()]
    recs = [RunRecord.from_dict(x) for x in lines]
    # Rotated: round 1 optimized first, round 2 the other first; one sitting; exact.
    assert [(r.compare_round, r.position, r.strategy) for r in recs] == [
        (1, 1, "optimized"),
        (1, 2, plain),
        (2, 1, plain),
        (2, 2, "optimized"),
    ]
    assert len({r.sitting for r in recs}) == 1 and all(r.correct for r in recs)
    assert all((r.settings or {}).get("read_ahead") for r in recs)
    # Noise was measured during every job, and the machine is disclosed.
    assert all(r.load[j].outside_share is not None for r in recs for j in ("write", "read"))
    assert recs[0].environment["machine"]["cores"]
    page = (out / "peer_sittings.md").read_text()
    for r in recs:  # a busy run is named, a quiet one is not
        named = f"{r.strategy}, round {r.compare_round}, attempt 1: busy" in page
        assert named == bool(r.busy)
    if not any(r.busy for r in recs):
        assert "n=2" in page
    text = (out / disclosure_name(recs[0].sitting or "")).read_text()
    assert "## Each job, in the order run" in text
    # The defaults row ran Paimon's defaults (no fixed buckets, one writer), and the
    # disclosure publishes the settings it used.
    mine = next(r for r in recs if r.strategy == plain)
    assert mine.config["peer"]["format"] == "paimon" and mine.config["peer"]["buckets"] == 0
    assert mine.config["write"]["threads"] == 1 and mine.peer_write["threads"] == 1
    assert f"### {plain}" in text and '"write.threads": 1' in text
    assert f"| {plain} | " in page
    # Each checked run's table and result were dropped (the data and oracle stay).
    work = cfg.work_path / "eval"
    assert not any((work / "tables").rglob("*.parquet"))
    assert not any((work / "result").rglob("*.parquet"))
    assert any((cfg.work_path / "oracle").rglob("*.parquet"))


def test_the_docs_sitting_commands_parse_and_pass_their_checks() -> None:
    """The compare guide's examples of `contest bench peers` are real command lines: each
    parses, and its options pass the benchmark's checks (running them is a sitting)."""
    import re
    import shlex

    from contest.cli.main import build_parser

    text = (REPO / "docs" / "guides" / "compare.md").read_text()
    section = text.split("## The comparison: sittings", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    lines = [ln.split("  #")[0] for ln in block.group(1).splitlines() if ln.strip()]
    assert len(lines) >= 4
    for line in lines:
        argv = shlex.split(line)
        assert argv[:3] == ["contest", "bench", "peers"]
        args = build_parser().parse_args(argv[1:])
        PeersBench().check(args)


def test_disclosure_names_a_users_data_by_its_files_digests() -> None:
    files = [{"name": "part-1.parquet", "bytes": 1234, "sha256": "ab" * 32}]
    mine = dataclasses.replace(run("optimized", 1, 300.0), data_files=files)
    text = render_disclosure([mine])
    assert "## The data (a user's files)" in text
    assert f"| part-1.parquet | 1,234 | `{'ab' * 32}` |" in text
    assert "## The data" not in render_disclosure([run("optimized", 1, 300.0)])
