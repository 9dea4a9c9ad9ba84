"""A benchmark's dashboard part drawn from its record alone: a toy record and its line in
the registry, and the page `contest dashboard` builds shows it with no dashboard edit."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import ClassVar

import pytest

from contest.dashboard.serve import build
from contest.results import registry
from contest.results.benchmarks import BenchRecord
from contest.results.shown import columns, shown, shown_property


@dataclass(frozen=True, kw_only=True)
class ToyRecord(BenchRecord):
    """A made-up benchmark: one probe's time, its spread and how often it ran."""

    what: ClassVar[str] = "toy record"
    probe: str = field(metadata=shown("probe", chart="x"))
    rounds: int = field(metadata=shown("rounds (n)", fmt="count", chart="n"))
    median_s: float = field(metadata=shown("median probe", unit="s", fmt="f3", chart="y"))
    min_s: float = field(metadata=shown("min", unit="s", chart="low", column=False))
    max_s: float = field(metadata=shown("max", unit="s", chart="high", column=False))
    note: str = ""  # not shown

    @shown_property("probes per second", fmt="int")
    def rate(self) -> float:
        return 1 / self.median_s


def test_declared_columns_come_in_declaration_order():
    shown_names = [c.name for c in columns(ToyRecord) if c.shown.column]
    assert shown_names == ["probe", "rounds", "median_s", "rate"]


def test_a_registered_benchmark_gets_its_dashboard_part(tmp_path, monkeypatch):
    toy = registry.ResultsFile("toy", "toy.jsonl", "Toy probes", ToyRecord.from_dict)
    monkeypatch.setitem(registry.FILES, "toy", toy)
    lines = [
        {"probe": "cold", "rounds": 3, "median_s": 0.25, "min_s": 0.2, "max_s": 0.5},
        {"probe": "warm", "rounds": 3, "median_s": 0.125, "min_s": 0.1, "max_s": 0.2},
    ]
    (tmp_path / "toy.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))

    page = build(tmp_path, plotly_src="plotly.min.js")
    part = re.search(r'<h3 id="bench-toy">(.*?)</table>', page, re.S)
    assert part, "no part for the toy benchmark"
    assert "Toy probes (<code>toy.jsonl</code>)" in part.group(1)
    headers = re.findall(r"<th class=[^>]*>(.*?)</th>", part.group(1))
    assert headers == ["probe", "rounds (n)", "median probe s", "probes per second"]
    rows = [
        [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
        for tr in re.findall(r"<tr data-k[^>]*>(.*?)</tr>", part.group(1))
    ]
    assert rows == [["cold", "3", "0.250", "4"], ["warm", "3", "0.125", "8"]]
    # Its chart: the declared y over the declared x, whiskers low to high, n in the text.
    data = json.loads(re.search(r'id="dashboard-data"[^>]*>(.*?)</script>', page, re.S).group(1))
    (trace,) = data["figures"]["chart-toy-bench"]["data"]
    assert trace["x"] == ["cold", "warm"] and trace["y"] == [0.25, 0.125]
    assert trace["error_y"]["array"] == pytest.approx([0.25, 0.075])
    assert trace["text"] == ["n=3", "n=3"]

    monkeypatch.undo()
    assert "toy" not in registry.FILES
    assert 'id="bench-toy"' not in build(tmp_path, plotly_src="plotly.min.js")
