"""The dashboard without a browser: reading old and new record shapes, the merged
DuckDB tables, the page's numbers against an independent reading, --out and the CLI."""

from __future__ import annotations

import html
import json
import random
import re
import statistics
from pathlib import Path

import duckdb
import pytest

from contest.cli.main import main
from contest.dashboard import load, render, write_page
from contest.dashboard.blocks import fmt, median
from contest.errors import EXIT_OK, EXIT_USAGE, UsageError
from contest.results.labels import commit_label, run_commit, run_machine, run_scale
from contest.results.runs import RunRecord
from tests.support.dashboard import expected_peers, half_up, records

RESULTS = Path(__file__).resolve().parents[3] / "results"


def write_jsonl(path: Path, lines: list[object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines),
        encoding="utf-8",
    )


@pytest.mark.parametrize(
    ("rec", "want"),
    [
        ({"strategy": "o", "environment": {"git_commit": "f876272"}}, "f876272"),
        ({"strategy": "o", "schema": 2, "git_commit": "2f38091"}, "2f38091"),
        (
            {"strategy": "o", "environment": {"git_commit": "a" * 40, "git_dirty": True}},
            "aaaaaaa+dirty",
        ),
        ({"strategy": "o", "environment": {"git_commit": "abc1234-dirty"}}, "abc1234+dirty"),
        ({"strategy": "o", "environment": {"git_commit": ""}}, "unknown"),
        ({"strategy": "o"}, "unknown"),
    ],
)
def test_a_runs_commit_from_old_and_new_shapes(rec, want):
    assert run_commit(RunRecord.from_dict(rec)) == want


def test_a_runs_machine_and_scale_from_old_and_new_shapes():
    assert run_machine(RunRecord.from_dict({"strategy": "o"})) == "unknown"
    assert run_machine(RunRecord.from_dict({"strategy": "o", "machine_id": "ci-1"})) == "ci-1"
    old = {"strategy": "o", "environment": {"machine_id": "lab"}}
    assert run_machine(RunRecord.from_dict(old)) == "lab"
    assert run_scale(RunRecord.from_dict({"strategy": "o", "scale": 1.0})) == "1"
    data = {"strategy": "o", "data": ".work/data/scale-0.01-seed-2022"}
    assert run_scale(RunRecord.from_dict(data)) == "0.01"
    assert commit_label("0123456789abcdef", dirty=False) == "0123456"


def test_median_and_formats_agree_with_duckdb():
    rng = random.Random(7)
    con = duckdb.connect()
    for n in range(1, 12):
        values = [round(rng.uniform(1_000, 250_000), 1) for _ in range(n)]
        (db,) = con.execute("SELECT median(v) FROM unnest(?) t(v)", [values]).fetchone()
        assert median(values) == db == statistics.median(values)
    assert fmt(12344.5, "int") == "12,345"  # halves up, as the page's script
    assert fmt(0.25, "s1") == "0.3"
    assert fmt(2.345, "x2") == "2.35"
    assert fmt(None, "int") == "—"


def phase(**kw: object) -> dict:
    """A workload phase record as `contest workload run` writes it."""
    base = {"workload": "cdc-trickle", "run_id": "r1", "strategy": "optimized", "step": 1}
    return {**base, "label": str(kw.get("phase")), **kw}


def mixed_results(root: Path) -> Path:
    """A results folder with an old-shape run (schema 1: the commit in its environment),
    a new-shape run (machine, dirty commit), a broken line, a sweep, a fault record and a
    workload."""
    old = {
        "strategy": "optimized",
        "scale": 0.1,
        "correct": True,
        "rows_per_core_s": 50_000.0,
        "write_s": 10.0,
        "read_s": 5.0,
        "when": "2026-11-25T10:00:00Z",
        "environment": {"git_commit": "1111111"},
    }
    new = {
        **old,
        "schema": 2,
        "strategy": "delta-merge",
        "rows_per_core_s": 10_000.0,
        "machine_id": "ci-1",
        "git_commit": "2222222",
        "git_dirty": True,
        "when": "2026-11-26T10:00:00Z",
    }
    write_jsonl(root / "runs.jsonl", [old, new, '{"strategy": "half a li'])
    write_jsonl(root / "sweeps" / "codec" / "runs.jsonl", [{**old, "case": "write.codec=zstd"}])
    fault = {"name": "kill_write", "title": "kill the write", "recovery": "x", "scale": 0.01}
    write_jsonl(root / "faults.jsonl", [{**fault, "goal_met": True}])
    write_jsonl(
        root / "workloads" / "cdc-trickle.jsonl",
        [
            phase(phase="upsert", batches_applied=5, seconds=3.0, scale=0.1),
            phase(phase="read", batches_applied=5, seconds=1.5, scale=0.1),
            phase(phase="compact", batches_applied=5, seconds=2.0, scale=0.1),
            phase(phase="read", batches_applied=10, seconds=1.2, scale=0.1),
        ],
    )
    return root


