"""Every sitting's full disclosure (TPC's, ClickBench's), from any results file's typed
records: the machine (its id and CPU model; "machine not recorded" for lines from
before records carried one), the commits, every library's version, each configuration
the rows ran under, and each row's noise judged by the one busy rule (the per-job
noise, `contest.infra.noise.BUSY_RULE`). One mechanism for every benchmark: a record
discloses through its stamp (`contest.results.stamp.Stamp`, what
`contest.sitting.Sitting.record` writes) or, an evaluation's run, through its
own environment and config; the page reads either the same way.

A peer sitting's page is its benchmark's own, richer one (each job's write and read
apart, `contest bench peers`); the same name rule (`disclosure_name`) places both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contest.infra.noise import BUSY_RULE, measured_busy
from contest.results import registry

NOT_RECORDED = "machine not recorded"
ID_NOT_RECORDED = "machine id not recorded"
# Their sittings' pages are written by their own benchmark (`contest bench peers`).
OWN_PAGES = frozenset({"peer_sittings"})
# What names a row, the first of these a record has (a strategy, a contender, a path...).
WHAT = ("strategy", "label", "path", "name", "format", "bench", "contender", "kind")


def slug(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z-]", "-", text)


def disclosure_name(sitting: str, source: str | None = None) -> str:
    """A sitting's page under the results folder: `disclosure/<sitting>.md` for a peer
    sitting's, `disclosure/<file>-<sitting>.md` for another file's (two benchmarks'
    sittings never share a page), `disclosure/<file>.md` for a file's lines that carry
    no sitting id (their sitting is named by the file)."""
    if source is None or sitting == source:
        return f"disclosure/{slug(sitting)}.md"
    return f"disclosure/{slug(source)}-{slug(sitting)}.md"


def sitting_of(r: Any, source: str) -> str:
    """A record's sitting id: when its invocation started, or for an older line
    without one, the results file it lies in (`sweeps/codec/runs`)."""
    return getattr(r, "sitting", None) or source


@dataclass(frozen=True)
class Row:
    """One record as its sitting's page lists it."""

    when: str
    what: str
    machine: str
    commit: str
    job_noise: str  # measured during the row's own jobs, or "-"
    window_noise: str  # the stamp's window (shown, never judged), or "-"
    busy: str  # the verdict by the per-job noise, "" when quiet, "-" when not measured


@dataclass
class Disclosed:
    """One sitting of one results file: what its page shows."""

    source: str  # the results file, relative to the results folder
    sitting: str
    rows: list[Row] = field(default_factory=list)
    machines: dict[str, str] = field(default_factory=dict)  # machine id -> CPU model
    commits: set[str] = field(default_factory=set)
    environments: list[dict[str, Any]] = field(default_factory=list)
    configs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return disclosure_name(self.sitting, self.source)


def _first(r: Any, names: Iterable[str]) -> str:
    for n in names:
        v = getattr(r, n, None)
        if isinstance(v, str) and v:
            return v
    return "-"


def _share(v: float | None) -> str:
    return "-" if v is None else f"{v:.0%}"


def job_noise(r: Any) -> tuple[str, str]:
    """(the noise measured during the row's own jobs, the busy verdict by it): an
    evaluation's per job (`load`), a phase's or an engine's own figures; `-` when the
    row's jobs measured none (then no verdict)."""
    load = getattr(r, "load", None)
    if isinstance(load, dict) and load:
        cells, verdicts = [], []
        for job, jl in load.items():
            if getattr(jl, "outside_share", None) is None:
                continue
            cells.append(f"{job} {_share(jl.outside_share)}/{_share(jl.peak_outside_share)}")
            if why := jl.busy_during:
                verdicts.append(f"{why} ({job})")
        if not cells:
            return "-", "-"
        return ", ".join(cells), "; ".join(verdicts)
    outside = getattr(r, "outside_share", None)
    if not isinstance(outside, int | float):
        return "-", "-"
    peak = getattr(r, "peak_outside_share", None)
    steal = getattr(r, "steal_share", None)
    text = _share(outside) + (f"/{_share(peak)}" if peak is not None else "")
    return text, measured_busy(outside, peak, steal) or ""


