"""Where a Paimon table of the harness lives and how it merges: its catalog, database
and table names, its sequence fields, and Paimon's aggregate function for each merge
operator (a leaf module: the format, its history and its stream all use it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from contest.data import operators
from contest.data.merge_engines import MergeEngine
from contest.errors import ConfigError

CATALOG = "paimon"
DATABASE = "contest"
TABLE = "ccf"
# The sequence fields: the batch's version, then the row's position in its batch.
SEQUENCE = ("_ver", "_pos")
# Paimon's aggregate function (aggregation merge engine, `fields.<c>.aggregate-function`)
# for each operator it expresses.
AGGREGATE_FUNCTIONS = {
    operators.USE_LAST: "last_value",
    operators.USE_LAST_NOT_NULL: "last_non_null_value",
    operators.SUM_ALL: "sum",
    operators.USE_LAST_NOT_NULL_NOR_NULL_STRING: "last_non_null_value",
    operators.MAX: "max",
    operators.MIN: "min",
    operators.FIRST_NOT_NULL: "first_non_null_value",
    operators.JOINED_NOT_NULL_BY_COMMA: "listagg",
    operators.PRODUCT: "product",
}
MERGE_ENGINE = MergeEngine(
    "paimon", "Paimon 0.9's aggregation merge engine", native=AGGREGATE_FUNCTIONS
)
# The snapshot's own numbers kept in the report (its `snapshots` system table).
METRICS = ("delta_record_count", "changelog_record_count", "total_record_count")


def identifier() -> str:
    return f"{CATALOG}.{DATABASE}.{TABLE}"


def merge_properties(
    ops: Mapping[str, str] | None = None, key: Sequence[str] = ("uuid",)
) -> dict[str, str]:
    """The operators (default: the contest's contract) as Paimon table options (fixed:
    they are what makes it exact), keyed by `key`'s columns; an operator Paimon has no
    function for is refused."""
    props = {
        "primary-key": ",".join(key),
        "merge-engine": "aggregation",
        "sequence.field": ",".join(SEQUENCE),
    }
    for col, name in (operators.CONTRACT if ops is None else ops).items():
        function = MERGE_ENGINE.name_of(operators.get(name).name)
        if function is None:
            raise ConfigError(f"paimon: merge operator {name} (column {col}) has no aggregate")
        props[f"fields.{col}.aggregate-function"] = function
    return props
