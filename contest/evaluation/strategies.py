"""The strategies the harness evaluates: each a preset over the configuration's
defaults (a config file and flags still win), registered by its format's folder under
contest/peers; interleaving them in rounds."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TypeVar

from contest.peers import formats, registry

T = TypeVar("T")

DEFAULT_SCALE = 0.1

VARIANT = ":"


def _presets() -> dict[str, dict[str, object]]:
    return {n: dict(s.preset) for n, s in registry.strategies().items()}


def _defaults() -> dict[str, dict[str, object]]:
    return {n: dict(s.defaults) for n, s in registry.strategies().items() if s.defaults}


# Each strategy is a preset over the defaults (a config file and flags still win), as
# its format's folder under contest/peers registers it. A peer strategy also has its row
# at the format's documented defaults (ClickBench's "tuned" entries apart from the
# defaults), named `<strategy>:defaults` (`contest bench peers --strategies
# iceberg-mor,iceberg-mor:defaults`): what makes the strategy the strategy (its format,
# its merge mechanism, the contract's exactness) stays, every tuning setting of the
# preset goes; the session is the harness's default one. A strategy whose preset tunes
# nothing has none (lakesoul-stock: LakeSoul's libraries as shipped; optimized and the
# baselines are this harness's own). Both are views of the registry, read when asked,
# so a format registered later (a test's toy one) is in them.
class _View(Mapping[str, dict[str, object]]):
    def __init__(self, source: Callable[[], dict[str, dict[str, object]]]):
        self._source = source

    def __getitem__(self, key: str) -> dict[str, object]:
        return self._source()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._source())

    def __len__(self) -> int:
        return len(self._source())


STRATEGIES: Mapping[str, dict[str, object]] = _View(_presets)
DEFAULTS: Mapping[str, dict[str, object]] = _View(_defaults)


def variant_name(strategy: str, variant: str = "defaults") -> str:
    return f"{strategy}{VARIANT}{variant}"


def strategy_names(variants: bool = False) -> list[str]:
    """The strategies; with `variants`, each one's `:defaults` row too."""
    names = list(STRATEGIES)
    return names + [variant_name(n) for n in DEFAULTS] if variants else names


def is_strategy(name: str) -> bool:
    base, _, variant = name.partition(VARIANT)
    return base in STRATEGIES and (not variant or (variant == "defaults" and base in DEFAULTS))


def preset(name: str) -> dict[str, object]:
    """The preset of a strategy or of a strategy's variant (`iceberg-mor:defaults`)."""
    base, _, variant = name.partition(VARIANT)
    if not is_strategy(name):
        raise KeyError(name)
    return dict(DEFAULTS[base] if variant else STRATEGIES[base])


def file_stem(name: str) -> str:
    """A strategy's name as a file or table name part (`:` is a URI scheme to Hadoop)."""
    return name.replace(VARIANT, "_")


def round_order(strategies: Sequence[T], rnd: int) -> list[T]:
    """Round `rnd` (from 1) of an interleaved comparison: the strategies rotated left
    by rnd - 1, so none always runs first, last or after the same neighbour."""
    if not strategies:
        return []
    k = (rnd - 1) % len(strategies)
    return [*strategies[k:], *strategies[:k]]


def stream_preset(name: str) -> dict[str, object]:
    """The settings of the first strategy preset on the format a stream of `name` runs
    (delta-merge, paimon-agg, hudi-merger): the peer layout the batch runs measure."""
    fmt = formats.for_stream(name).name
    return next((dict(p) for p in STRATEGIES.values() if p.get("peer.format") == fmt), {})
