"""The registry of merge operators: how the rows of one primary key collapse into one.

Each operator is one entry of `OPERATORS`: its name, the column types it accepts, its
NULL rule, and how every engine of the harness expresses it: the numpy kernel of the
read (`numpy`), the DuckDB aggregate of the oracle and of read.merge=duckdb (`sql`),
pyarrow's and polars' group-by aggregates (read.merge=arrow / polars), the Spark SQL
aggregate that collapses a batch and the expression that merges the collapsed batch into
a table row (`MERGE INTO`, copy-on-write, Hudi without a merger) and LakeSoul's native
operator. `None` where an engine cannot express it: that engine refuses the operator in
one line (`merge_engines.refusal`) before any work. The engines themselves, and which
operators each expresses, are the registry of merge engines (contest/data/merge_engines.py):
a format's own merge engine (Paimon's aggregate functions, the Hudi record merger's
rules) is a `MergeEngine` its folder under contest/peers registers there, naming the
operators by the constants below; the numpy kernels are contest/data/kernels.py's. Adding an
operator is one entry here plus its tests (and its name in the merge engines that
express it); no other module spells an operator's name
(tests/contest/data/test_operator_registry.py greps the source tree).

Rows reach an operator in application order (batch version, then row position). The
contest's contract is `CONTRACT` (data, not code): every other module reads it here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from contest.data import kernels
from contest.data.type_names import (  # noqa: F401 (the registry's vocabulary)
    DATE,
    DECIMAL,
    DECIMAL_SUM_PRECISION,
    FLOAT64,
    INT64,
    ORDERED,
    STRING,
    TIMESTAMP,
    arrow_type,
    decimal_parts,
    family,
    known_type,
    sql_type,
    type_name,
)
from contest.errors import MergeOperatorError


@dataclass(frozen=True)
class Operator:
    """One merge operator and its every expression (None: not expressible there)."""

    name: str
    types: tuple[str, ...]
    # Exactly what the merged value is, NULLs and "null" strings included.
    rule: str
    # The type of a workload's extra column with this operator (contest/data/workload.py).
    default_type: str
    # What the generator puts in such a column (contest/data/generator.py extra_column):
    # "numbers" 1..999, "factors" -1/1/2, "names" with "null" strings, "pool" strings.
    generated: str
    numpy: kernels.Kernel
    # DuckDB: {c} the column, {o} the row's order key, {t} the SQL type of the column.
    sql: str
    # Spark SQL: the aggregate collapsing a batch's rows ({c} the column, {pos} the row's
    # position), and the merge of a table's value {t} with the collapsed batch's {s}.
    spark_collapse: str
    spark_combine: str
    # pyarrow hash aggregate (function, skip_nulls, min_count) and a polars expression
    # builder (pl, column) -> aggregate; None: that read.merge refuses it.
    arrow: tuple[str, bool, int] | None = None
    polars: Callable[[Any, Any], Any] | None = None
    # LakeSoul 2.6.2's native merge operator, or why there is none.
    lakesoul: str | None = None
    lakesoul_why: str = ""
    # LakeSoul's form is NULL as soon as one value is NULL: the stock engine writes NULL
    # as 0 and a count column of the non-NULL values beside it (contest/write/stock.py).
    lakesoul_counted: bool = False
    # The string "null" counts as NULL: formats that have no such rule get "null"
    # written as NULL (Paimon, stock LakeSoul) and use the last-non-NULL rule.
    null_string: bool = False
    # The merged type of an integer column widens to int64 (a sum).
    widens: bool = False
    # The numpy kernel picks one row's value per group (and compares values only with
    # a constant): it takes a dictionary-encoded column as well, so the read may move a
    # column of few distinct strings as integers (contest/read/operators.py merge_rows).
    picks_a_row: bool = False
    # A NULL overwrites the merged value (UseLast): with batches that carry only some
    # columns, a NULL and an absent column differ, and an engine that cannot tell them
    # apart is refused (contest/data/changes.py ChangeSupport).
    null_overwrites: bool = False

    def accepts(self, typ: pa.DataType) -> bool:
        return family(type_name(typ)) in self.types


def merged_name(op: str, name: str) -> str:
    """The merged column's type name: a sum of decimals at the widest precision, its
    scale kept; any other the column's own (integers are int64 already)."""
    if get(op).widens and family(name) == DECIMAL:
        return f"{DECIMAL}({DECIMAL_SUM_PRECISION},{decimal_parts(name)[1]})"
    return name


# -- the registry -------------------------------------------------------------------

# The operators' names, which the format folders' native merge engines map.
USE_LAST = "UseLast"
USE_LAST_NOT_NULL = "UseLastNotNull"
SUM_ALL = "SumAll"
USE_LAST_NOT_NULL_NOR_NULL_STRING = "UseLastNotNullNorNullString"
MAX = "Max"
MIN = "Min"
FIRST_NOT_NULL = "FirstNotNull"
JOINED_NOT_NULL_BY_COMMA = "JoinedNotNullByComma"
PRODUCT = "Product"


