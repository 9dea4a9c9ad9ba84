"""A workload's phases as validated data: the `[[phase]]` tables and the `[longevity]`
block of a workload file, expanded into the concrete list of steps a run executes.

Kinds (LST-Bench's tasks, for keyed upserts): `upsert` (batches, threads), `read`
(optionally `as_of` a version), `changes` (`from` A `to` B: the changes after A up to
B), `merge` (the metadata merge), `compact`, `vacuum`, `concurrent` (upserts with `reads` reads
while they land). `[longevity]` repeats "upsert `upsert`
batches, merge, read" over the batches no phase named, a read every `read_every` rounds
(and after the last), maintenance as each of its `maintenance` policies says (one plan a
policy, each run on its own table: maintenance.py), or a compaction every
`compact_every` rounds (0: never), every step of a lane in `application` = "one"
long-lived application (the default) or a process "per-phase". A file without either
gets the contest's procedure: upsert every batch, merge, read, a process per phase.
Every error is one line naming the table and key.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from contest.errors import ConfigError, toml_error
from contest.workload.maintenance import (
    NO_MAINTENANCE,
    Policy,
    compact_every_policy,
    parse_maintenance,
    round_kinds,
)

KINDS: dict[str, frozenset[str]] = {
    "upsert": frozenset({"batches", "threads"}),
    "read": frozenset({"as_of"}),
    "merge": frozenset(),
    "compact": frozenset(),
    "concurrent": frozenset({"batches", "threads", "reads"}),
    # The changes after version `from` up to `to`, merged (`read --from-version A
    # --to-version B`): the oracle over the batches with A < version <= B.
    "changes": frozenset({"from", "to"}),
    # `contest vacuum --retain 0`: the files of compacted-away commits removed, so a
    # history read from before the compaction has lost its start.
    "vacuum": frozenset(),
}
LONGEVITY_KEYS = frozenset(
    {"upsert", "compact_every", "merge", "read_every", "maintenance", "application"}
)
# How a lane's jobs run: `one` long-lived application per lane (a longevity run's
# default: a pipeline keeps its session), or a spark-submit `per-phase` (the contest's
# procedure's way, and a workload without [longevity]).
ONE_APPLICATION, PER_PHASE = "one", "per-phase"
APPLICATIONS = (ONE_APPLICATION, PER_PHASE)


@dataclass(frozen=True)
class Step:
    """One phase of a run: what it does, on which batches, in which longevity round
    (0: an explicit phase). `recheck`: a read after a policy's maintenance, which must
    equal the read just before it (the same version, the same oracle's answer)."""

    kind: str
    batches: tuple[int, ...] = ()
    threads: int | None = None
    as_of: int | None = None
    reads: int = 0
    round: int = 0
    from_version: int | None = None
    to_version: int | None = None
    recheck: bool = False

    @property
    def label(self) -> str:
        span = batch_span(self.batches)
        extra = f" as of {self.as_of}" if self.as_of is not None else ""
        if self.recheck:
            extra = " after maintenance"
        if self.kind == "concurrent":
            extra = f" with {self.reads} read(s)"
        if self.kind == "changes":
            extra = f" after {self.from_version} up to {self.to_version}"
        return f"{self.kind}{' ' + span if span else ''}{extra}"


def batch_span(batches: tuple[int, ...]) -> str:
    """`3-7` for a run of batches, `1,4` otherwise, '' for none."""
    if not batches:
        return ""
    if list(batches) == list(range(batches[0], batches[-1] + 1)) and len(batches) > 1:
        return f"{batches[0]}-{batches[-1]}"
    return ",".join(str(b) for b in batches)


def parse_batches(value: Any, where: str) -> tuple[int, ...]:
    """`5`, `"2-9"` or `[1, 2, 4]` as batch indices."""
    if isinstance(value, bool):
        raise ConfigError(f'{where}: batches are an index, "A-B" or a list, not {value!r}')
    if isinstance(value, int):
        return (value,)
    if isinstance(value, str):
        low, sep, high = value.partition("-")
        try:
            out = tuple(range(int(low), int(high) + 1)) if sep else (int(low),)
        except ValueError:
            raise ConfigError(
                f'{where}: batches {value!r}: give "A-B", an index or a list'
            ) from None
        if not out:
            raise ConfigError(f"{where}: batches {value!r} is an empty range")
        return out
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return tuple(value)
    raise ConfigError(f'{where}: batches {value!r}: give "A-B", an index or a list')


def _int(table: dict, key: str, where: str, low: int, default: int | None = None) -> int | None:
    if key not in table:
        return default
    v = table[key]
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ConfigError(f"{where}.{key}: a whole number >= {low}, not {v!r}")
    return v


def explicit_steps(phases: Any, where: str) -> list[Step]:
    """The `[[phase]]` tables as steps, each key checked."""
    if not isinstance(phases, list):
        raise ConfigError(f"{where}: phases are [[phase]] tables")
    out = []
    for n, table in enumerate(phases):
        at = f"{where}: phase {n + 1}"
        if not isinstance(table, dict):
            raise ConfigError(f"{at}: a [[phase]] table")
        kind = table.get("kind")
        if kind not in KINDS:
            raise ConfigError(f"{at}: kind {kind!r} is not one of {', '.join(KINDS)}")
        unknown = sorted(set(table) - KINDS[kind] - {"kind"})
        if unknown:
            raise ConfigError(f"{at} ({kind}): unknown key(s) {', '.join(unknown)}")
        batches: tuple[int, ...] = ()
        if kind == "changes" and not {"from", "to"} <= set(table):
            raise ConfigError(f"{at} (changes): from and to are both needed")
        if "batches" in KINDS[kind]:
            if "batches" not in table:
                raise ConfigError(f"{at} ({kind}): batches missing")
            batches = parse_batches(table["batches"], f"{at} ({kind})")
        out.append(
            Step(
                kind,
                batches,
                threads=_int(table, "threads", at, 1),
                as_of=_int(table, "as_of", at, 0),
                reads=(_int(table, "reads", at, 1, 1) or 1) if kind == "concurrent" else 0,
                from_version=_int(table, "from", at, 0),
                to_version=_int(table, "to", at, 1),
            )
        )
    return out


@dataclass
class Plan:
    """A workload's steps per maintenance policy, each run on its own table (a lane per
    strategy and policy). `named`: the file names its policies (`maintenance`), so each
    lane's records say which; otherwise one plan, under the policy `compact_every` is.
    `application`: how each lane's jobs run (ONE_APPLICATION or PER_PHASE)."""

    steps: dict[Policy, list[Step]] = field(default_factory=dict)
    named: bool = False
    application: str = PER_PHASE

    @property
    def policies(self) -> list[Policy]:
        return list(self.steps)

    def policy_steps(self, n: int) -> list[Step]:
        """The `n`-th policy's steps, in the file's order."""
        return self.steps[self.policies[n]]


def longevity_block(block: Any, where: str) -> dict[str, Any]:
    """The `[longevity]` table, its keys checked: `upsert` (batches per round),
    `read_every`, `merge`, and the policies (`maintenance`, or `compact_every`)."""
    if not isinstance(block, dict):
        raise ConfigError(f"{where}: [longevity] is a table")
    unknown = sorted(set(block) - LONGEVITY_KEYS)
    if unknown:
        raise ConfigError(f"{where}: [longevity]: unknown key(s) {', '.join(unknown)}")
    at = f"{where}: longevity"
    per = _int(block, "upsert", at, 1)
    if per is None:
        raise ConfigError(f"{at}.upsert: missing (batches upserted per round)")
    merge = block.get("merge", True)
    if not isinstance(merge, bool):
        raise ConfigError(f"{at}.merge: true or false, not {merge!r}")
    if "maintenance" in block and "compact_every" in block:
        raise ConfigError(f"{at}: maintenance and compact_every both given: keep one")
    application = block.get("application", ONE_APPLICATION)
    if application not in APPLICATIONS:
        raise ConfigError(
            f"{at}.application: one of {', '.join(map(repr, APPLICATIONS))}, not {application!r}"
        )
    if "maintenance" in block:
        policies = parse_maintenance(block["maintenance"], f"{at}.maintenance")
    else:
        policies = (compact_every_policy(_int(block, "compact_every", at, 0, 0) or 0),)
    return {
        "upsert": per,
        "merge": merge,
        "read_every": _int(block, "read_every", at, 1, 1) or 1,
        "policies": policies,
        "named": "maintenance" in block,
        "application": application,
    }


def rounds(spec: dict[str, Any], policy: Policy, remaining: list[int]) -> list[Step]:
    """Rounds of "upsert K batches, merge, read" over the remaining batches, a read
    where `read_every` says, maintenance where the policy says (maintenance.py)."""
    per = spec["upsert"]
    chunks = [remaining[i : i + per] for i in range(0, len(remaining), per)]
    out: list[Step] = []
    for r, chunk in enumerate(chunks, 1):
        out.append(Step("upsert", tuple(chunk), round=r))
        for kind in round_kinds(r, len(chunks), policy, spec["read_every"], spec["merge"]):
            recheck = kind == "recheck"
            out.append(Step("read" if recheck else kind, round=r, recheck=recheck))
    return out


def build_plans(data: dict[str, Any], batches: int, where: str) -> Plan:
    """The steps of a workload file's phases over `batches` batches for each of its
    maintenance policies, validated: each batch upserted once, in ascending order, reads
    only after an upsert, `as_of` at most the newest batch upserted by then."""
    explicit = explicit_steps(data.get("phase", []), where)
    named = [b for s in explicit for b in s.batches]
    if "longevity" not in data:
        steps = explicit or [Step("upsert", tuple(range(batches))), Step("merge"), Step("read")]
        check_plan(steps, batches, where)
        return Plan({NO_MAINTENANCE: steps})
    spec = longevity_block(data["longevity"], where)
    remaining = [b for b in range(batches) if b not in named]
    plan = Plan(named=spec["named"], application=spec["application"])
    for policy in spec["policies"]:
        steps = explicit + rounds(spec, policy, remaining)
        check_plan(steps, batches, where)
        plan.steps[policy] = steps
    return plan


def build_plan(data: dict[str, Any], batches: int, where: str) -> list[Step]:
    """The steps of the file's first policy (its only one without `maintenance`)."""
    return build_plans(data, batches, where).policy_steps(0)


def check_plan(steps: list[Step], batches: int, where: str) -> None:
    done: list[int] = []
    for n, s in enumerate(steps, 1):
        at = f"{where}: step {n} ({s.label})"
        for b in s.batches:
            if not 0 <= b < batches:
                raise ConfigError(f"{at}: batch {b} is not one of the workload's 0-{batches - 1}")
            if b in done:
                raise ConfigError(f"{at}: batch {b} is upserted twice")
            if done and b < done[-1]:
                raise ConfigError(f"{at}: batch {b} comes after batch {done[-1]}: upsert in order")
            done.append(b)
        if s.kind in ("read", "merge", "compact", "changes", "vacuum") and not done:
            raise ConfigError(f"{at}: nothing upserted yet")
        if s.as_of is not None and s.as_of > done[-1]:
            raise ConfigError(
                f"{at}: as_of {s.as_of} is past the newest batch upserted, {done[-1]}"
            )
        if s.kind == "changes":
            assert s.from_version is not None and s.to_version is not None
            if s.from_version >= s.to_version:
                raise ConfigError(f"{at}: from {s.from_version} is not before to {s.to_version}")
            if s.to_version > done[-1]:
                raise ConfigError(
                    f"{at}: to {s.to_version} is past the newest batch upserted, {done[-1]}"
                )
    if steps and not any(s.kind in ("read", "concurrent", "changes") for s in steps):
        raise ConfigError(f"{where}: the phases never read")


def workload_text(spec: str) -> tuple[str, str]:
    """A workload's TOML and where it came from (a file, or a named one)."""
    path = Path(spec)
    if spec.endswith(".toml") or path.is_file():
        if not path.is_file():
            raise ConfigError(f"workload file not found: {path}")
        return path.read_text(), str(path)
    res = resources.files("contest.workloads") / f"{spec}.toml"
    if not res.is_file():
        raise ConfigError(f"no workload named {spec!r} (or give a .toml file)")
    return res.read_text(), f"workloads/{spec}.toml"


def load_plans(spec: str, batches: int) -> Plan:
    """The validated plans of a workload (by name or file) with `batches` batches."""
    text, where = workload_text(spec)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(toml_error(where, exc)) from None
    return build_plans(data, batches, where)


def load_plan(spec: str, batches: int) -> list[Step]:
    """The validated steps of a workload's first policy (its only one without
    `maintenance`)."""
    return load_plans(spec, batches).policy_steps(0)
