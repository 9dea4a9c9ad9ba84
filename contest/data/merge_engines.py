"""The registry of merge engines: each engine a strategy or format merges with (the
harness's numpy, DuckDB, pyarrow and polars merges, Spark SQL, LakeSoul's native
operators, and the engines the format folders under contest/peers register), and
which operators of the operator registry (contest/data/operators.py) it expresses.
An engine that cannot express an operator refuses it here, in one line (`refusal`),
before any work."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from contest.data.operators import OPERATORS, Operator, get
from contest.errors import MergeOperatorError


@dataclass(frozen=True)
class MergeEngine:
    """An engine a format or strategy merges with, and which operators it expresses:
    `native` maps an operator's name to the engine's own name for it (an operator it
    does not map is refused), or, for the harness's engines, `expresses` says which."""

    name: str
    label: str
    native: Mapping[str, str] | None = None
    expresses: Callable[[Operator], bool] = lambda op: True

    def has(self, op: Operator) -> bool:
        return op.name in self.native if self.native is not None else self.expresses(op)

    def name_of(self, operator: str) -> str | None:
        return (self.native or {}).get(operator)


ENGINES: dict[str, MergeEngine] = {
    e.name: e
    for e in (
        MergeEngine("numpy", "read.merge=numpy"),
        MergeEngine("duckdb", "read.merge=duckdb"),
        MergeEngine("arrow", "read.merge=arrow", expresses=lambda op: op.arrow is not None),
        MergeEngine("polars", "read.merge=polars", expresses=lambda op: op.polars is not None),
        MergeEngine("spark", "Spark SQL"),
        MergeEngine(
            "lakesoul",
            "LakeSoul 2.6.2's merge operators",
            expresses=lambda op: op.lakesoul is not None,
        ),
    )
}


def register_engine(engine: MergeEngine) -> None:
    """A format's own merge engine (its folder registers it with its implementation)."""
    if ENGINES.get(engine.name, engine) != engine:
        raise MergeOperatorError(f"merge engine {engine.name!r} is registered already")
    unknown = sorted(set(engine.native or ()) - set(OPERATORS))
    if unknown:
        raise MergeOperatorError(f"merge engine {engine.name}: unknown operators {unknown}")
    ENGINES[engine.name] = engine


def unregister_engine(name: str) -> None:
    ENGINES.pop(name)


def engine(name: str) -> MergeEngine:
    try:
        return ENGINES[name]
    except KeyError:
        raise MergeOperatorError(
            f"unknown merge engine {name!r} (known: {', '.join(ENGINES)})"
        ) from None


def refusal(ops: Mapping[str, str], engines: tuple[str, ...], who: str) -> str | None:
    """Why `who` (a strategy or format) cannot merge these operators with `engines`, in
    one line naming the operator and the format, or None."""
    for col, name in ops.items():
        op = get(name)
        for name_ in engines:
            merger = engine(name_)
            if not merger.has(op):
                why = op.lakesoul_why if name_ == "lakesoul" and op.lakesoul_why else ""
                return (
                    f"{who}: merge operator {name} (column {col}) is not expressible in "
                    f"{merger.label}" + (f" ({why})" if why else "")
                )
    return None


def expressed_by(name: str) -> list[str]:
    """The engines that express operator `name` (the README's table)."""
    op = get(name)
    return [e.name for e in ENGINES.values() if e.has(op)]


def native_names(engine_name: str, ops: Mapping[str, str]) -> dict[str, str]:
    """Each column's operator in a format's own merge engine's words; an operator it has
    no name for is refused in one line naming the engine."""
    merger = engine(engine_name)
    out = {}
    for col, name in ops.items():
        native = merger.name_of(get(name).name)
        if native is None:
            raise MergeOperatorError(
                f"merge operator {name} (column {col}) is not expressible in {merger.label}"
            )
        out[col] = native
    return out
