"""Every generated page of a results folder, rendered again from its typed records:
what `contest report` writes. Each results file the registry knows has its page (the
benchmarks' `<stem>.md`, the score's README.md, each cluster's and sweep's README.md,
each workload's `<name>.md`, every sitting's full disclosure under `disclosure/`), so
no page is edited by hand: findings go to NOTES.md or
`notes/<stem>.md`, which the pages include.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from contest.benchmarks.registry import BENCHMARKS
from contest.evaluation.report import write_report
from contest.evaluation.sweep import as_recorded, load_sweep, split_name
from contest.evaluation.sweep_page import summarize, write_outputs
from contest.peers.analysis import amplification_tables
from contest.results import registry
from contest.results.disclosure import write_pages
from contest.sitting import Results
from contest.workload.report import write_report as write_workload_report


def _runs(root: Path, path: Path) -> list[Path]:
    wrote = list(write_report(path))
    records = registry.file_of(root, path).read(path)
    if any(r.peer_write for r in records):  # the peer formats' write amplification
        batches = path.parent / "peers_batches.md"
        batches.write_text(amplification_tables(records))
        wrote.append(batches)
    return wrote


def _sweep(root: Path, path: Path) -> list[Path]:
    """A sweep's README from its records and its definition (`sweeps/<name>.toml` beside
    the results folder); without the definition, the page is left as it is."""
    stem, scale = split_name(path.parent.name)
    toml = root.parent / "sweeps" / f"{stem}.toml"
    if not toml.is_file():
        return []
    records = list(registry.file_of(root, path).read(path))
    sweep = as_recorded(load_sweep(toml, {}), scale, records)
    summaries = summarize(sweep, records)
    written = write_outputs(sweep, summaries, path.parent, {}, records)
    return list(written.values())


def _workload(root: Path, path: Path) -> list[Path]:
    records = registry.file_of(root, path).read(path)
    if not records:
        return []
    return write_workload_report(path, records[0].workload, records)


def _benchmark(root: Path, path: Path) -> list[Path]:
    stem = path.stem
    for b in BENCHMARKS.values():
        if b.stem == stem:
            return [b().publish(Results(root, stem))]
    return []  # measured by no `contest bench` (native_merge: a microbenchmark's lines)


PAGES: dict[str, Callable[[Path, Path], list[Path]]] = {
    "runs": _runs,
    "cluster": _runs,
    "sweeps": _sweep,
    "workloads": _workload,
}


def regenerate(root: Path) -> list[Path]:
    """Every page (and chart) of the results folder `root`, written again; the paths
    written."""
    wrote: list[Path] = []
    for kind, path in registry.every_file(root):
        wrote += PAGES.get(kind.name, _benchmark)(root, path)
    return wrote + write_pages(root)