_SUM_COMBINE = "CASE WHEN {t} IS NULL THEN {s} WHEN {s} IS NULL THEN {t} ELSE {t} + {s} END"
_LAST_NOT_NULL_COLLAPSE = "max_by({c}, CASE WHEN {c} IS NOT NULL THEN {pos} END)"

_ALL = (
    Operator(
        USE_LAST,
        ORDERED,
        "the last row's value, NULL included",
        STRING,
        "pool",
        kernels.last,
        "arg_max_null({c}, {o})",
        "max_by({c}, {pos})",
        "{s}",
        arrow=("last", False, 0),
        polars=lambda pl, col: col.last(),
        lakesoul="UseLast",
        picks_a_row=True,
        null_overwrites=True,
    ),
    Operator(
        USE_LAST_NOT_NULL,
        ORDERED,
        "the last non-NULL value; NULL when every value is NULL",
        STRING,
        "pool",
        kernels.last_not_null,
        "arg_max({c}, {o}) FILTER (WHERE {c} IS NOT NULL)",
        _LAST_NOT_NULL_COLLAPSE,
        "coalesce({s}, {t})",
        arrow=("last", True, 1),
        polars=lambda pl, col: col.last(ignore_nulls=True),
        lakesoul="UseLastNotNull",
        picks_a_row=True,
    ),
    Operator(
        SUM_ALL,
        (INT64, FLOAT64, DECIMAL),
        "the sum of the non-NULL values (integers as int64, decimals at precision 38 in "
        "their scale); NULL when every value is NULL",
        INT64,
        "numbers",
        kernels.sum_all,
        "CAST(sum({c}) AS {t})",
        "sum({c})",
        _SUM_COMBINE,
        arrow=("sum", True, 1),
        polars=lambda pl, col: pl.when(col.count() > 0).then(col.sum()),
        # LakeSoul's SumAll is NULL as soon as one value is: the stock engine writes a
        # count column beside it (contest/write/stock.py).
        lakesoul="SumAll",
        lakesoul_counted=True,
        widens=True,
    ),
    Operator(
        USE_LAST_NOT_NULL_NOR_NULL_STRING,
        (STRING,),
        'the last value that is neither NULL nor the string "null"; NULL when there is none',
        STRING,
        "names",
        kernels.last_not_null_nor_null_string,
        "arg_max({c}, {o}) FILTER (WHERE {c} IS NOT NULL AND {c} <> 'null')",
        "max_by({c}, CASE WHEN {c} IS NOT NULL AND {c} <> 'null' THEN {pos} END)",
        "coalesce({s}, {t})",
        arrow=("last", True, 1),
        polars=lambda pl, col: col.filter(col != "null").last(),
        lakesoul="UseLastNotNull",
        null_string=True,
        picks_a_row=True,
    ),
    Operator(
        MAX,
        ORDERED,
        "the greatest non-NULL value (strings by their bytes); NULL when every value is NULL",
        INT64,
        "numbers",
        kernels.hash_aggregate("max"),
        "max({c})",
        "max({c})",
        "greatest({t}, {s})",
        arrow=("max", True, 1),
        polars=lambda pl, col: col.max(),
        lakesoul_why="LakeSoul 2.6.2 has no max operator",
    ),
    Operator(
        MIN,
        ORDERED,
        "the least non-NULL value (strings by their bytes); NULL when every value is NULL",
        STRING,
        "pool",
        kernels.hash_aggregate("min"),
        "min({c})",
        "min({c})",
        "least({t}, {s})",
        arrow=("min", True, 1),
        polars=lambda pl, col: col.min(),
        lakesoul_why="LakeSoul 2.6.2 has no min operator",
    ),
    Operator(
        FIRST_NOT_NULL,
        ORDERED,
        "the first non-NULL value; NULL when every value is NULL",
        STRING,
        "pool",
        kernels.first_not_null,
        "arg_min({c}, {o}) FILTER (WHERE {c} IS NOT NULL)",
        "min_by({c}, CASE WHEN {c} IS NOT NULL THEN {pos} END)",
        "coalesce({t}, {s})",
        arrow=("first", True, 1),
        polars=lambda pl, col: col.drop_nulls().first(),
        lakesoul_why="LakeSoul 2.6.2 has no first-value operator",
        picks_a_row=True,
    ),
    Operator(
        JOINED_NOT_NULL_BY_COMMA,
        (STRING,),
        'the non-NULL values in order joined by ","; NULL when every value is NULL',
        STRING,
        "pool",
        kernels.joined_by_comma,
        "string_agg({c}, ',' ORDER BY {o})",
        (
            "CASE WHEN count({c}) > 0 THEN array_join(transform(array_sort(collect_list("
            "CASE WHEN {c} IS NOT NULL THEN struct({pos} AS p, {c} AS v) END)), x -> x.v), ',') END"
        ),
        "CASE WHEN {t} IS NULL THEN {s} WHEN {s} IS NULL THEN {t} ELSE concat({t}, ',', {s}) END",
        polars=lambda pl, col: pl.when(col.count() > 0).then(col.drop_nulls().str.join(",")),
        lakesoul_why=(
            "LakeSoul 2.6.2's JoinedAllByComma is NULL as soon as one value is NULL and "
            "joins without the comma"
        ),
    ),
    Operator(
        PRODUCT,
        (INT64,),
        "the product of the non-NULL values (wrapping on int64 overflow; the oracle computes "
        "it in DOUBLE, exact below 2^53); NULL when every value is NULL",
        INT64,
        "factors",
        kernels.hash_aggregate("product"),
        "CAST(product({c}) AS {t})",
        (
            "CASE WHEN count({c}) > 0 THEN "
            "aggregate(collect_list({c}), CAST(1 AS BIGINT), (a, x) -> a * x) END"
        ),
        "CASE WHEN {t} IS NULL THEN {s} WHEN {s} IS NULL THEN {t} ELSE {t} * {s} END",
        arrow=("product", True, 1),
        polars=lambda pl, col: pl.when(col.count() > 0).then(col.product()),
        lakesoul_why="LakeSoul 2.6.2 has no product operator",
        widens=True,
    ),
)

