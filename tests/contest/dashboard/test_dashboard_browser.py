"""`contest dashboard` in a real browser: Debian's chromium driven by playwright, against
the real server (`contest dashboard --port 0`) showing the committed results/.

The expected counts and medians are computed here from the JSON-lines files with
`json` and `statistics`, not by the dashboard's code, so the page's Python (DuckDB)
side and its script's filtering are both checked against an independent reading.
"""

from __future__ import annotations

import json
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
    """Every published run the runs table shows: evaluations, cluster runs, sittings."""
    runs = records(RESULTS / "runs.jsonl")
    for path in sorted(RESULTS.glob("cluster/*/runs.jsonl")):
        runs += records(path)
    sittings = RESULTS / "peer_sittings.jsonl"
    return runs + (records(sittings) if sittings.exists() else [])


LOCAL_RUN = {
    "strategy": "optimized",
    "schema": 2,
    "run_id": "local0000001",
    "scale": 0.1,
    "correct": True,
    "rows_per_core_s": 12_345.0,
    "when": "2026-11-27T09:00:00Z",
    "machine_id": "this-machine",
}


@pytest.fixture(scope="module")
def local_store(tmp_path_factory) -> Path:
    """This machine's own store (as under .work/results/<machine>): one local run."""
    folder = tmp_path_factory.mktemp("local")
    (folder / "runs.jsonl").write_text(json.dumps(LOCAL_RUN) + "\n")
    return folder


