"""Sweeps: invalid files are refused naming the key; a two-case sweep runs end to end
(real evaluations) and resumes after an interruption."""

import dataclasses
import json
from pathlib import Path

import pytest

from contest.cli.main import main
from tests.support.config import cli


def _file(tmp_path: Path, text: str) -> Path:
    f = tmp_path / "s.toml"
    f.write_text(text)
    return f


@pytest.mark.parametrize(
    "text,named",
    [
        ('scale = 0.1\n[grid]\n"write.thredas" = [1, 2]\n', "write.thredas"),
        ('scale = 0.1\n[grid]\n"write.threads" = ["many"]\n', "write.threads"),
        ('scale = 0.1\n[grid]\n"write.codec" = ["brotli"]\n', "write.codec"),
        ('scale = 0.1\nrepeats = 2\n[grid]\n"write.threads" = [1]\n', "'repeats'"),
        ('scale = 0.1\n[grid]\n"write.threads" = 1\n', "grid.write.threads"),
        ('scale = -1\n[grid]\n"write.threads" = [1]\n', "scale"),
        ("scale = 0.1\n", "nothing to vary"),
        ('strategy = "kudu"\nscale = 0.1\n[grid]\n"write.threads" = [1]\n', "'kudu'"),
        (
            'strategy = "optimized:defaults"\nscale = 0.1\n[grid]\n"write.threads" = [1]\n',
            "'optimized:defaults'",
        ),
        (  # an operator the strategy's format cannot merge: before any data is made
            'strategy = "lakesoul-stock"\nscale = 0.1\n[grid]\n'
            '"workload.columns" = [{peak_01 = "Max"}]\n',
            "merge operator Max (column peak_01) is not expressible",
        ),
    ],
)
def test_invalid_sweep_is_refused_naming_the_key(tmp_path, capsys, text, named):
    assert main(["sweep", str(_file(tmp_path, text)), "--check"]) == 2
    assert named in capsys.readouterr().err


def test_a_sweep_from_a_peers_documented_defaults(tmp_path) -> None:
    """A sweep may start from a peer's `:defaults` row (ClickBench's untuned entry),
    each case over those settings, not the tuned preset's."""
    from contest.evaluation.sweep import case_config, load_sweep

    text = 'strategy = "paimon-agg:defaults"\nscale = 0.1\n[grid]\n"peer.buckets" = [4, 8]\n'
    sweep = load_sweep(_file(tmp_path, text), env={})
    tuned = load_sweep(_file(tmp_path, text.replace(":defaults", "")), env={})
    assert [case_config(sweep, c, {}).peer.buckets for c in sweep.cases] == [4, 8]
    threads = [case_config(s, s.cases[0], {}).write.threads for s in (sweep, tuned)]
    assert threads[0] == 1 and threads[0] != threads[1]


def test_runs_interleave_case_by_case_rotated_each_time() -> None:
    from contest.evaluation.sweep import sweep_order

    assert sweep_order(3, 2) == [(0, 0), (1, 0), (2, 0), (1, 1), (2, 1), (0, 1)]
    assert sweep_order(2, 1) == [(0, 0), (1, 0)] and sweep_order(0, 3) == []


def test_busy_runs_leave_the_median_unless_no_run_was_quiet(tmp_path) -> None:
    from contest.evaluation.sweep import case_key, load_sweep
    from contest.evaluation.sweep_page import render_table, summarize
    from contest.results.runs import JobLoad, RunRecord

    text = 'scale = 0.1\nrepeat = 3\n[grid]\n"write.threads" = [1, 2]\n'
    sweep = load_sweep(_file(tmp_path, text), env={})
    noisy = {"write": JobLoad(outside_share=0.4)}
    quiet = {"write": JobLoad(outside_share=0.01)}

    def rec(case: int, rep: int, score: float, load: dict) -> RunRecord:
        key = case_key(sweep, sweep.cases[case], rep)
        return RunRecord("optimized", case_key=key, correct=True, rows_per_core_s=score, load=load)

    recs = [rec(0, 0, 100.0, quiet), rec(0, 1, 110.0, quiet), rec(0, 2, 900.0, noisy)]
    recs += [rec(1, r, 50.0 + r, noisy) for r in range(3)]
    one, two = summarize(sweep, recs)
    assert (one.median, one.high, one.n, one.busy, one.busy_only) == (105.0, 110.0, 2, 1, False)
    assert (two.median, two.n, two.busy_only) == (51.0, 3, True)
    table = render_table([one, two])
    assert "51 (busy runs only)" in table and "left out of the medians" in table
    assert "busy by the per-job noise" in table  # the one rule, named
    # A case of older runs, without per-job noise: not judged, whatever their load.
    old = {"write": JobLoad(load1_before=9.0, cpu_busy_before=0.9)}
    (three, _) = summarize(sweep, [rec(0, r, 70.0 + r, old) for r in range(3)])
    assert (three.busy, three.unmeasured, three.median, three.busy_only) == (0, 3, 71.0, False)
    assert "| 3 | 3 | ? | 71 |" in render_table([three])


