"""`contest dashboard` in a real browser: Debian's chromium driven by playwright, against
the real server (`contest dashboard --port 0`) showing the committed results/.

The expected counts and medians are computed here from the JSON-lines files with
`json` and `statistics`, not by the dashboard's code, so the page's Python (DuckDB)
side and its script's filtering are both checked against an independent reading.
"""

from __future__ import annotations

import os
import queue
import signal
import statistics
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.dashboard import expected_peers as _expected_peers
from tests.support.dashboard import half_up, records, scale_text

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[3]
RESULTS = ROOT / "results"
CHROMIUM = "/usr/bin/chromium"


def all_runs() -> list[dict]:
    runs = records(RESULTS / "runs.jsonl")
    for path in sorted(RESULTS.glob("cluster/*/runs.jsonl")):
        runs += records(path)
    return runs


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """`contest dashboard` on a free loopback port; its first stdout line is the URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "contest.cli.main", "dashboard", "--results", str(RESULTS)]
        + ["--host", "127.0.0.1", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stdout is not None
    stdout = proc.stdout
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    try:
        url = lines.get(timeout=90).strip()
    except queue.Empty:
        proc.kill()
        pytest.fail("contest dashboard printed no address within 90 s")
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"contest dashboard did not start: {url!r} {err[-2000:]}")
    try:
        yield url
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C: the command stops cleanly
        try:
            code = proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
        assert proc.stderr is not None
        err = proc.stderr.read()
        proc.stderr.close()
        stdout.close()
        assert code == 0, err[-2000:]
        assert "contest: dashboard stopped" in err


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} missing: ./build.sh setup installs Debian's chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture(scope="module")
def loaded_page(browser, server):
    """One page load for the module (plotly.js is large); tests reset its filters."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.goto(server, wait_until="load")
    pg.wait_for_selector("body[data-ready='1']", timeout=60_000)
    yield pg, errors
    context.close()


@pytest.fixture
def page(loaded_page):
    pg, errors = loaded_page
    for button in pg.locator("#filters button[data-all]").all():
        button.click()
    yield pg
    assert errors == [], errors


def visible_rows(pg, section: str) -> int:
    return pg.locator(f"#{section} tbody tr:visible").count()


def points(pg, chart: str) -> int:
    return pg.locator(f"#{chart} .point").count()


def peer_cells(pg, strategy: str, scale: str) -> list[str]:
    row = pg.locator("#peers tbody tr:visible", has=pg.locator(f"td:text-is('{strategy}')"))
    for i in range(row.count()):
        cells = row.nth(i).locator("td").all_inner_texts()
        if cells[0] == scale:
            return cells
    return []


def expected_peers(keep=lambda rec: True) -> dict[tuple[str, str], list[str]]:
    return _expected_peers(RESULTS, keep)


def shown_peers(pg) -> dict[tuple[str, str], list[str]]:
    out = {}
    for row in pg.locator("#peers tbody tr:visible").all():
        c = row.locator("td").all_inner_texts()
        out[(c[0], c[1])] = [c[2], c[3], c[4], c[5], c[7]]
    return out


def commit(rec: dict) -> str:
    """The record's commit, short, wherever its shape keeps it."""
    env = rec.get("environment") or {}
    return str(env.get("git_commit") or rec.get("git_commit") or "unknown")[:7]


def untick(pg, dim: str, value: str) -> None:
    pg.locator(f"#filters input[data-dim='{dim}'][value='{value}']").uncheck()


def tick(pg, dim: str, value: str) -> None:
    pg.locator(f"#filters input[data-dim='{dim}'][value='{value}']").check()


def test_server_hands_out_the_page_and_plotly_only(server):
    with urllib.request.urlopen(server, timeout=60) as resp:
        assert resp.status == 200
        assert '<meta name="generator" content="contest dashboard">' in resp.read().decode()
    with urllib.request.urlopen(server + "plotly.min.js", timeout=60) as resp:
        assert resp.status == 200 and len(resp.read()) > 1_000_000
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(server + "runs.jsonl", timeout=60)
    assert err.value.code == 404