def test_load_merges_every_file_into_one_database(tmp_path):
    loaded = load(mixed_results(tmp_path))
    con = loaded.con
    assert loaded.skipped == {"runs.jsonl": 1}
    assert con.execute("SELECT count(*) FROM runs").fetchone() == (2,)
    assert con.execute(
        "SELECT strategy, machine, commit FROM runs ORDER BY strategy"
    ).fetchall() == [("delta-merge", "ci-1", "2222222+dirty"), ("optimized", "unknown", "1111111")]
    assert con.execute("SELECT sweep, case_name FROM sweeps").fetchall() == [
        ("codec", "write.codec=zstd")
    ]
    assert con.execute("SELECT name, strategy, scale, commit FROM faults").fetchall() == [
        ("kill_write", "unknown", "0.01", "unknown")
    ]
    assert con.execute("SELECT phase, batches_applied FROM workloads ORDER BY seq").fetchall() == [
        ("upsert", 5.0),
        ("read", 5.0),
        ("compact", 5.0),
        ("read", 10.0),
    ]
    # the whole record stays queryable
    (raw,) = con.execute(
        "SELECT json_extract_string(raw, '$.machine_id') FROM runs WHERE machine = 'ci-1'"
    ).fetchone()
    assert raw == "ci-1"


def test_local_runs_load_beside_the_published_ones(tmp_path):
    published = mixed_results(tmp_path / "results")
    local = tmp_path / "work" / "results" / "m1"
    write_jsonl(local / "runs.jsonl", [{"strategy": "optimized", "scale": 0.1, "run_id": "L1"}])
    con = load(published, local).con
    assert con.execute("SELECT origin, count(*) FROM runs GROUP BY ALL ORDER BY 1").fetchall() == [
        ("local", 1),
        ("published", 2),
    ]


def test_load_reads_the_committed_results():
    loaded = load(RESULTS)
    runs = records(RESULTS / "runs.jsonl")
    clusters = sum(len(records(p)) for p in RESULTS.glob("cluster/*/runs.jsonl"))
    sittings = len(records(RESULTS / "peer_sittings.jsonl"))
    assert loaded.con.execute("SELECT count(*) FROM runs").fetchone() == (
        len(runs) + clusters + sittings,
    )
    assert loaded.con.execute("SELECT count(*) FROM scale").fetchone() == (
        len(records(RESULTS / "scale.jsonl")),
    )


def page_tables(page: str, section: str) -> list[list[str]]:
    """The text of each body row of the tables of one section of a rendered page."""
    body = re.search(rf'<section id="{section}">(.*?)</section>', page, re.S)
    assert body, section
    out = []
    for tr in re.findall(r"<tbody>(.*?)</tbody>", body.group(1), re.S):
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", tr, re.S):
            cells = re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            out.append([html.unescape(re.sub(r"<[^>]+>", "", c)) for c in cells])
    return out


def test_the_peer_table_matches_an_independent_reading():
    page = render(load(RESULTS), "now", plotly_src="plotly.min.js")
    shown = {(c[0], c[1]): [c[2], c[3], c[4], c[5], c[7]] for c in page_tables(page, "peers")}
    assert shown == expected_peers(RESULTS)
    assert ("1", "optimized") in shown


def test_a_page_shows_new_shapes_workloads_and_skipped_lines(tmp_path):
    page = render(load(mixed_results(tmp_path)), "now", plotly_src="plotly.min.js")
    assert 'id="chart-workload-0"' in page
    assert "No workload longevity results yet" not in page
    for value in ("ci-1", "2222222+dirty", "unknown", "published"):
        assert f'value="{value}"' in page
    assert "runs.jsonl: 1 line(s) that are not a record were skipped" in page
    assert [r[1] for r in page_tables(page, "workloads")] == ["upsert", "read", "compact", "read"]
    data = json.loads(re.search(r'id="dashboard-data"[^>]*>(.*?)</script>', page, re.S).group(1))
    traces = data["figures"]["chart-workload-0"]["data"]
    assert [(t["name"], t["x"]) for t in traces] == [
        ("optimized", [5.0, 10.0]),
        ("optimized compaction", [5.0]),
    ]


def test_a_workload_line_never_joins_two_scales_or_two_runs(tmp_path):
    """cdc-trickle at scale 0.1 and at 0.01 are two charts; two runs of a strategy at
    one scale two lines (never one line zigzagging between them)."""
    write_jsonl(
        tmp_path / "workloads" / "cdc-trickle.jsonl",
        [
            phase(phase="read", batches_applied=1, seconds=93.0, scale=0.1),
            phase(phase="read", batches_applied=2, seconds=90.0, scale=0.1),
            phase(phase="read", batches_applied=1, seconds=95.0, scale=0.1, run_id="r2"),
        ],
    )
    write_jsonl(
        tmp_path / "workloads" / "cdc-trickle-scale-0.01.jsonl",
        [phase(phase="read", batches_applied=1, seconds=8.0, scale=0.01)],
    )
    page = render(load(tmp_path), "now", plotly_src="plotly.min.js")
    data = json.loads(re.search(r'id="dashboard-data"[^>]*>(.*?)</script>', page, re.S).group(1))
    charts = {k: v["data"] for k, v in data["figures"].items() if k.startswith("chart-workload")}
    lines = sorted((t["name"], tuple(t["y"])) for ts in charts.values() for t in ts)
    assert lines == [
        ("optimized", (8.0,)),
        ("optimized · run r1", (93.0, 90.0)),
        ("optimized · run r2", (95.0,)),
    ]
    assert len(charts) == 2