def test_a_sweep_runs_at_the_command_lines_scale_and_repeat(capsys) -> None:
    from tests.support.config import REPO

    peer = str(REPO / "sweeps" / "peer-paimon.toml")
    assert main(["sweep", peer, "--scale", "1", "--repeat", "3", "--check"]) == 0
    said = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (said["sweep"], said["repeat"], said["runs"]) == ("peer-paimon-scale-1", 3, 15)
    for bad in (["--scale", "0"], ["--repeat", "0"]):
        assert main(["sweep", peer, *bad, "--check"]) == 2


def test_a_sweep_over_the_machines_cores_is_refused_before_any_case(cfg, tmp_path, capsys):
    """Each case failed on its own, recorded, and the sweep went on; refused once."""
    import os

    many = (os.cpu_count() or 1) + 2
    f = _file(tmp_path, f'scale = 0.0005\ncores = {many}\n[grid]\n"write.threads" = [1, 2]\n')
    out = tmp_path / "sw"
    assert main(cli(cfg, "sweep", str(f), "--results", str(out))) == 2
    err = capsys.readouterr().err
    assert f"contest: --cores {many}: this machine has" in err
    assert not (out / "runs.jsonl").exists()


@pytest.mark.spark
@pytest.mark.pg
def test_two_case_sweep_end_to_end_and_resume(cfg, pg, tmp_path, capsys):
    f = _file(
        tmp_path,
        'name = "t"\nscale = 0.0005\nrepeat = 1\ncores = 2\n'
        '[grid]\n"write.codec" = ["none", "zstd"]\n',
    )
    out = tmp_path / "out"
    assert main(cli(cfg, "sweep", str(f), "--results", str(out))) == 0
    runs = out / "runs.jsonl"
    records = [json.loads(x) for x in runs.read_text().splitlines()]
    assert [r["case"] for r in records] == ["write.codec=none", "write.codec=zstd"]
    assert all(r["correct"] for r in records)
    # One run a case names no best case: no difference is measured beyond the spread.
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[-2].startswith("no significant difference")
    last = json.loads(printed[-1])  # the last line: one JSON object
    assert last["verdict"].startswith("no significant difference") and last["best"] is None
    assert not (out / "best.toml").exists() and (out / "write_codec.png").exists()
    readme = (out / "README.md").read_text()
    assert "| write.codec=none | 1 | 1 |" in readme and "no significant difference" in readme
    # Simulate an interruption after the first case: the rerun only runs the second.
    runs.write_text(runs.read_text().splitlines()[0] + "\n")
    capsys.readouterr()
    assert main(cli(cfg, "sweep", str(f), "--out", str(out))) == 0  # the old spelling
    err = capsys.readouterr().err
    assert "1 run(s) already recorded" in err
    assert "page cache: scale-0.0005-seed-2022 read ahead" in err  # each run starts cached
    assert "case write.codec=zstd" in err and "case write.codec=none" not in err
    again = [json.loads(x) for x in runs.read_text().splitlines()]
    assert again[0] == records[0] and len(again) == 2


