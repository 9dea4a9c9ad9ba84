"""One typed record per evaluation run: the line `runs.jsonl` holds, read and written
only here so that no module reads a run by string keys.

A record carries its schema version; lines written before versions existed (schema 1:
a flat object with `failed_phase` naming the phase that failed) are read too. Its
phases are modelled on LST-Bench's telemetry event (a name, start and end time, a
status): a failed run keeps when each phase ran and which one failed, not just a name.
It also carries what decides whether its number can be trusted: the machine, the load
and CPU steal around each timed job, the commit and whether the tree was dirty.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contest.errors import DataError, UsageError
from contest.infra.machine import Sample, machine_id
from contest.infra.noise import NOISE_NOT_RECORDED, JobNoise, measured_busy
from contest.results.labels import UNKNOWN, Labels, run_commit, run_machine, run_scale
from contest.results.shown import shown, shown_property
from contest.results.stamp import Stamp

SCHEMA_VERSION = 2

OK, FAILED, RUNNING = "ok", "failed", "running"


def utc_now() -> str:
    """UTC with milliseconds: phases of a tiny run last well under a second."""
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


@dataclass
class Phase:
    """One step of a run (LST-Bench's telemetry event): its name, when it started and
    ended (UTC), how long it took, and its status; a failed one carries the error."""

    name: str
    start: str
    end: str | None = None
    seconds: float | None = None
    status: str = RUNNING
    error: str | None = None
    _t0: float = field(default=0.0, repr=False, compare=False)

    @classmethod
    def begin(cls, name: str) -> Phase:
        return cls(name, utc_now(), _t0=time.perf_counter())

    def finish(self, error: str | None = None) -> None:
        self.end = utc_now()
        self.seconds = round(time.perf_counter() - self._t0, 3)
        self.status = FAILED if error else OK
        self.error = error

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if k != "_t0"}


@dataclass
class JobLoad:
    """The machine around one timed job: samples just before and just after it
    (untimed), and the noise measured during it (contest/infra/noise.py; None in
    records older than that)."""

    load1_before: float | None = None
    load1_after: float | None = None
    steal_before: float | None = None
    steal_after: float | None = None
    # Share of all CPUs busy over the short window before the job (not the harness's).
    cpu_busy_before: float | None = None
    # During the job: other work's share of all CPUs (mean, and the highest over any
    # 2 s: noise.PEAK_WINDOW_S), CPU steal, and the CPU seconds of the job's own tree.
    outside_share: float | None = None
    peak_outside_share: float | None = None
    steal_during: float | None = None
    job_cpu_s: float | None = None

    @classmethod
    def around(cls, before: Sample, after: Sample, noise: JobNoise | None = None) -> JobLoad:
        load = cls(before.load1, after.load1, before.steal, after.steal, before.cpu_busy)
        if noise is not None:
            load.outside_share = noise.outside_share
            load.peak_outside_share = noise.peak_outside_share
            load.steal_during = noise.steal_share
            load.job_cpu_s = noise.tree_cpu_s
        return load

    @property
    def busy_during(self) -> str | None:
        """The busy rule over the noise measured during the job, when it was."""
        return measured_busy(self.outside_share, self.peak_outside_share, self.steal_during)


@dataclass(frozen=True)
class SittingSettings:
    """A peer sitting's plan, stamped on each of its runs (`RunRecord.settings`)."""

    codec: str = "preset"
    rounds: int | None = None
    strategies: tuple[str, ...] = ()
    once: tuple[str, ...] = ()  # run in the first round only (`--once`)
    busy_retries: int = 1
    resumed: bool = False


@dataclass(frozen=True)
class MachineFacts:
    """The machine, as a full disclosure names it (contest/infra/machine.py)."""

    cpu_model: str
    cores: int | None
    memory_bytes: int
    disk_device: str
    disk_fstype: str
    disk_total_bytes: int
    disk_free_bytes: int
    os: str
    kernel: str
    java: str


@dataclass
class RunRecord:
    """One evaluation of one strategy; `None` is "not measured" (the run failed first)."""

    strategy: str = field(metadata=shown("strategy"))
    schema: int = SCHEMA_VERSION
    run_id: str = ""
    when: str = field(default="", metadata=shown("when", unit="(UTC)", fmt="time", place=-1))

    @shown_property("scale")
    def scale_text(self) -> str:
        """The scale, or the one its data folder names (older records)."""
        return run_scale(self)

    @shown_property("machine")
    def machine_text(self) -> str:
        return run_machine(self)

    @shown_property("commit")
    def commit_text(self) -> str:
        return run_commit(self)

    machine_id: str = ""
    machine_cores: int | None = None
    git_commit: str = ""
    git_dirty: bool | None = None
    master: str = ""
    cores: int = 0
    rows: int | None = None
    scale: float | None = None
    data: str | None = None
    # A user's own data (workload.payload = "own"): each file's name, bytes and SHA-256
    # in batch order, so sittings on the same files are told from sittings on others.
    data_files: list[dict[str, Any]] | None = None
    table: str | None = None
    result_dir: str | None = None
    correct: bool = field(default=False, metadata=shown("correct"))

    @shown_property("rows/core/s", fmt="int")
    def score(self) -> float | None:
        """Rows per core per second of a correct run; a wrong one scores nothing."""
        return self.rows_per_core_s if self.correct else None

    size_ok: bool = False
    write_s: float | None = field(default=None, metadata=shown("write", unit="s", fmt="s1"))
    read_s: float | None = field(default=None, metadata=shown("read", unit="s", fmt="s1"))
    merge_s: float | None = None
    total_s: float | None = None
    rows_per_core_s: float | None = None
    write_rows_per_core_s: float | None = None
    read_rows_per_core_s: float | None = None
    write_peak_rss_bytes: int | None = None
    write_peak_process_rss_bytes: int | None = None
    read_peak_rss_bytes: int | None = None
    read_peak_process_rss_bytes: int | None = None
    stored_bytes: int | None = None
    size_floor_bytes: int | None = None
    spark_cores: dict[str, int | None] | None = None
    check: str | None = None
    error: str | None = field(default=None, metadata=shown("error", fmt="error", place=3))
    failed_phase: str | None = None
    # A job stopped at the run's time cap (run_cap_s): failed, and not run again.
    timed_out: bool = False
    phases: list[Phase] = field(default_factory=list)
    load: dict[str, JobLoad] = field(default_factory=dict)
    # Per timed job, the seconds spent before it started making its command (its JVM
    # libraries resolved to jars by path): untimed, for every strategy alike.
    prepare_s: dict[str, float] = field(default_factory=dict)
    # Per timed job, its timeline: the seconds of each phase between its own marks
    # (launch, jvm, imports, context, plan, tasks, finish, stop, exit; a native job has
    # no jvm or context), in order, summing to the job's wall time
    # (contest/infra/timeline.py).
    timeline: dict[str, dict[str, float]] = field(default_factory=dict)
    peer_write: dict[str, Any] | None = None
    # A compare's or a peer sitting's round; a sweep's case (key, label, repetition,
    # settings). A sitting (`contest bench peers`): its id (when it started, UTC), the
    # run's place in its round's rotated order, and its attempt (a busy run is run again).
    compare_round: int | None = None
    sitting: str | None = None
    # A benchmark's stamp (contest bench peers): the machine and the interval's noise.
    stamp: Stamp | None = None
    position: int | None = None
    attempt: int | None = None
    case_key: str | None = None
    case: str | None = None
    rep: int | None = None
    settings: dict[str, Any] | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    # Keys this version does not know (a newer writer's), kept as they were.
    extra: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def new_id() -> str:
        return uuid.uuid4().hex[:12]

    def begin(self, name: str) -> Phase:
        phase = Phase.begin(name)
        self.phases.append(phase)
        return phase

    def fail(self, phase: Phase, error: str) -> None:
        phase.finish(error)
        self.failed_phase, self.error = phase.name, error

    def phase_ok(self, prefix: str) -> bool:
        """Whether a phase whose name starts with `prefix` ran and succeeded."""
        return any(p.name.startswith(prefix) and p.status == OK for p in self.phases)

    @property
    def labels(self) -> Labels:
        """What the dashboard filters the run by."""
        return Labels(
            self.strategy, self.scale_text, self.machine_text, self.commit_text, self.when or None
        )

    @property
    def case_name(self) -> str:
        """A sweep's case: its name, or its settings."""
        case = self.case or ", ".join(f"{k}={v}" for k, v in sorted((self.settings or {}).items()))
        return case or UNKNOWN

    @shown_property("load", fmt="s1", place=2)
    def load1(self) -> float | None:
        """The one-minute load average just before the write (the first timed job)."""
        write = self.load.get("write")
        return write.load1_before if write else None

    @property
    def busy(self) -> str | None:
        """Why this run's timings are suspect, or None: the one busy rule, by the noise
        measured during each timed job (`contest.infra.noise.BUSY_RULE`). A record
        without it (older lines) is not judged: see `noise_recorded`."""
        for job, jl in self.load.items():
            if why := jl.busy_during:
                return f"{why} ({job})"
        return None

    @property
    def noise_recorded(self) -> bool:
        """Whether any timed job's own noise was measured (the busy rule's input)."""
        return any(jl.outside_share is not None for jl in self.load.values())

    @shown_property("busy machine", fmt="busy", place=1)
    def busy_text(self) -> str | None:
        """The verdict, or "noise not recorded" for a record from before per-job noise
        (never judged by another window: a sample before the job, the load average)."""
        return self.busy or (None if self.noise_recorded else NOISE_NOT_RECORDED)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name == "phases":
                value = [p.to_dict() for p in value]
            elif f.name == "load":
                value = {k: dataclasses.asdict(v) for k, v in value.items()}
            elif f.name == "stamp" and value is not None:
                value = value.to_dict()
            elif f.name == "extra":
                continue
            out[f.name] = value
        return {**self.extra, **out}

    @property
    def data_shape(self) -> str:
        """Which files the run read: its workload's name and how the files were written
        (a user's own: their folder's name and how many files)."""
        w = self.config.get("workload") or {}
        if self.data_files:
            folder = str(self.data or "").rstrip("/").rsplit("/", 1)[-1]
            return f"{w.get('name', 'contest')} / your files ({folder}, {len(self.data_files)})"
        return f"{w.get('name', 'contest')} / {w.get('file_writer', 'contest')} files"

    @property
    def sitting_settings(self) -> SittingSettings:
        """What a peer sitting planned (`contest bench peers`), from `settings`."""
        s = self.settings or {}
        return SittingSettings(
            codec=str(s.get("codec", "preset")),
            rounds=s.get("rounds"),
            strategies=tuple(s.get("strategies") or ()),
            once=tuple(s.get("once") or ()),
            busy_retries=int(s.get("busy_retries", 1)),
            resumed=bool(s.get("resumed", False)),
        )

    @property
    def machine(self) -> MachineFacts:
        """The machine a full disclosure names, from the environment (older records:
        cores and memory only)."""
        env = self.environment or {}
        m = env.get("machine") or {}
        disk = m.get("disk") or {}
        return MachineFacts(
            cpu_model=str(m.get("cpu_model", "?")),
            cores=m.get("cores", self.machine_cores),
            memory_bytes=int(m.get("memory_bytes") or env.get("machine_memory_bytes") or 0),
            disk_device=str(disk.get("device", "?")),
            disk_fstype=str(disk.get("fstype", "?")),
            disk_total_bytes=int(disk.get("total_bytes") or 0),
            disk_free_bytes=int(disk.get("free_bytes") or 0),
            os=str(m.get("os", "?")),
            kernel=str(m.get("kernel", "?")),
            java=str(m.get("java", "?")),
        )

    def summary(self) -> dict[str, Any]:
        """The record without the effective config and the environment: the JSON line
        `contest evaluate` prints last."""
        return {k: v for k, v in self.to_dict().items() if k not in ("config", "environment")}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RunRecord:
        """A record from its JSON object, of any schema version so far."""
        if not isinstance(raw, dict) or not isinstance(raw.get("strategy"), str):
            raise ValueError("not a run record (no strategy)")
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        kwargs = {k: v for k, v in raw.items() if k in known}
        extra = {k: v for k, v in raw.items() if k not in known}
        kwargs["schema"] = int(raw.get("schema", 1))
        kwargs["phases"] = [Phase(**_known(Phase, p)) for p in raw.get("phases") or []]
        kwargs["load"] = {
            k: JobLoad(**_known(JobLoad, v)) for k, v in (raw.get("load") or {}).items()
        }
        stamp = raw.get("stamp")
        kwargs["stamp"] = Stamp.from_dict(stamp) if isinstance(stamp, dict) else None
        env = raw.get("environment") or {}
        if kwargs["schema"] < 2:  # schema 1 kept these in its environment only
            kwargs.setdefault("git_commit", env.get("git_commit", ""))
            kwargs.setdefault("machine_cores", env.get("machine_cores"))
        for key in ("run_id", "when", "machine_id", "git_commit", "master"):
            if kwargs.get(key) is None:
                kwargs[key] = ""
        return cls(**kwargs, extra=extra)


def local_runs(work: Path, machine: str | None = None) -> Path:
    """Where this machine's own runs go by default: an ignored store per machine under
    the work folder (as asv keeps results per machine), never the published results;
    `contest publish` copies chosen runs from it."""
    return work / "results" / (machine or machine_id()) / "runs.jsonl"


def select_runs(records: Sequence[RunRecord], which: str) -> list[RunRecord]:
    """The runs `contest publish --runs` names: `all`, `last`, `last:N`, or run ids
    (comma-separated, a unique prefix each)."""
    which = which.strip()
    if which == "all":
        return list(records)
    if which == "last" or which.startswith("last:"):
        count = which.partition(":")[2] or "1"
        if not count.isdigit() or int(count) < 1:
            raise UsageError(f"--runs {which}: give last:N with N a positive number")
        return list(records[-int(count) :])
    out = []
    for want in (w.strip() for w in which.split(",") if w.strip()):
        hits = [r for r in records if r.run_id and r.run_id.startswith(want)]
        if len(hits) != 1:
            why = "no run has" if not hits else f"{len(hits)} runs have"
            raise UsageError(f"--runs: {why} the id {want!r} (`contest publish --list` shows them)")
        out.append(hits[0])
    if not out:
        raise UsageError("--runs: name the runs to publish (all, last, last:N or run ids)")
    return out


def _known(cls: type, raw: dict[str, Any]) -> dict[str, Any]:
    """The keys of `raw` that `cls` has (a newer writer may add some)."""
    names = {f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")}
    return {k: v for k, v in raw.items() if k in names}


def load_records(path: Path) -> list[RunRecord]:
    """Every record of a runs file, in file order; a line that is not one names itself."""
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(RunRecord.from_dict(json.loads(line)))
        except (json.JSONDecodeError, ValueError, TypeError) as exc:
            raise DataError(f"{path}:{n}: not a run record: {exc}") from None
    return out


def append_records(path: Path, records: Iterable[RunRecord]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        for r in records:
            fh.write(json.dumps(r.to_dict(), sort_keys=True, default=str) + "\n")


def cpu_models(records: Iterable[RunRecord]) -> list[str]:
    """The CPU models records ran on, those recorded: a VM may keep its id while its
    host changes, so a figure names its CPU and compares only with its own."""
    return sorted({r.machine.cpu_model for r in records} - {"", "?"})


def other_cpu(records: Iterable[RunRecord], here: str) -> str | None:
    """`ran on A; this machine has B` when records ran on a CPU other than `here`, the
    reason a sweep or sitting is not resumed over them (its runs would compare two
    machines); None when they ran here or recorded no CPU."""
    cpus = cpu_models(records)
    if cpus and here and cpus != [here]:
        return f"ran on {', '.join(cpus)}; this machine has {here}"
    return None
