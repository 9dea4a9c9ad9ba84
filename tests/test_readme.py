"""The README's quick tour runs as written: every `$ contest ...` line, in order."""

import os
import re
import shlex

from contest.cli.main import main
from tests.support.config import REPO, cli


def tour_commands() -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Quick tour", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```console\n(.*?)```", section, re.S).group(1)
    return [shlex.split(line[2:]) for line in block.splitlines() if line.startswith("$ ")]


def test_quick_tour_runs(cfg, pg, spark, tmp_path, capsys):
    commands = tour_commands()
    assert len(commands) >= 6 and all(c[0] == "contest" for c in commands)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        for argv in commands:
            code = main(cli(cfg, *argv[1:]))
            out = capsys.readouterr()
            assert code == 0, f"{' '.join(argv)} exited {code}: {out.err[-2000:]}"
    finally:
        os.chdir(cwd)
    assert (tmp_path / ".work" / "tour" / "result" / "_SUCCESS").is_file()


def test_readme_headline_is_the_reports():
    """The README's headline figures are the ones `contest report` derives from the
    published sittings (one line per scale, data shape and codec, the same everywhere)."""
    from contest.evaluation.report import load_sittings, sitting_headlines

    text = (REPO / "README.md").read_text()
    block = text.split("<!-- headline -->\n", 1)[1].split("<!-- /headline -->", 1)[0]
    assert block.splitlines() == sitting_headlines(load_sittings(REPO / "results")), (
        "README.md's headline block is not the published sittings' headline: paste "
        "the 'Headline' lines of `contest report`'s results/README.md"
    )


def api_example() -> str:
    text = (REPO / "README.md").read_text()
    section = text.split("## Python API", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_python_api_example_runs_and_reads_what_the_oracle_says(
    cfg, pg, spark, tmp_path, capsys, monkeypatch
):
    """The README's Python API example, after the tour's commands, against the test
    cluster: its merged read equals the oracle's, and as of version 3 equals the
    Spark read of the same version."""
    import functools

    import pyarrow.parquet as pq

    from contest import api

    os.chdir(tmp_path)
    try:
        for argv in tour_commands():
            assert main(cli(cfg, *argv[1:])) == 0, capsys.readouterr().err[-2000:]
        capsys.readouterr()
        # The example's load_config as the tour's commands got it: the test cluster.
        settings = {
            "state_dir": cfg.state_dir,
            "work_dir": cfg.work_dir,
            "pg.port": cfg.pg.port,
            "spark.master": cfg.spark.master,
        }
        monkeypatch.setattr(
            api, "load_config", functools.partial(api.load_config, settings=settings)
        )
        scope: dict = {}
        exec(compile(api_example(), "README.md (Python API)", "exec"), scope)
        printed = capsys.readouterr().out.splitlines()
    finally:
        os.chdir(REPO)

    def rows(table):
        return table.sort_by("uuid").to_pylist()

    tour = tmp_path / ".work" / "tour"
    expected = pq.read_table(tour / "expected").select(scope["merged"].column_names)
    assert scope["merged"].num_rows == expected.num_rows > 0
    assert rows(scope["merged"]) == rows(expected)
    as_of = pq.read_table(tour / "as-of-3").select(scope["as_of_3"].column_names)
    assert 0 < scope["as_of_3"].num_rows < expected.num_rows
    assert rows(scope["as_of_3"]) == rows(as_of)
    assert printed[0] == f"default.ccf {expected.num_rows} {as_of.num_rows}"
    versions = [line.split()[0] for line in printed[1:]]
    assert versions[:11] == [str(v) for v in range(10, -1, -1)]


def workload_commands() -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    section = text.split("### Phases: longevity", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```console\n(.*?)```", section, re.S).group(1)
    return [shlex.split(line[2:]) for line in block.splitlines() if line.startswith("$ ")]


def test_workload_example_runs(cfg, pg, tmp_path, capsys):
    """The README's `contest workload run` example: exit 0, every read checked."""
    from contest.results.workloads import load

    commands = workload_commands()
    assert commands and all(c[:3] == ["contest", "workload", "run"] for c in commands)
    out = tmp_path / "records.jsonl"
    said = ""
    for argv in commands:
        extra = ["--work", str(tmp_path / "work"), "--results", str(out)]
        code = main(cli(cfg, *argv[1:], *extra))
        err = capsys.readouterr().err
        said += err
        assert code == 0, f"{' '.join(argv)} exited {code}: {err[-2000:]}"
    recs = load(out)
    reads = [r for r in recs if r.version is not None]
    assert reads and all(r.correct for r in reads)
    assert "cannot run" not in said
    # The peer runs the contest's procedure too: its merge skipped, its read exact.
    delta = [r for r in recs if r.strategy == "delta-merge"]
    assert [(r.phase, r.skipped is not None) for r in delta] == [
        ("upsert", False),
        ("merge", True),
        ("read", False),
    ]
    assert delta[-1].correct is True and delta[-1].version == 10


def test_the_readmes_score_lines_add_up():
    """Every example of evaluate's score line gives the score its own numbers make:
    rows / (cores x (write + read))."""
    line = re.compile(
        r"write ([\d.]+) s, read ([\d.]+) s: ([\d,.]+) rows/core/s \(([\d,]+) rows, (\d+) cores\)"
    )
    found = line.findall((REPO / "README.md").read_text())
    assert found
    for write, read, score, rows, cores in found:
        expected = int(rows.replace(",", "")) / (int(cores) * (float(write) + float(read)))
        assert float(score.replace(",", "")) == round(expected, 1), (write, read, score)
