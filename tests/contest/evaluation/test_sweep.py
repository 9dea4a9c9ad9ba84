"""Sweeps: invalid files are refused naming the key; a two-case sweep runs end to end
(real evaluations) and resumes after an interruption."""

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
    ],
)
def test_invalid_sweep_is_refused_naming_the_key(tmp_path, capsys, text, named):
    assert main(["sweep", str(_file(tmp_path, text)), "--check"]) == 2
    assert named in capsys.readouterr().err


@pytest.mark.spark
@pytest.mark.pg
def test_two_case_sweep_end_to_end_and_resume(cfg, pg, tmp_path, capsys):
    f = _file(
        tmp_path,
        'name = "t"\nscale = 0.0005\nrepeat = 1\ncores = 2\n'
        '[grid]\n"write.codec" = ["none", "zstd"]\n',
    )
    out = tmp_path / "out"
    assert main(cli(cfg, "sweep", str(f), "--out", str(out))) == 0
    runs = out / "runs.jsonl"
    records = [json.loads(x) for x in runs.read_text().splitlines()]
    assert [r["case"] for r in records] == ["write.codec=none", "write.codec=zstd"]
    assert all(r["correct"] for r in records)
    assert (out / "best.toml").exists() and (out / "write_codec.png").exists()
    assert "| write.codec=none | 1 | 1 |" in (out / "README.md").read_text()
    # Simulate an interruption after the first case: the rerun only runs the second.
    runs.write_text(runs.read_text().splitlines()[0] + "\n")
    capsys.readouterr()
    assert main(cli(cfg, "sweep", str(f), "--out", str(out))) == 0
    err = capsys.readouterr().err
    assert "1 run(s) already recorded" in err
    assert "case write.codec=zstd" in err and "case write.codec=none" not in err
    again = [json.loads(x) for x in runs.read_text().splitlines()]
    assert again[0] == records[0] and len(again) == 2
