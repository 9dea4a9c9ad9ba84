"""The documentation's examples run as written: the quick tours (README.md's and the
getting-started page's), the Python API example, the workload example, and every other
shell block of README.md and docs/, at a tiny scale, after one shared run of the tour
(one data set, one table, the test session's Spark). A block that cannot run here is
marked `<!-- not run: REASON -->` in the docs; those are listed, never silently skipped."""

from __future__ import annotations

import contextlib
import functools
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from contest import api
from contest.cli.main import main
from contest.evaluation.report import load_sittings, sitting_headlines
from contest.results.workloads import load
from tests.support.config import REPO, cli
from tests.support.doc_examples import (
    doc_files,
    every_example,
    section_block,
    tiny,
    tour_commands,
)

GETTING_STARTED = REPO / "docs" / "getting-started.md"
# Folders of the checkout the examples name by relative path, linked into their folder.
LINKED = ("sweeps", "workloads", "results")
# A not-run reason that names the test which runs the block instead.
RUN_BY = re.compile(r"(tests/[\w/]+\.py)::(\w+)")
TEST_PATH = re.compile(r"tests/[\w/]+\.py")
MARKER = re.compile(r"^<!--\s*not run:", re.M)


@dataclass
class Tour:
    """The folder the tour ran in, and every command run there so far (an example's
    command run verbatim before is not run again: the state it would make is there)."""

    root: Path
    ran: list[list[str]] = field(default_factory=list)


def run(cfg, argv: list[str]) -> None:
    """One `contest` command in this process, on the test cluster; exit 0 or its stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(cli(cfg, *argv[1:]))
    assert code == 0, f"{' '.join(argv)} exited {code}: {err.getvalue()[-2000:]}"


@pytest.fixture(scope="module")
def tour(cfg, pg, spark, tmp_path_factory) -> Tour:
    """The getting-started page's tour (README.md's is part of it), run once."""
    root = tmp_path_factory.mktemp("tour")
    for name in LINKED:
        (root / name).symlink_to(REPO / name)
    done = Tour(root)
    with contextlib.chdir(root):
        for argv in tour_commands(GETTING_STARTED):
            run(cfg, argv)
            done.ran.append(argv)
    return done


def test_the_tours_run(tour):
    readme, full = tour_commands(), tour_commands(GETTING_STARTED)
    assert all(c[0] == "contest" for c in full) and len(full) >= 6
    # README.md's tour: the database, then five commands, each run as the longer tour's.
    assert len(readme) == 6 and readme[0] == ["contest", "db", "up"]
    assert all(argv in tour.ran for argv in readme), "README.md's tour is not the page's"
    assert (tour.root / ".work" / "tour" / "result" / "_SUCCESS").is_file()
    assert (tour.root / ".work" / "tour" / "as-of-3" / "_SUCCESS").is_file()


def test_the_headlines_are_the_reports():
    """The headline figures (README.md's, the score page's) are the ones `contest report`
    derives from the published sittings (one line per scale, data shape and codec, the
    same everywhere)."""
    headline = sitting_headlines(load_sittings(REPO / "results"))
    shown = [p for p in doc_files() if "<!-- headline -->" in p.read_text()]
    assert REPO / "README.md" in shown and REPO / "docs" / "concepts" / "score.md" in shown
    for path in shown:
        text = path.read_text()
        block = text.split("<!-- headline -->\n", 1)[1].split("<!-- /headline -->", 1)[0]
        assert block.splitlines() == headline, (
            f"{path.relative_to(REPO)}'s headline block is not the published sittings' "
            "headline: paste the 'Headline' lines of `contest report`'s results/README.md"
        )


def test_python_api_example_reads_what_the_oracle_says(tour, cfg, capsys, monkeypatch):
    """The getting-started page's Python API example, after the tour, against the test
    cluster: its merged read equals the oracle's, and as of version 3 equals the Spark
    read of the same version."""
    settings = {
        "state_dir": cfg.state_dir,
        "work_dir": cfg.work_dir,
        "pg.port": cfg.pg.port,
        "spark.master": cfg.spark.master,
    }
    monkeypatch.setattr(api, "load_config", functools.partial(api.load_config, settings=settings))
    scope: dict = {}
    capsys.readouterr()
    with contextlib.chdir(tour.root):
        code = section_block(GETTING_STARTED, "## Python API", "python")
        exec(compile(code, "getting-started.md (Python API)", "exec"), scope)
    printed = capsys.readouterr().out.splitlines()

    def rows(table):
        return table.sort_by("uuid").to_pylist()

    done = tour.root / ".work" / "tour"
    expected = pq.read_table(done / "expected").select(scope["merged"].column_names)
    assert scope["merged"].num_rows == expected.num_rows > 0
    assert rows(scope["merged"]) == rows(expected)
    as_of = pq.read_table(done / "as-of-3").select(scope["as_of_3"].column_names)
    assert 0 < scope["as_of_3"].num_rows < expected.num_rows
    assert rows(scope["as_of_3"]) == rows(as_of)
    assert printed[0] == f"default.ccf {expected.num_rows} {as_of.num_rows}"
    versions = [line.split()[0] for line in printed[1:]]
    assert versions[:11] == [str(v) for v in range(10, -1, -1)]


def workload_commands() -> list[list[str]]:
    block = section_block(
        REPO / "docs" / "guides" / "workloads.md", "## Phases: longevity", "console"
    )
    return [line[2:].split() for line in block.splitlines() if line.startswith("$ ")]


@pytest.mark.slow  # two strategies' whole procedures, a job each: over two minutes
def test_workload_example_runs(cfg, pg, tmp_path, capsys):
    """The workloads guide's `contest workload run` example: exit 0, every read checked."""
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