def test_charts_and_tables_render_the_committed_results(page):
    runs = all_runs()
    assert page.locator(".js-plotly-plot").count() >= 4  # runs, peers, scale, a sweep
    correct = [r for r in records(RESULTS / "runs.jsonl") if r.get("correct")]
    assert points(page, "chart-peers") == len(correct)
    assert visible_rows(page, "runs") == len(runs)
    assert page.locator("#runs .shown").inner_text() == f"{len(runs)} runs"
    assert visible_rows(page, "scale") == len(records(RESULTS / "scale.jsonl"))
    assert visible_rows(page, "faults") == len(records(RESULTS / "faults.jsonl"))
    phases = [r for f in sorted(RESULTS.glob("workloads/*.jsonl")) for r in records(f)]
    if phases:  # one row a phase record, beside the longevity chart
        assert visible_rows(page, "workloads") == len(phases)
    else:
        assert "No workload longevity results yet" in page.locator("#workloads").inner_text()

    # the peer table's median for optimized at scale 1, as an independent reading has it
    opt_1 = [
        r["rows_per_core_s"]
        for r in correct
        if r["strategy"] == "optimized" and scale_text(r) == "1"
    ]
    cells = peer_cells(page, "optimized", "1")
    assert cells[2] == str(len(opt_1))
    assert cells[3] == f"{half_up(statistics.median(opt_1)):,}"
    assert cells[7] == "1.00×"
    assert shown_peers(page) == expected_peers()


def test_a_strategy_filter_drops_its_rows_points_and_ratios(page):
    runs = all_runs()
    optimized = sum(1 for r in runs if r.get("strategy") == "optimized")
    correct = [r for r in records(RESULTS / "runs.jsonl") if r.get("correct")]
    before_points = points(page, "chart-peers")
    before_peers = page.locator("#peers tbody").inner_text()
    delta = peer_cells(page, "delta-merge", "0.1")
    assert delta and delta[7] != "—"

    untick(page, "strategy", "optimized")
    assert visible_rows(page, "runs") == len(runs) - optimized
    assert (
        page.locator("#runs .shown").inner_text() == f"{len(runs) - optimized} of {len(runs)} runs"
    )
    page.wait_for_function(
        "n => document.querySelectorAll('#chart-peers .point').length === n",
        arg=before_points - sum(1 for r in correct if r["strategy"] == "optimized"),
    )
    assert peer_cells(page, "optimized", "1") == []
    assert peer_cells(page, "delta-merge", "0.1")[7] == "—"  # no reference left
    assert visible_rows(page, "scale") == 0  # bench scale measures optimized only
    assert page.locator("#scale .none-shown").is_visible()

    expected = expected_peers(lambda r: r["strategy"] != "optimized")
    assert shown_peers(page) == expected

    tick(page, "strategy", "optimized")
    assert page.locator("#peers tbody").inner_text() == before_peers
    assert shown_peers(page) == expected_peers()
    assert points(page, "chart-peers") == before_points


def test_a_commit_filter_recomputes_medians_for_the_runs_left(page):
    correct = [r for r in records(RESULTS / "runs.jsonl") if r.get("correct")]
    at = [r for r in correct if r["strategy"] == "optimized" and scale_text(r) == "0.1"]
    latest = commit(max(at, key=lambda r: r["when"]))
    left = [r["rows_per_core_s"] for r in at if commit(r) != latest]
    assert left, "the committed results need optimized runs at 0.1 from two commits"

    boxes = page.locator(f"#filters input[data-dim='commit'][value^='{latest}']")
    assert boxes.count() >= 1  # the commit, and the commit +dirty if there is one
    for box in boxes.all():
        box.uncheck()
    cells = peer_cells(page, "optimized", "0.1")
    assert cells[2] == str(len(left))
    assert cells[3] == f"{half_up(statistics.median(left)):,}"
    assert cells[4] == f"{half_up(min(left)):,}–{half_up(max(left)):,}"
    assert shown_peers(page) == expected_peers(lambda r: commit(r) != latest)


def test_a_scale_filter_keeps_only_that_scale(page):
    page.locator("#filters button[data-none='scale']").click()
    assert visible_rows(page, "runs") == 0
    assert page.locator("#runs .none-shown").is_visible()
    tick(page, "scale", "0.1")
    runs = all_runs()
    assert visible_rows(page, "runs") == sum(1 for r in runs if scale_text(r) == "0.1")
    scales = page.locator("#peers tbody tr:visible td:first-child").all_inner_texts()
    assert scales and set(scales) == {"0.1"}
