"""A longevity run's maintenance policies and rounds, as pure functions of the workload
file's `[longevity]` block (plan.py expands them; the runner, in whichever mode it runs
its jobs, only follows the steps they give).

`maintenance = "none" | "every:N" | "auto"`, or a list of them, each run on its own
table (a lane per strategy and policy):
- `none`: the harness issues no maintenance.
- `every:N`: after every N commits (a commit is a round's upsert: one change batch with
  `upsert = 1`), the format's compaction and its expiry of old versions, timed, each its
  own step, then a read that must equal the read just before them (the round's read is
  issued even where `read_every` would skip it).
- `auto`: the harness issues none; the format's own documented triggers run (the
  registry's `AutoMaintenance` of its implementation, with the preset's keys that turn
  them off dropped), and every record of the lane says which, or that it has none.
`compact_every = M`, the older key, is `every:M` on compaction alone: no expiry, no read
after it (the next round's read sees the compacted table), never after the last round;
a file gives one or the other.

`read_every = K`: a checked read (after the metadata merge) every K rounds, and always one
after the last.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from contest.config import Config
from contest.errors import ConfigError
from contest.evaluation.strategies import VARIANT
from contest.peers.registry import AutoMaintenance, implementation_of

NONE, EVERY, AUTO = "none", "every", "auto"


@dataclass(frozen=True)
class Policy:
    """One maintenance policy: `kind` none, every or auto; `every` its N; `compact_only`:
    `compact_every`'s (compaction alone, checked by the next round's read)."""

    kind: str
    every: int = 0
    compact_only: bool = False

    @property
    def name(self) -> str:
        """As a workload file spells it (`every:20`)."""
        return f"{EVERY}:{self.every}" if self.kind == EVERY else self.kind

    @property
    def folder(self) -> str:
        """As a folder is named (`every-20`): `--out DIR/<strategy>/<folder>/`."""
        return self.name.replace(":", "-")

    def after(self, r: int, rounds: int) -> bool:
        """Whether maintenance runs after round `r` of `rounds`."""
        if self.kind != EVERY or r % self.every:
            return False
        return r < rounds or not self.compact_only


# A file's plan without `maintenance` or `compact_every`: the harness issues none.
NO_MAINTENANCE = Policy(NONE)


def parse_policy(value: Any, at: str) -> Policy:
    """`none`, `auto` or `every:N` (N a whole number >= 1) as a policy."""
    if value in (NONE, AUTO):
        return Policy(value)
    kind, sep, n = value.partition(":") if isinstance(value, str) else ("", "", "")
    if kind != EVERY or not sep:
        raise ConfigError(f'{at}: {value!r} is not "none", "every:N" or "auto"')
    if not n.isdigit() or int(n) < 1:
        raise ConfigError(f"{at}: {value!r}: N in every:N is a whole number >= 1")
    return Policy(EVERY, int(n))


def parse_maintenance(value: Any, at: str) -> tuple[Policy, ...]:
    """A policy or a non-empty list of distinct ones, in the file's order."""
    items = value if isinstance(value, list) else [value]
    if not items:
        raise ConfigError(f"{at}: an empty list: name at least one policy")
    out = tuple(parse_policy(v, at) for v in items)
    seen = [p.name for p in out]
    twice = sorted({n for n in seen if seen.count(n) > 1})
    if twice:
        raise ConfigError(f"{at}: {', '.join(twice)} named twice (each policy runs once)")
    return out


def compact_every_policy(every: int) -> Policy:
    """What `compact_every = M` is (0: none)."""
    return Policy(EVERY, every, compact_only=True) if every else NO_MAINTENANCE


def read_after(r: int, rounds: int, read_every: int) -> bool:
    """Whether round `r` ends with a checked read: every `read_every`-th, and the last."""
    return r % read_every == 0 or r == rounds


def maintenance_kinds(policy: Policy) -> tuple[str, ...]:
    """The steps a policy issues after a round: compaction, then (but for
    `compact_every`) the expiry of old versions."""
    return ("compact",) if policy.compact_only else ("compact", "vacuum")


def round_kinds(r: int, rounds: int, policy: Policy, read_every: int, merge: bool) -> list[str]:
    """Round `r`'s step kinds after its upsert: the metadata merge and a read where one
    is due (and before maintenance, which a read must bracket), then the policy's
    maintenance and the read that must equal the one before it (`recheck`)."""
    maintain = policy.after(r, rounds)
    out: list[str] = []
    if read_after(r, rounds, read_every) or (maintain and not policy.compact_only):
        out += ["merge", "read"] if merge else ["read"]
    if maintain:
        out += list(maintenance_kinds(policy))
        if not policy.compact_only:
            out.append("recheck")
    return out


def auto_of(strategy: str) -> AutoMaintenance:
    """The strategy's implementation's own maintenance (the registry's)."""
    return implementation_of(strategy.partition(VARIANT)[0]).auto


def auto_config(cfg: Config, auto: AutoMaintenance) -> tuple[Config, list[str]]:
    """The strategy's configuration with its format's default triggers back (the
    preset's `peer.table` keys that turned them off dropped), and the keys dropped."""
    dropped = [k for k in auto.off_keys if k in cfg.peer.table]
    if not dropped:
        return cfg, []
    table = {k: v for k, v in cfg.peer.table.items() if k not in dropped}
    return dataclasses.replace(cfg, peer=dataclasses.replace(cfg.peer, table=table)), dropped


def auto_note(strategy: str, dropped: Sequence[str]) -> str:
    """What an `auto` lane's records say: the format's own trigger, or that it has none,
    and the preset's keys dropped so the trigger applies."""
    text = auto_of(strategy).text(strategy)
    if dropped:
        text += f" (the preset's peer.table {', '.join(dropped)} dropped)"
    return text