def test_the_score_lines_add_up():
    """Every example of evaluate's score line in the docs gives the score its own numbers
    make: rows / (cores x (write + read))."""
    line = re.compile(
        r"write ([\d.]+) s, read ([\d.]+) s: ([\d,.]+) rows/core/s \(([\d,]+) rows, (\d+) cores\)"
    )
    found = [m for path in doc_files() for m in line.findall(path.read_text())]
    assert found
    for write, read, score, rows, cores in found:
        expected = int(rows.replace(",", "")) / (int(cores) * (float(write) + float(read)))
        assert float(score.replace(",", "")) == round(expected, 1), (write, read, score)


def test_every_example_is_contest_commands_or_marked():
    """A block runs as `contest` commands, or says why it is not run; a reason naming the
    test that runs the block names one that exists."""
    unmarked = [
        e.where
        for e in every_example()
        if e.not_run is None and any(argv[0] != "contest" for argv in e.commands())
    ]
    assert not unmarked, f"blocks neither runnable nor marked <!-- not run: ... -->: {unmarked}"
    marked = [e for e in every_example() if e.not_run is not None]
    for e in marked:
        assert e.not_run, f"{e.where}: not run, but says not why"
        for path in TEST_PATH.findall(e.not_run):
            assert (REPO / path).is_file(), f"{e.where}: names {path}, which is not there"
        for module, name in RUN_BY.findall(e.not_run):
            assert f"def {name}(" in (REPO / module).read_text(), f"{e.where}: no {module}::{name}"
    # Every marker stands right above a block (a stray one would mark nothing).
    markers = sum(len(MARKER.findall(path.read_text())) for path in doc_files())
    assert markers == len(marked), "a <!-- not run: ... --> comment is not above a block"


def test_every_doc_example_runs(tour, cfg):
    """Every block not marked runs, in the docs' order, in the tour's folder, at a tiny
    scale; the marked ones are listed with their reasons (pytest -s shows them)."""
    ran, shared, not_run = [], [], []
    with contextlib.chdir(tour.root):
        for example in every_example():
            if example.not_run is not None:
                not_run.append(f"{example.where}: {example.not_run}")
                continue
            for argv in map(tiny, example.commands()):
                if argv in tour.ran:
                    shared.append(f"{example.where}: {' '.join(argv)}")
                    continue
                run(cfg, argv)
                tour.ran.append(argv)
                ran.append(f"{example.where}: {' '.join(argv)}")
    print(f"\n{len(ran)} example commands run, {len(shared)} run before (the tour):")
    print("\n".join(ran + shared))
    print(f"{len(not_run)} example blocks not run:\n" + "\n".join(not_run))
    # What must run beyond the tour: maintenance, a sweep file's check, the dashboard
    # page, a workload's data.
    for expected in ("contest compact", "contest sweep", "contest dashboard", "contest gen"):
        assert any(expected in line for line in ran), f"no example ran {expected}"
    assert (tour.root / ".work" / "dashboard.html").is_file()