@pytest.fixture(scope="module")
def server(local_store) -> Iterator[str]:
    """`contest dashboard` on a free loopback port; its first stdout line is the URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "contest.cli.main", "dashboard", "--results", str(RESULTS)]
        + ["--local", str(local_store), "--host", "127.0.0.1", "--port", "0"],
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
    untick(pg, "origin", "local")  # the published results, as the counts below read them
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
    # Of every run loaded: the local one is there, its origin unticked.
    assert page.locator("#runs .shown").inner_text() == f"{len(runs)} of {len(runs) + 1} runs"
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
        page.locator("#runs .shown").inner_text()
        == f"{len(runs) - optimized} of {len(runs) + 1} runs"
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


# -- every results file shown, series within one sitting and scale, busy runs
# marked, local runs toggled, tables that fit, n and spread on every chart -------------


def figures(pg) -> dict:
    return pg.evaluate("JSON.parse(document.getElementById('dashboard-data').textContent).figures")


def stream(kind: str) -> list[dict]:
    return [r for r in records(RESULTS / "streaming.jsonl") if r["kind"] == kind]


def test_the_streaming_section_shows_every_trial_replay_and_rate(page):
    # Kill trials: the random ones and those at each format's commit boundary (the
    # windows the kills landed in after the case).
    faults, fresh = stream("fault") + stream("boundary"), stream("freshness")

    def case(r: dict) -> str:
        windows = ", ".join(f"{k}: {v}" for k, v in sorted((r.get("windows") or {}).items()))
        return f"{r['case']} ({windows})" if windows else r["case"]

    assert page.locator("#streaming h3#stream-faults").is_visible()
    trials = page.locator("#streaming .table-wrap").nth(0).locator("tbody tr:visible")
    assert trials.count() == len(faults)
    cases = sorted(trials.nth(i).locator("td").nth(1).inner_text() for i in range(len(faults)))
    assert cases == sorted(case(r) for r in faults)
    rates = page.locator("#streaming .table-wrap").nth(1).locator("tbody tr:visible")
    assert rates.count() == len(fresh)
    shown = sorted(
        (c[0], c[5], c[6]) for c in (r.locator("td").all_inner_texts() for r in rates.all())
    )
    want = sorted(
        (r["format"], f"{r['freshness_p50_s']:.2f}", f"{r['freshness_p99_s']:.2f}") for r in fresh
    )
    assert shown == want
    # One line per (format, sitting); each point's whisker reaches its p99.
    traces = figures(page)["chart-stream-freshness"]["data"]
    assert len(traces) == len({(r["format"], r["sitting"]) for r in fresh})
    for t in traces:
        assert len(t["x"]) == len(t["error_y"]["array"]) and all("n=" in x for x in t["text"])
    assert page.locator("#streaming .table-wrap").nth(2).locator("tbody tr").count() == len(
        stream("metadata")
    )


def test_each_benchmark_has_its_part(page):
    want = {
        "bench-read": sum(len(r["variants"]) for r in records(RESULTS / "read_bench.jsonl")),
        "bench-compact": len(records(RESULTS / "compact.jsonl")),
        "bench-duckdb": len(records(RESULTS / "duckdb.jsonl")),
        "bench-commits": len(records(RESULTS / "commit_paths.jsonl")),
        "bench-replay": len(records(RESULTS / "meta_replay.jsonl")),
        "bench-native": len(records(RESULTS / "native_merge.jsonl")),
    }
    shown = {}
    for anchor in want:
        wrap = page.locator(f"#{anchor} ~ .table-wrap").first
        shown[anchor] = wrap.locator("tbody tr:visible").count()
    assert shown == want
    # The read variants: each median with its whisker min–max and n.
    bars = figures(page)["chart-read-bench"]["data"]
    assert sum(len(t["x"]) for t in bars) == want["bench-read"]
    assert all(t["text"][0].startswith("n=") and "arrayminus" in t["error_y"] for t in bars)


def test_a_workload_line_stays_within_one_run_and_one_scale(page):
    phases = [r for f in sorted(RESULTS.glob("workloads/*.jsonl")) for r in records(f)]
    groups = {(r["workload"], f"{r['scale']:g}") for r in phases}
    heads = page.locator("#workloads h3")
    assert {
        (heads.nth(i).get_attribute("data-workload"), heads.nth(i).get_attribute("data-scale"))
        for i in range(heads.count())
    } == groups
    figs = figures(page)
    for i in range(heads.count()):
        workload = heads.nth(i).get_attribute("data-workload")
        scale = heads.nth(i).get_attribute("data-scale")
        reads = [
            r
            for r in phases
            if (r["workload"], f"{r['scale']:g}") == (workload, scale)
            and "read" in r["phase"]
            and r["seconds"] is not None
        ]
        lines = [t for t in figs[f"chart-workload-{i}"]["data"] if t["mode"] == "lines+markers"]
        # As many lines as (lane, run) pairs, each as long as that run's reads: a lane is
        # a strategy under one maintenance policy (its own table), never two pooled.
        series = {}
        for r in reads:
            lane = (r["strategy"], r.get("policy"), r["run_id"])
            series.setdefault(lane, []).append(r["seconds"])
        assert sorted(len(t["y"]) for t in lines) == sorted(len(v) for v in series.values())
        assert sorted(tuple(t["y"]) for t in lines) == sorted(tuple(v) for v in series.values())


def busy(rec: dict) -> bool:
    """The one busy rule, read independently of the records' code: the noise measured
    during a job; a record without it is not judged."""
    return any(
        j.get("outside_share") is not None
        and (
            j["outside_share"] >= 0.10
            or (j.get("peak_outside_share") or 0) >= 0.50
            or (j.get("steal_during") or 0) >= 0.02
        )
        for j in (rec.get("load") or {}).values()
    )


def test_busy_runs_are_marked_and_the_load_shown(page):
    runs = all_runs()
    rows = page.locator("#runs tbody tr:visible")
    headers = page.locator("#runs thead th").all_inner_texts()
    b, load = headers.index("busy machine"), headers.index("load")
    cells = [r.locator("td").all_inner_texts() for r in rows.all()]
    assert sum(1 for c in cells if c[b] and c[b] != "noise not recorded") == sum(
        1 for r in runs if busy(r)
    )
    unmeasured = [
        r
        for r in runs
        if all(j.get("outside_share") is None for j in (r.get("load") or {}).values())
    ]
    assert sum(1 for c in cells if c[b] == "noise not recorded") == len(unmeasured)
    loaded = [r for r in runs if ((r.get("load") or {}).get("write") or {}).get("load1_before")]
    assert sum(1 for c in cells if c[load] != "—") == len(loaded)
    # In the chart, a busy run is a cross.
    symbols = [
        s
        for t in figures(page)["chart-runs"]["data"]
        for s in (t["marker"]["symbol"] if isinstance(t["marker"]["symbol"], list) else [])
    ]
    correct_busy = [r for r in runs if busy(r) and r.get("correct") and r.get("rows_per_core_s")]
    assert symbols.count("x-open") == len(correct_busy)


def test_local_runs_show_beside_the_published_and_toggle(page):
    runs = all_runs()
    assert visible_rows(page, "runs") == len(runs)
    tick(page, "origin", "local")
    assert visible_rows(page, "runs") == len(runs) + 1
    row = page.locator("#runs tbody tr:visible", has=page.locator("td:text-is('this-machine')"))
    assert row.count() == 1 and "12,345" in row.inner_text()
    untick(page, "origin", "published")
    assert visible_rows(page, "runs") == 1


def test_every_table_fits_the_page(page):
    """No table is wider than its column of the page (the fault table clipped its last
    column)."""
    too_wide = page.evaluate(
        """() => [...document.querySelectorAll('.table-wrap')]
            .filter(w => w.offsetParent !== null && w.scrollWidth > w.clientWidth + 1)
            .map(w => w.closest('section').id + ': ' + w.scrollWidth + ' > ' + w.clientWidth)"""
    )
    assert too_wide == []
    last = page.locator("#faults thead th").last
    box, wrap = last.bounding_box(), page.locator("#faults .table-wrap").bounding_box()
    assert box and wrap and box["x"] + box["width"] <= wrap["x"] + wrap["width"] + 1


def test_every_chart_says_its_n(page):
    for fig_id, fig in figures(page).items():
        text = json.dumps(
            [[t.get("name"), t.get("x"), t.get("text")] for t in fig["data"]]
            + [fig["layout"].get(k) for k in fig["layout"] if k.startswith("yaxis")]
        )
        assert "n=" in text, fig_id
