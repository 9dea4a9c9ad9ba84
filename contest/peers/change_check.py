"""Change data refused before any data is written: the implementation a configuration
runs (its strategy's, or the one its engines name) declares the change data it takes
(`Implementation.changes`, contest/data/changes.py `ChangeSupport`); the discovered
batches say what the data needs (its key's types, partial batches) and the workload's
operators whether a NULL must be told from an absent column. What it lacks is refused
in one line naming the mechanism (ConfigError: exit 2)."""

from __future__ import annotations

from contest.config import Config, WorkloadConfig
from contest.data.changes import change_refusal, changes_of
from contest.data.operators import type_name
from contest.data.workload import BatchColumns, null_overwriting, workload_schema
from contest.errors import ConfigError
from contest.peers import registry

# The implementations LakeSoul's engines are (contest/peers/lakesoul/__init__.py).
_LAKESOUL = "lakesoul"
_LAKESOUL_STOCK = "lakesoul-stock"


def implementation_for(cfg: Config, strategy: str = "") -> registry.Implementation:
    """The implementation a strategy (its `:defaults` row too) or, for a configuration
    of none, its engines run: the peer format's, stock LakeSoul's, else the harness's."""
    base = strategy.split(":", 1)[0]
    if base:
        try:
            return registry.implementation_of(base)
        except KeyError:
            pass
    if cfg.peer.format:
        name = cfg.peer.format
    elif _LAKESOUL_STOCK in (cfg.write.engine, cfg.read.engine):
        name = _LAKESOUL_STOCK
    else:
        name = _LAKESOUL
    return registry.IMPLEMENTATIONS[name]


def refusal_of(cfg: Config, found: BatchColumns, strategy: str = "") -> str | None:
    """Why the configuration's implementation cannot take this change data, or None.
    `found`: the rule `discover` checked the batches with (it recorded their key types
    and which batches are partial)."""
    impl = implementation_for(cfg, strategy)
    base = strategy.split(":", 1)[0]
    named = any(s.name == base for s in impl.strategies)
    return change_refusal(
        registry.change_support(base) if named else impl.changes,
        changes_of(cfg),
        found.key_types,
        bool(found.partial),
        null_overwriting(cfg.workload),
        strategy or impl.name,
        payload_types(cfg.workload),
    )


def payload_types(workload: WorkloadConfig) -> dict[str, str]:
    """Each payload column's type name (the operator registry's), as the workload
    declares it (the files are checked against it)."""
    keys = set(workload.key)
    schema = workload_schema(workload)
    return {f.name: type_name(f.type) for f in schema if f.name not in keys}


def refuse(cfg: Config, found: BatchColumns, strategy: str = "") -> None:
    """`refusal_of` raised: one line, exit 2, before any data is written."""
    why = refusal_of(cfg, found, strategy)
    if why:
        raise ConfigError(why)
