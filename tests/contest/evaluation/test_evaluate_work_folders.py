"""Two evaluations in separate work folders (the advice a second one in the same folder
gets) never touch each other's tables: the second's clean phase leaves the first's
table, its commits and its files as they were (issue 21, item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contest.cli.main import main
from contest.evaluation.evaluate import table_name_of
from contest.infra.postgres import resolve_connection
from meta import catalog
from meta.commits import head_snapshot
from tests.support.config import cli

pytestmark = [pytest.mark.spark, pytest.mark.pg]


def test_table_name_is_the_work_folders_own(tmp_path):
    a, b = table_name_of("optimized", tmp_path / "w1"), table_name_of("optimized", tmp_path / "w2")
    assert a != b and a.startswith("ccf_optimized_") and b.startswith("ccf_optimized_")
    assert table_name_of("baseline-mor", tmp_path / "w1").startswith("ccf_baseline_mor_")
    assert table_name_of("optimized", tmp_path / "w1" / "." / "") == a  # same folder


def _table_state(cfg, name: str) -> tuple[list, list[Path]]:
    conn = resolve_connection(cfg)
    table = catalog.get_table(conn, name, cfg.table.namespace)
    _, commits = head_snapshot(conn, table)
    ids = sorted(str(c.commit_id) for c in commits)
    files = sorted(Path(f.path.removeprefix("file://")) for c in commits for f in c.files)
    return ids, files


def test_second_work_folder_leaves_the_first_evaluations_table(cfg, pg, tmp_path, capsys):
    def evaluate(work: Path) -> dict:
        argv = cli(cfg, "evaluate", "--scale", "0.0005", "--cores", "2", "--results", "-")
        code = main([*argv, "--work", str(work)])
        out, err = capsys.readouterr()
        assert code == 0, err[-3000:]
        return json.loads(out.strip().splitlines()[-1])

    first = evaluate(tmp_path / "w1")
    commits, files = _table_state(cfg, first["table"])
    assert len(commits) == 11 and files and all(f.exists() for f in files)

    second = evaluate(tmp_path / "w2")
    assert second["table"] != first["table"]
    assert _table_state(cfg, first["table"]) == (commits, files)  # same commits, same files
    assert all(f.exists() for f in files)
    assert Path(first["result_dir"]).is_dir()  # its result, too
