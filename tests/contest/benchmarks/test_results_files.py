"""The records in results/ stay readable: every benchmark renders its committed
`<stem>.jsonl`, old lines included, into the tables of its committed `<stem>.md`
(hand-written notes below a table are not the renderer's)."""

from __future__ import annotations

import pytest

from contest.benchmarks.registry import BENCHMARKS
from contest.sitting import Results
from tests.support.config import REPO


@pytest.mark.parametrize("name", list(BENCHMARKS))
def test_committed_records_render_to_the_committed_tables(name):
    b = BENCHMARKS[name]()
    results = Results(REPO / "results", b.stem)
    records = results.load()
    if not records:
        pytest.skip(f"no {results.jsonl.name} committed")
    rendered = b.render(records)
    committed = results.md.read_text()
    assert rendered.splitlines()[0] == committed.splitlines()[0]
    rows = [ln for ln in rendered.splitlines() if ln.startswith("| ")]
    assert rows and all(row in committed for row in rows), name


def test_every_benchmark_renders_no_records():
    for b in BENCHMARKS.values():
        assert b().render([]).startswith("# ")