def test_each_maintenance_policy_of_a_strategy_is_a_line_of_its_own(tmp_path):
    """A longevity run's policies are tables of their own: one line each, named by it."""
    write_jsonl(
        tmp_path / "workloads" / "cdc-longevity.jsonl",
        [
            phase(phase="read", batches_applied=10, seconds=5.0, scale=0.01, policy="none"),
            phase(phase="read", batches_applied=10, seconds=4.0, scale=0.01, policy="every:20"),
            phase(phase="read", batches_applied=20, seconds=6.0, scale=0.01, policy="none"),
            phase(phase="read", batches_applied=20, seconds=4.5, scale=0.01, policy="every:20"),
        ],
    )
    page = render(load(tmp_path), "now", plotly_src="plotly.min.js")
    data = json.loads(re.search(r'id="dashboard-data"[^>]*>(.*?)</script>', page, re.S).group(1))
    charts = {k: v["data"] for k, v in data["figures"].items() if k.startswith("chart-workload")}
    lines = sorted((t["name"], tuple(t["y"])) for ts in charts.values() for t in ts)
    assert lines == [("optimized (every:20)", (4.0, 4.5)), ("optimized (none)", (5.0, 6.0))]


def test_an_empty_results_folder_says_so(tmp_path):
    page = render(load(tmp_path), "now", plotly_src="plotly.min.js")
    assert "No runs yet" in page
    assert "No workload longevity results yet" in page
    # Each section's heading once, then the line saying what it has not got yet.
    for anchor, title, none in [
        ("runs", "Runs", "No runs yet: runs.jsonl holds none."),
        ("peers", "Peer comparison", "No correct runs yet."),
        ("scale", "Scale", "No scale runs yet: scale.jsonl holds none."),
        ("sweeps", "Sweeps", "No sweeps yet: sweeps/ holds none."),
        ("streaming", "Streaming", "No streaming results yet."),
        ("faults", "Fault experiments", "No fault experiments yet."),
        ("benchmarks", "Benchmarks", "No benchmark results yet."),
    ]:
        section = page.split(f'<section id="{anchor}"><h2>{title}</h2>', 1)[1]
        assert section.split("</section>", 1)[0].endswith(f'<p class="empty">{none}</p>')


def test_write_page_replaces_only_its_own_page(tmp_path):
    results = mixed_results(tmp_path / "results")
    out = write_page(results, tmp_path / "site" / "index.html")
    text = out.read_text(encoding="utf-8")
    assert "Plotly" in text and "plotly.min.js" not in text  # self-contained
    write_page(results, out)  # its own page: replaced
    foreign = tmp_path / "notes.html"
    foreign.write_text("<html>mine</html>", encoding="utf-8")
    with pytest.raises(UsageError, match="not a page this command wrote"):
        write_page(results, foreign)
    assert foreign.read_text(encoding="utf-8") == "<html>mine</html>"


def test_cli_writes_a_page_and_refuses_a_missing_folder(tmp_path, capsys):
    results = mixed_results(tmp_path / "results")
    out = tmp_path / "dash.html"
    assert main(["dashboard", "--results", str(results), "--out", str(out)]) == EXIT_OK
    assert json.loads(capsys.readouterr().out.strip()) == {"out": str(out)}
    assert out.is_file()
    code = main(["dashboard", "--results", str(tmp_path / "nope"), "--out", str(out)])
    assert code == EXIT_USAGE
    assert (
        capsys.readouterr().err.strip() == f"contest: results folder not found: {tmp_path / 'nope'}"
    )


def test_the_dashboard_guide_example_runs(capsys, monkeypatch):
    page = (RESULTS.parent / "docs" / "guides" / "dashboard.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", page, re.S).group(1)
    monkeypatch.chdir(RESULTS.parent)
    exec(compile(code, "docs/guides/dashboard.md", "exec"), {})
    out = capsys.readouterr().out
    assert "optimized" in out and "median(rows_per_core_s)" in out


def test_the_sweep_tables_match_an_independent_reading():
    page = render(load(RESULTS), "now", plotly_src="plotly.min.js")
    shown = {r[0]: r[1:] for r in page_tables(page, "sweeps")}
    want = {}
    for path in sorted(RESULTS.glob("sweeps/*/runs.jsonl")):
        cases: dict[str, list[dict]] = {}
        for r in records(path):
            cases.setdefault(r["case"], []).append(r)
        for case, rs in cases.items():
            v = [r["rows_per_core_s"] for r in rs if r.get("correct")]
            want[case] = [
                str(len(rs)),
                str(len(v)),
                f"{half_up(statistics.median(v)):,}",
                f"{half_up(min(v)):,}–{half_up(max(v)):,}",
            ]
    assert want and shown == want
