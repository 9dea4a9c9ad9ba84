"""An independent reading of a results folder (json and statistics only), to check the
dashboard's tables against: its Python side in unit tests, its script in the browser."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable
from pathlib import Path


def records(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def half_up(v: float) -> int:
    """Rounded as the page shows numbers (halves up, as JavaScript's Math.round)."""
    return math.floor(v + 0.5)


def scale_text(rec: dict) -> str:
    return f"{float(rec['scale']):g}"


def expected_peers(
    results: Path, keep: Callable[[dict], bool] = lambda rec: True
) -> dict[tuple[str, str], list[str]]:
    """The peer table: (scale, strategy) -> [n, median, min–max, median write s,
    optimized ×] over the correct runs of runs.jsonl that `keep` keeps."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records(results / "runs.jsonl"):
        if r.get("correct") and r.get("rows_per_core_s") is not None and keep(r):
            groups.setdefault((scale_text(r), r["strategy"]), []).append(r)
    out = {}
    for (scale, strategy), rs in groups.items():
        v = [r["rows_per_core_s"] for r in rs]
        ref = [r["rows_per_core_s"] for r in groups.get((scale, "optimized"), [])]
        ratio = "—"
        if ref:
            x = statistics.median(ref) / statistics.median(v)
            ratio = f"{math.floor(x * 100 + 0.5) / 100:.2f}×"
            ratio += " (single run)" if min(len(ref), len(v)) < 2 else ""
        write = statistics.median([r["write_s"] for r in rs])
        out[(scale, strategy)] = [
            str(len(v)),
            f"{half_up(statistics.median(v)):,}",
            f"{half_up(min(v)):,}–{half_up(max(v)):,}",
            f"{math.floor(write * 10 + 0.5) / 10:.1f}",
            ratio,
        ]
    return out
