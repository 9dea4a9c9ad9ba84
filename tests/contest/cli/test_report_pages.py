"""`contest report` renders every committed page again, byte for byte, from the
committed records alone: no generated page is edited by hand (findings live in
NOTES.md and notes/<stem>.md, which the pages include)."""

from __future__ import annotations

import shutil
from pathlib import Path

from contest.cli.main import main
from contest.results import registry
from tests.support.config import REPO

# Pages written by hand, which no record renders (each says what it analyses).
HAND = {
    "NOTES.md",  # findings, included at the end of README.md
    "peers.md",
    "machine_limit.md",
    "lakesoul_stock_read.md",
    "native_merge.md",  # quotes merge_micro's printed lines (native_merge.jsonl)
    "cluster/README.md",
    "workloads/README.md",
}


def test_contest_report_regenerates_every_committed_page(tmp_path: Path, capsys):
    shutil.copytree(REPO / "results", tmp_path / "results")
    shutil.copytree(REPO / "sweeps", tmp_path / "sweeps")  # the sweeps' definitions
    for page in (tmp_path / "results").rglob("*.md"):
        rel = page.relative_to(tmp_path / "results")
        if rel.as_posix() not in HAND and rel.parts[0] != "notes":
            page.write_text("stale\n")  # each must be written again, not left as it was
    args = ["--set", f"results_dir={tmp_path / 'results'}", "--set", f"work_dir={tmp_path}"]
    assert main([*args, "report"]) == 0
    capsys.readouterr()
    generated = []
    for committed in sorted((REPO / "results").rglob("*.md")):
        rel = committed.relative_to(REPO / "results")
        if rel.as_posix() in HAND or rel.parts[0] == "notes":
            continue
        again = (tmp_path / "results" / rel).read_text()
        assert again == committed.read_text(), f"{rel} is not what `contest report` writes"
        generated.append(rel)
    # A page per results file (native_merge.jsonl's is written by hand), the peers'
    # write amplification from runs.jsonl, and each sitting's full disclosure.
    files = list(registry.every_file(REPO / "results"))
    disclosures = [p for p in generated if p.parts[0] == "disclosure"]
    assert len(generated) == len(files) - 1 + 1 + len(disclosures)
    assert Path("peers_batches.md") in generated


def test_report_results_takes_a_folder_as_the_benchmarks_do(tmp_path: Path, capsys):
    """`--results DIR`, as every benchmark takes it, regenerates that folder's pages (it
    was read as a runs file and ended in a traceback); a folder without runs is one line."""
    shutil.copytree(REPO / "results", tmp_path / "results")
    shutil.copytree(REPO / "sweeps", tmp_path / "sweeps")
    page = tmp_path / "results" / "duckdb.md"
    page.write_text("stale\n")
    args = ["--set", f"work_dir={tmp_path}", "report", "--results", str(tmp_path / "results")]
    assert main(args) == 0
    assert page.read_text() == (REPO / "results" / "duckdb.md").read_text()
    capsys.readouterr()
    (tmp_path / "empty").mkdir()
    code = main(["--set", f"work_dir={tmp_path}", "report", "--results", str(tmp_path / "empty")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0 and len(err) == 1 and "no runs file at" in err[0]