OPERATORS: dict[str, Operator] = {op.name: op for op in _ALL}
OPERATOR_NAMES: tuple[str, ...] = tuple(OPERATORS)
# Columns without an operator merge by this one.
DEFAULT = "UseLast"

# The contest's merge contract (README, "The data and the contract").
CONTRACT: dict[str, str] = {
    "ip": "UseLastNotNull",
    "hostname": "UseLastNotNull",
    "requests": "SumAll",
    "name": "UseLastNotNullNorNullString",
    "city": "UseLastNotNull",
    "job": "UseLastNotNull",
    "phonenum": "UseLastNotNull",
}


# LakeSoul 2.6.2's native merge operators (its rust/lakesoul-io sorted_merge
# MergeOperator), which read.engine=lakesoul-stock's read.operators may name; the
# contract's columns on a stock table, and any other column, by these.
LAKESOUL_OPERATORS: tuple[str, ...] = (
    "UseLast",
    "UseLastNotNull",
    "SumAll",
    "SumLast",
    "JoinedLastByComma",
    "JoinedLastBySemicolon",
    "JoinedAllByComma",
    "JoinedAllBySemicolon",
)
LAKESOUL_DEFAULT = "UseLastNotNull"


def lakesoul_operator(name: str) -> str:
    """LakeSoul's native operator for operator `name` (a one-line error when none)."""
    op = get(name)
    if op.lakesoul is None:
        raise MergeOperatorError(f"merge operator {name}: {op.lakesoul_why}")
    return op.lakesoul


def get(name: str) -> Operator:
    """The operator called `name`; an unknown one is a one-line error listing the known."""
    try:
        return OPERATORS[name]
    except KeyError:
        raise MergeOperatorError(
            f"unknown merge operator {name!r} (known: {', '.join(OPERATOR_NAMES)})"
        ) from None


def validate(schema: pa.Schema, keys: list[str], ops: Mapping[str, str]) -> None:
    """Every operator known, on a non-key column the schema has, of a type it accepts."""
    for col, name in ops.items():
        if name not in OPERATORS:
            raise MergeOperatorError(
                f"column {col!r}: unknown merge operator {name!r} "
                f"(known: {', '.join(OPERATOR_NAMES)})"
            )
        if col not in schema.names:
            raise MergeOperatorError(
                f"merge operator {name} set for column {col!r}, "
                f"which the table does not have ({', '.join(schema.names)})"
            )
        if col in keys:
            raise MergeOperatorError(f"column {col!r} is a primary key: it takes no operator")
        op, typ = OPERATORS[name], schema.field(col).type
        if not op.accepts(typ):
            need = " or ".join(op.types)
            numeric = {INT64, FLOAT64} <= set(op.types) <= {INT64, FLOAT64, DECIMAL}
            what = "a numeric" if numeric else f"a {need}"
            raise MergeOperatorError(f"column {col!r}: {name} needs {what} column, not {typ}")


def result_schema(schema: pa.Schema, ops: Mapping[str, str]) -> pa.Schema:
    """The merged result's schema: an integer column under a widening operator (a sum,
    a product) becomes int64, a decimal one precision 38 in its scale; every merge
    casts to it."""
    fields = []
    for f in schema:
        name = ops.get(f.name)
        if name is not None and OPERATORS[name].widens and pa.types.is_integer(f.type):
            f = f.with_type(pa.int64())
        elif name is not None and pa.types.is_decimal(f.type):
            f = f.with_type(arrow_type(merged_name(name, type_name(f.type))))
        fields.append(f)
    return pa.schema(fields)


# -- the expressions, filled in -------------------------------------------------------


def sql_aggregate(name: str, column: str, order: str, typ: str) -> str:
    """The DuckDB aggregate of operator `name` over `column` (a SQL expression), cast
    to the merged type (`merged_name`)."""
    return get(name).sql.format(c=column, o=order, t=sql_type(merged_name(name, typ)))


def spark_collapse(name: str, column: str, pos: str) -> str:
    return get(name).spark_collapse.format(c=column, pos=pos)


def spark_combine(name: str, table: str, source: str) -> str:
    return get(name).spark_combine.format(t=table, s=source)