def _summary(label, scores, **settings):
    from contest.evaluation.sweep_page import CaseSummary

    return CaseSummary(
        label,
        settings,
        len(scores),
        len(scores),
        sorted(scores)[len(scores) // 2] if scores else None,
        min(scores, default=None),
        max(scores, default=None),
        [],
    )


def test_best_case_only_beyond_the_spread_of_the_runs():
    from contest.evaluation.sweep_page import verdict

    apart = [_summary("a", [100.0, 104.0, 102.0]), _summary("b", [90.0, 95.0, 93.0])]
    v = verdict(apart)
    assert v.best is not None and v.best.label == "a" and v.text.startswith("best: a")
    close = [_summary("a", [100.0, 104.0, 102.0]), _summary("b", [99.0, 101.0, 100.0])]
    v = verdict(close)
    assert v.best is None and v.top is not None and v.top.label == "a"
    assert v.text.startswith("no significant difference") and "overlaps b" in v.text
    single = [_summary("a", [104.0]), _summary("b", [100.0])]  # a 4% single-run difference
    v = verdict(single)
    assert v.best is None and "every case has a single counted run" in v.text
    assert "repeat = 3 or more" in v.text
    # Three runs, two busy: the one quiet run is all the median counts; say so.
    kept = dataclasses.replace(_summary("b", [100.0]), runs=3, correct=3, busy=2, counted=1)
    v = verdict([_summary("a", [104.0, 103.0, 105.0]), kept])
    assert v.best is None and "b has a single counted run" in v.text
    assert "on a quiet machine (busy runs are left out)" in v.text
    assert verdict([_summary("a", [])]).text == "no case gave a correct result"


def test_best_toml_holds_only_the_settings_over_the_base(tmp_path):
    import tomllib

    from contest.config import load_config
    from contest.evaluation.strategies import STRATEGIES
    from contest.evaluation.sweep import load_sweep
    from contest.evaluation.sweep_page import best_toml

    f = _file(
        tmp_path,
        'name = "t"\nscale = 0.1\nrepeat = 3\n[base]\n"write.threads" = 2\n'
        '"spark.conf.spark.sql.adaptive.enabled" = "false"\n'
        '[grid]\n"write.codec" = ["none", "zstd"]\n',
    )
    sweep = load_sweep(f, {}, {"pg.port": 6543, "work_dir": "rel"})
    best = _summary("write.codec=zstd", [10.0, 11.0, 12.0], **sweep.base, **{"write.codec": "zstd"})
    text = best_toml(sweep, best)
    assert tomllib.loads(text) == {
        "write": {"threads": 2, "codec": "zstd"},
        "spark": {"conf.spark.sql.adaptive.enabled": "false"},
    }
    assert "6543" not in text and "rel" not in text  # this shell's port and folders
    (tmp_path / "best.toml").write_text(text)
    cfg = load_config(tmp_path / "best.toml", preset=STRATEGIES["optimized"])
    assert cfg.write.codec == "zstd" and cfg.write.threads == 2
    assert cfg.spark.conf["spark.sql.adaptive.enabled"] == "false"


def test_sweep_chart_starts_at_zero_with_whiskers_and_n():
    import matplotlib.pyplot as plt

    from contest.evaluation.sweep_page import sweep_figure

    fig = sweep_figure(
        [
            _summary("1", [100.0, 104.0], **{"write.threads": 1}),
            _summary("2", [96.0], **{"write.threads": 2}),
        ],
        "write.threads",
    )
    (ax,) = fig.axes
    low, high = ax.get_ylim()
    assert low == 0 and high >= 104.0  # a 4% difference stays 4% of the plot
    assert {t.get_text() for t in ax.texts} == {"n=2", "n=1"}
    segments = [seg for coll in ax.collections for seg in coll.get_segments()]
    assert any(seg[0][1] == 100.0 and seg[1][1] == 104.0 for seg in segments)
    plt.close(fig)


def test_sweep_progress_reads_in_a_log():
    from contest.evaluation.sweep import sweep_progress

    assert sweep_progress(0, 4, 0.0) == "sweep 0/4 runs done, 0.0 min elapsed"
    assert sweep_progress(1, 4, 120.0) == "sweep 1/4 runs done, 2.0 min elapsed, ~6.0 min left"


def test_sweep_chart_plots_the_preset_and_cuts_no_title_or_legend():
    """The preset (the case that changes nothing) is a point too; a long key's title
    and a series' legend stay inside the figure, the legend outside the data."""
    import matplotlib.pyplot as plt

    from contest.evaluation.sweep_page import sweep_figure

    key = "peer.table.hoodie.compact.inline.max.delta.commits"
    other = {"peer.table.hoodie.compact.inline": "true"}
    fig = sweep_figure(
        [_summary("preset", [19_000.0]), _summary("5", [16_000.0], **{key: "5"}, **other)],
        key,
    )
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.get_xticklabels()] == ["preset", "5"]
    fig.canvas.draw()
    whole = fig.bbox
    title = ax.title.get_window_extent()
    assert whole.x0 <= title.x0 and title.x1 <= whole.x1
    legend = ax.get_legend().get_window_extent()
    assert legend.x0 >= ax.get_window_extent().x1 and legend.x1 <= whole.x1
    plt.close(fig)