def where(r: Any) -> tuple[str, str, str, dict[str, Any] | None, dict[str, Any] | None]:
    """(machine id, CPU model, commit, environment, config) a record discloses: its
    stamp's, else its own (an evaluation's run, a workload's phase)."""
    stamp = getattr(r, "stamp", None)
    # A run's own environment, with what its stamp adds (every library's version).
    env = {**(getattr(r, "environment", None) or {}), **(getattr(stamp, "environment", None) or {})}
    config = getattr(stamp, "config", None) or getattr(r, "config", None) or None
    machine = getattr(stamp, "machine_id", None) or getattr(r, "machine_id", None) or ""
    cpu = getattr(stamp, "cpu_model", None) or (env.get("machine") or {}).get("cpu_model", "")
    commit = getattr(stamp, "git_commit", None) or getattr(r, "git_commit", None) or ""
    dirty = getattr(stamp, "dirty", None) if stamp is not None else getattr(r, "git_dirty", None)
    return machine, cpu, commit + ("+dirty" if commit and dirty else ""), env or None, config


def disclose(source: str, records: Sequence[Any]) -> list[Disclosed]:
    """The records of one results file by sitting, in the order first seen; records
    without a sitting id (older lines) together on one page of their file."""
    out: dict[str, Disclosed] = {}
    for r in records:
        sitting = sitting_of(r, source)
        d = out.setdefault(sitting, Disclosed(source, sitting))
        machine, cpu, commit, env, config = where(r)
        if not machine and cpu:  # the CPU recorded without the machine's id
            machine = ID_NOT_RECORDED
        if machine:
            d.machines[machine] = d.machines.get(machine) or cpu
        if commit:
            d.commits.add(commit)
        if env is not None and env not in d.environments:
            d.environments.append(env)
        if config is not None and config not in d.configs:
            d.configs.append(config)
        stamp = getattr(r, "stamp", None)
        noise, busy = job_noise(r)
        d.rows.append(
            Row(
                when=_first(r, ("when",)) if getattr(r, "when", None) else sitting,
                what=_first(r, WHAT),
                machine=machine or NOT_RECORDED,
                commit=commit or "-",
                job_noise=noise,
                window_noise=stamp.summary() if stamp is not None else "-",
                busy=busy,
            )
        )
    return list(out.values())


def _machine_lines(d: Disclosed) -> list[str]:
    if not d.machines:
        return [
            f"- {NOT_RECORDED}: these lines were written before the records carried the "
            "machine; no figure of theirs can be tied to a machine or a CPU"
        ]
    lines = [
        f"- machine id `{m}`; CPU: {cpu or 'CPU model not recorded'}"
        for m, cpu in sorted(d.machines.items())
    ]
    if any(r.machine == NOT_RECORDED for r in d.rows):
        lines.append(f"- some rows: {NOT_RECORDED}")
    return lines


def _software_lines(env: dict[str, Any]) -> list[str]:
    m = env.get("machine") or {}
    disk = m.get("disk") or {}
    lines = []
    if m:
        lines += [
            f"- {m.get('cores', '?')} cores, {int(m.get('memory_bytes') or 0) / 2**30:.1f} "
            f"GiB; disk of the work folder: {disk.get('device', '?')} "
            f"({disk.get('fstype', '?')})",
            f"- OS: {m.get('os', '?')}, kernel {m.get('kernel', '?')}; JVM: {m.get('java', '?')}",
        ]
    libraries = env.get("libraries") or {}
    shown = libraries or {
        k: env[k] for k in ("python", "spark", "pyarrow", "lakesoul_python") if k in env
    }
    lines.append(
        "- Python libraries: " + ", ".join(f"{k} {v}" for k, v in sorted(shown.items()))
        if shown
        else "- Python libraries: not recorded"
    )
    packages = sorted((env.get("jvm_packages") or {}).items())
    if packages:
        lines.append(
            "- JVM libraries (pinned coordinates): "
            + "; ".join(f"{k}: {', '.join(v)}" for k, v in packages)
        )
    return lines


