"""Each peer sitting's full disclosure (TPC's, ClickBench's), its own page under
disclosure/: machine, software, every job's noise and each strategy's configuration,
from the sitting's records alone; apart from peer_sittings.md (page.py), which links to it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contest.benchmarks.peers.page import num
from contest.evaluation.strategies import is_strategy, preset
from contest.infra.noise import BUSY_RULE
from contest.results.disclosure import disclosure_name
from contest.results.runs import RunRecord


def write_disclosures(records: Sequence[RunRecord], folder: Path) -> None:
    """One disclosure file per sitting in `folder`."""
    by_sitting: dict[str, list[RunRecord]] = {}
    for r in records:
        by_sitting.setdefault(r.sitting or "", []).append(r)
    for sitting_id, recs in by_sitting.items():
        path = folder / disclosure_name(sitting_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_disclosure(recs))


def native_line(natives: Sequence[tuple[str, str | None]]) -> list[str]:
    """The native engines' Python libraries as a run recorded them (none before they
    were recorded: no line)."""
    if not natives:
        return []
    return [
        "- native engines' Python libraries: "
        + ", ".join(f"{k} {v or 'absent'}" for k, v in natives)
    ]


def data_lines(files: Sequence[dict[str, Any]] | None) -> list[str]:
    """A sitting on a user's data names its files (name, bytes, SHA-256; never their
    content), so sittings on the same data are told from sittings on other data."""
    if not files:
        return []
    return [
        "",
        "## The data (a user's files)",
        "",
        "| file | bytes | SHA-256 |",
        "|---|---:|---|",
        *(f"| {f['name']} | {f['bytes']:,} | `{f['sha256']}` |" for f in files),
    ]


def render_disclosure(records: Sequence[RunRecord]) -> str:
    """A sitting's full disclosure (TPC's, ClickBench's): everything needed to judge
    and repeat it, from its records alone."""
    first = records[0]
    env = first.environment or {}
    m = first.machine
    commits = sorted({r.git_commit + ("+dirty" if r.git_dirty else "") for r in records})
    packages = sorted((env.get("jvm_packages") or {}).items())
    stamped = first.stamp.environment if first.stamp is not None else None
    libraries = sorted(((stamped or {}).get("libraries") or {}).items())
    natives = sorted((env.get("native_libraries") or {}).items())
    lines = [
        f"# Full disclosure: sitting `{first.sitting}`",
        "",
        "## Machine and software",
        "",
        f"- machine id: `{first.machine_id}`; CPU: {m.cpu_model}, {m.cores} cores; memory: "
        f"{m.memory_bytes / 2**30:.1f} GiB",
        f"- disk of the work folder: {m.disk_device} ({m.disk_fstype}), "
        f"{m.disk_total_bytes / 1e9:.0f} GB, {m.disk_free_bytes / 1e9:.0f} GB free",
        f"- OS: {m.os}, kernel {m.kernel}; JVM: {m.java}",
        f"- Python {env.get('python', '?')}, Spark {env.get('spark', '?')}, pyarrow "
        f"{env.get('pyarrow', '?')}, lakesoul (PyPI) {env.get('lakesoul_python', '?')}",
        "- every Python library: "
        + (
            ", ".join(f"{k} {v}" for k, v in libraries)
            or "not recorded (records from before they carried it)"
        ),
        "- JVM libraries (pinned coordinates): "
        + "; ".join(f"{k}: {', '.join(v)}" for k, v in packages),
        *native_line(natives),
        f"- commits: {', '.join(commits)}",
        *data_lines(first.data_files),
        "",
        "## Each job, in the order run",
        "",
        "Noise is measured during each job: other work's share of all CPUs (mean and "
        "peak over 2 s windows) and the CPU steal; `busy` runs are left out of the "
        f"medians. The one busy rule: {BUSY_RULE}.",
        "",
        "| when (UTC) | round | # | strategy | attempt | write s | read s | write noise "
        "(mean/peak) | read noise (mean/peak) | steal | load1 before | correct | busy |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:

        def noise(stage: str, rec: RunRecord = r) -> str:
            jl = rec.load.get(stage)
            if jl is None or jl.outside_share is None:
                return "-"
            return f"{jl.outside_share:.0%}/{(jl.peak_outside_share or 0):.0%}"

        steal = max(
            (jl.steal_during or 0.0 for jl in r.load.values() if jl.steal_during is not None),
            default=None,
        )
        write = r.load.get("write")
        load1 = write.load1_before if write is not None else None
        lines.append(
            f"| {r.when} | {r.compare_round} | {r.position} | {r.strategy} | {r.attempt} "
            f"| {num(r.write_s)} | {num(r.read_s)} | {noise('write')} | {noise('read')} "
            f"| {'-' if steal is None else f'{steal:.1%}'} | {num(load1, 2)} | {r.correct} "
            f"| {r.busy or ''} |"
        )
    lines += ["", "## Each strategy's configuration", ""]
    seen: set[str] = set()
    for r in records:
        if r.strategy in seen:
            continue
        seen.add(r.strategy)
        settings = preset(r.strategy) if is_strategy(r.strategy) else {}
        lines += [
            f"### {r.strategy}",
            "",
            "Preset over the defaults: `"
            + json.dumps(settings, sort_keys=True, default=str)
            + "`; the sitting's settings: `"
            + json.dumps(r.settings or {}, sort_keys=True, default=str)
            + "`.",
            "",
            "<details><summary>effective configuration</summary>",
            "",
            "```json",
            json.dumps(r.config, sort_keys=True, indent=1, default=str),
            "```",
            "",
            "</details>",
            "",
        ]
    return "\n".join(lines)