def test_a_scaled_sweeps_page_is_rebuilt_as_it_ran() -> None:
    """`--scale 1 --repeat 3` is not in the file: the folder's name and the records say
    it, so `contest report` counts every run at the scale it ran."""
    from contest.evaluation.sweep import Sweep, as_recorded, split_name
    from contest.evaluation.sweep_page import provenance
    from contest.results.runs import RunRecord

    assert split_name("peer-paimon-scale-1") == ("peer-paimon", 1.0)
    assert split_name("peer-paimon-scale-0.1") == ("peer-paimon", 0.1)
    assert split_name("peer-paimon") == ("peer-paimon", None)
    assert split_name("odd-scale-x") == ("odd-scale-x", None)
    sweep = Sweep("peer-paimon", 0.1, 1, "paimon-agg", 2022, 2, None, {}, cases=[{}])
    env = {"machine": {"cpu_model": "Test CPU 9000"}}
    recs = [
        RunRecord(
            "paimon-agg",
            rep=n,
            when=f"2026-11-29T0{n}:00:00Z",
            git_commit="abc1234",
            machine_id="m-1",
            environment=env,
        )
        for n in (0, 1, 2)
    ]
    again = as_recorded(sweep, 1.0, recs)
    assert (again.name, again.scale, again.repeat) == ("peer-paimon-scale-1", 1.0, 3)
    line = provenance(recs)
    assert "2026-11-29T00:00:00Z to 2026-11-29T02:00:00Z" in line
    assert "commit abc1234" in line and "CPU: Test CPU 9000" in line


def test_a_sweep_resumes_only_on_the_cpu_its_recorded_runs_ran_on(tmp_path) -> None:
    """A VM keeps its id when it moves host: a resumed sweep whose runs ran on another
    CPU is refused in one line naming both, before any case runs."""
    from contest.errors import UsageError
    from contest.evaluation.sweep import Sweep, case_key, resume_refusal, run_sweep
    from contest.results.runs import RunRecord, append_records

    def ran_on(cpu: str) -> RunRecord:
        return RunRecord("optimized", environment={"machine": {"cpu_model": cpu}})

    assert resume_refusal([], "CPU-A") is None
    assert resume_refusal([ran_on("CPU-A")], "CPU-A") is None
    assert resume_refusal([RunRecord("optimized")], "CPU-A") is None  # no CPU recorded
    why = resume_refusal([ran_on("CPU-A")], "CPU-B")
    assert why and "ran on CPU-A" in why and "this machine has CPU-B" in why

    sweep = Sweep("s", 0.001, 1, "optimized", 2022, 1, None, {}, cases=[{}])
    rec = ran_on("CPU-of-another-host")
    rec.case_key = case_key(sweep, {}, 0)
    append_records(tmp_path / "runs.jsonl", [rec])
    with pytest.raises(UsageError, match="ran on CPU-of-another-host; this machine has"):
        run_sweep(sweep, tmp_path, {})


def test_a_sweep_page_rebuilt_mid_sweep_says_it_is_in_progress() -> None:
    from contest.evaluation.sweep_page import runs_a_case

    done = [_summary("a", [1.0, 2.0, 3.0]), _summary("b", [1.0, 2.0, 3.0])]
    assert runs_a_case(3, done) == "3 run(s) a case"
    # Stopped after 4 runs of a 3-case, 2-runs-recorded-at-most sweep: not "2 runs a case".
    partial = [_summary("a", [1.0]), _summary("b", [1.0, 2.0]), _summary("c", [1.0])]
    line = runs_a_case(2, partial)
    assert line.startswith("in progress: 4 of 6 runs recorded") and "(1-2 a case)" in line
    # Cases added to the file after its runs: not "in progress", but named.
    added = [_summary("a", [1.0]), _summary("b", [1.0]), _summary("c", [])]
    assert runs_a_case(1, added) == "1 run(s) a case; 1 case(s) of the file not run"
