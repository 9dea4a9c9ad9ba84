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
    published runs (one figure per scale, the same everywhere)."""
    from collections import defaultdict

    from contest.evaluation.results import headlines, load_runs

    groups = defaultdict(list)
    for r in load_runs(REPO / "results" / "runs.jsonl"):
        if r.scale is not None:
            groups[(r.scale, r.strategy)].append(r)
    text = (REPO / "README.md").read_text()
    block = text.split("<!-- headline -->\n", 1)[1].split("<!-- /headline -->", 1)[0]
    assert block.splitlines() == headlines(groups), (
        "README.md's headline block is not the published runs' headline: paste "
        "the 'Headline' lines of `contest report`'s results/README.md"
    )