def render(d: Disclosed) -> str:
    """The page of one sitting of one results file."""
    lines = [
        f"# Full disclosure: `{d.source}`, sitting `{d.sitting}`",
        "",
        "Generated by `contest report` from the records alone.",
        "",
        "## Machine and software",
        "",
        *_machine_lines(d),
        f"- commits: {', '.join(sorted(d.commits)) or 'not recorded'}",
    ]
    if not d.environments:
        lines.append("- environment (libraries' versions): not recorded")
    for env in d.environments:
        lines += _software_lines(env)
    lines += [
        "",
        "## Each row, in the order recorded",
        "",
        f"The one busy rule: {BUSY_RULE}. Job noise: other work's share of the CPUs "
        "during the row's own jobs (mean/2-s peak); window: over the stamp's interval.",
        "",
        "| when (UTC) | row | machine | commit | job noise | window noise | busy |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in d.rows:
        busy = "not measured" if r.busy == "-" else (r.busy or "no")
        lines.append(
            f"| {r.when} | {r.what} | {r.machine} | {r.commit} | {r.job_noise} "
            f"| {r.window_noise} | {busy} |"
        )
    lines += ["", "## Configuration", ""]
    if not d.configs:
        lines.append("Not recorded (lines from before the records carried it).")
    for n, config in enumerate(d.configs, 1):
        lines += [
            f"<details><summary>effective configuration {n} of {len(d.configs)}</summary>",
            "",
            "```json",
            json.dumps(config, sort_keys=True, indent=1, default=str),
            "```",
            "",
            "</details>",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_pages(root: Path) -> list[Path]:
    """Every sitting's page written again, and the index of every sitting's page
    (`disclosure/README.md`, the peer sittings' own pages too); the paths written."""
    wrote = []
    index = [
        "# Full disclosure of every sitting",
        "",
        "Generated by `contest report`: one page per sitting of every results file (lines "
        f"without a sitting id: one page per file). The one busy rule: {BUSY_RULE}.",
        "",
    ]
    for kind, path in registry.every_file(root):
        source = path.relative_to(root).with_suffix("").as_posix()
        records = kind.read(path)
        if kind.name in OWN_PAGES:
            ids = dict.fromkeys(sitting_of(r, source) for r in records)
            index += [
                f"- `{source}`, sitting `{i}`: [{disclosure_name(i)[11:]}]"
                f"({disclosure_name(i)[11:]})"
                for i in ids
            ]
            continue
        for d in disclose(source, records):
            page = root / d.name
            page.parent.mkdir(parents=True, exist_ok=True)
            page.write_text(render(d))
            wrote.append(page)
            machines = ", ".join(sorted(d.machines)) or NOT_RECORDED
            index.append(
                f"- `{source}`, sitting `{d.sitting}`: [{d.name[11:]}]({d.name[11:]}) ({machines})"
            )
    readme = root / "disclosure" / "README.md"
    readme.parent.mkdir(parents=True, exist_ok=True)
    readme.write_text("\n".join(index) + "\n")
    return [*wrote, readme]


def links(source: str, records: Sequence[Any]) -> list[str]:
    """Markdown lines linking each sitting's page of a file's records (from a page in
    the results folder's top)."""
    return [
        f"- `{d.sitting}`: [{d.name}]({d.name}) ({', '.join(sorted(d.machines)) or NOT_RECORDED})"
        for d in disclose(source, records)
    ]
