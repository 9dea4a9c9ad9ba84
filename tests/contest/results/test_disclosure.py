"""Every sitting's full disclosure page, from any results file's typed records
(contest/results/disclosure.py): the machine or "machine not recorded", the libraries,
the configuration, and each row judged by the one busy rule (the per-job noise)."""

from __future__ import annotations

import json
from pathlib import Path

from contest.results.benchmarks import DuckDBRecord, ScaleRecord
from contest.results.disclosure import (
    NOT_RECORDED,
    disclose,
    disclosure_name,
    render,
    write_pages,
)

STAMP = {
    "machine_id": "vm-1",
    "git_commit": "abc1234",
    "dirty": False,
    "cpu_model": "AMD EPYC",
    "environment": {"libraries": {"duckdb": "2.0.1", "pyarrow": "20.0.0"}},
    "config": {"work_dir": "/w", "pg": {"host": "h"}},
    # The stamp's window: a 90% peak there is shown, never judged.
    "outside_share": 0.05,
    "peak_outside_share": 0.9,
    "interval_s": 60.0,
}


def duck(contender: str, outside: float | None) -> DuckDBRecord:
    return DuckDBRecord.from_dict(
        {"sitting": "2026-12-01T10:00:00Z", "contender": contender, "round": 1, "seconds": 9.0,
         "correct": True, "outside_share": outside, "stamp": STAMP}
    )  # fmt: skip


def test_a_stamped_sitting_names_its_machine_libraries_config_and_per_job_verdicts() -> None:
    (d,) = disclose("duckdb", [duck("optimized", None), duck("floor", 0.2), duck("duckdb", 0.01)])
    assert d.name == "disclosure/duckdb-2026-12-01T10-00-00Z.md"
    page = render(d)
    assert "machine id `vm-1`; CPU: AMD EPYC" in page
    assert "duckdb 2.0.1, pyarrow 20.0.0" in page
    assert '"work_dir": "/w"' in page
    rows = {line.split(" | ")[1]: line for line in page.splitlines() if line.startswith("| 2026")}
    # No per-job noise: not judged, whatever its window's peak.
    assert rows["optimized"].endswith("| - | 5% / 90% over 1.0 min | not measured |")
    assert "other work held 20% of the CPUs" in rows["floor"]
    assert rows["duckdb"].endswith("| no |")
    assert "busy by the per-job noise" in page


def test_older_lines_say_machine_not_recorded_and_share_their_files_page() -> None:
    old = [ScaleRecord.from_dict({"scale": s, "rows": 1, "cores": 2, "correct": True})
           for s in (0.1, 1.0)]  # fmt: skip
    (d,) = disclose("scale", old)
    assert d.sitting == "scale" and d.name == "disclosure/scale.md"
    page = render(d)
    assert f"- {NOT_RECORDED}:" in page
    assert "environment (libraries' versions): not recorded" in page
    assert page.count(f"| {NOT_RECORDED} |") == 2


def test_contest_report_writes_each_sittings_page_and_the_index(tmp_path: Path) -> None:
    lines = [duck("optimized", 0.01).to_dict(), {**duck("floor", 0.0).to_dict(), "sitting": "s2"}]
    (tmp_path / "duckdb.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    wrote = {p.relative_to(tmp_path).as_posix() for p in write_pages(tmp_path)}
    assert wrote == {
        disclosure_name("2026-12-01T10:00:00Z", "duckdb"),
        disclosure_name("s2", "duckdb"),
        "disclosure/README.md",
    }
    index = (tmp_path / "disclosure" / "README.md").read_text()
    assert "(duckdb-s2.md) (vm-1)" in index
