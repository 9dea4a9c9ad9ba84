"""Change data through a format's own MERGE (Delta, Iceberg): row kinds, batches holding
some of the payload columns, keys of one or two columns (contest/data/changes.py).

MERGE takes one source row per key, so each batch is first collapsed by key with the
delete rule: per key, only the rows after the batch's last delete of it fold (each
payload column by its operator, in file order); when the key's last row is a delete the
collapsed row is a delete (its op value); when a delete came before the folded rows, the
key was deleted and inserted again inside the batch, and the row carries a flag
(`REPLACE`) telling MERGE to replace the table's row rather than combine with it. Then:

    MERGE INTO t USING s ON t.k1 = s.k1 [AND t.k2 = s.k2]
    WHEN MATCHED AND s.op IN (<delete values>) THEN DELETE
    WHEN MATCHED AND s.__contest_replace THEN UPDATE SET <each column: the batch's value,
        NULL for a column the batch lacks>
    WHEN MATCHED THEN UPDATE SET <only the columns the batch holds, each combined by its
        operator with the table's value>
    WHEN NOT MATCHED AND NOT s.op IN (<delete values>) THEN INSERT (<every column>)
        VALUES (<the batch's value, NULL for a column the batch lacks>)

A column the batch lacks is in no SET of a combining update, so it keeps the table's
value, while a NULL the batch holds goes through its operator (UseLast's combine takes
it): a NULL is told from an absent column. The table of change data is created with
every payload column (the batch's schema under the workload, the key's columns as the
files type them), so a column no batch holds yet is NULL. The op column and the flag
are never table columns: a read has neither.

The clauses are built apart from Spark's syntax (`merge_clauses`): delta-rs's own MERGE
(contest/peers/delta/native.py) runs the same ones, on a batch collapsed by the same rule
in Arrow (contest/peers/native/collapse.py, `collapsed_changes`), and pyiceberg's delete
and upsert (contest/peers/iceberg/native.py) follow them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from contest.config import Config
from contest.data import operators as registry
from contest.data.batches import Batch
from contest.data.changes import KEY_TYPES, Changes, ChangeSupport, changes_of
from contest.data.spark_types import spark_type
from contest.data.workload import batch_schema, contract_operators
from contest.errors import DataError
from contest.infra.folders import open_input

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

# The change data a format takes through this MERGE (Delta's and Iceberg's on Spark): a
# delete row, collapsed with the batch's delete rule, is `WHEN MATCHED AND s.op IN (...)
# THEN DELETE`; a batch holding some of the payload columns updates only those (`UPDATE
# SET` lists the batch's columns: an absent one keeps the table's value, a NULL it holds
# goes through its operator); the ON clause compares every key column, of any key type.
MERGE_CHANGES = ChangeSupport(
    deletes="MERGE INTO ... WHEN MATCHED AND <op> IN (<delete values>) THEN DELETE",
    partial_columns="MERGE INTO ... UPDATE SET of only the columns the batch holds",
    absent_is_not_null=True,
    key_types=tuple(t.name for t in KEY_TYPES),
    composite_keys=True,
)

# The collapsed row's flag: the key was deleted, then inserted again, inside the batch.
REPLACE = "__contest_replace"
# The row's position in its file (the collapse's order), and it kept only when after
# the key's last delete in the batch.
_POS, _LIVE, _LAST_DELETE = "__contest_pos", "__contest_live", "__contest_last_delete"


def q(name: str) -> str:
    """A column name as a Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def payload_columns(cfg: Config, index: int) -> dict[str, pa.DataType]:
    """The payload columns batch `index` may hold (its schema under the workload: a
    column added after it not yet), with their types."""
    ops = contract_operators(cfg.workload)
    schema = batch_schema(cfg.workload, index)
    return {f.name: f.type for f in schema if f.name in ops}


def needed(cfg: Config, batch: Batch) -> bool:
    """Whether a batch needs the change path: row kinds, another key than `uuid`, or a
    payload column its file lacks (a partial batch, told by its footer); else the
    upsert's MERGE."""
    rules = changes_of(cfg)
    if not (rules.upserts_only and rules.contest_key):
        return True
    with open_input(str(batch.path)) as fh:
        columns = pq.read_schema(fh).names
    return any(c not in columns for c in payload_columns(cfg, batch.index))


@dataclass(frozen=True)
class ChangeBatch:
    """A batch collapsed by key with the delete rule: `rows` holds the key's columns, the
    op column (the key's last row's value) and `REPLACE` when the workload has row kinds,
    and the payload columns the batch holds (`columns`)."""

    rows: DataFrame
    rules: Changes
    columns: tuple[str, ...]

    @property
    def label(self) -> str:
        """What the collapse did, for the batch's report (its `operation`)."""
        return f"change merge ({collapse_label(self.rules)})"


def collapse_label(rules: Changes) -> str:
    """What the collapse of a change batch did, in its report's operation (every engine
    that collapses by the module's rule says it alike)."""
    if rules.op_column:
        return "collapse: rows after a key's last delete folded"
    return "partial columns"


def collapse(spark: SparkSession, cfg: Config, batch: Batch) -> ChangeBatch:
    """The batch's rows, one per key (the module's docstring says how). A NULL key part:
    rows dropped with `write.drop_null_keys`, else refused in one line naming the file."""
    from pyspark.sql import Window  # deferred: slow to import
    from pyspark.sql import functions as F  # deferred: slow to import

    rules = changes_of(cfg)
    key = list(rules.key)
    rows = spark.read.parquet(str(batch.path))
    types = {f.name: f.dataType for f in rows.schema.fields}
    ops = {c: op for c, op in contract_operators(cfg.workload).items() if c in rows.columns}
    rows = _without_null_keys(rows, key, rules, batch)
    ranked = rows.withColumn(_POS, F.monotonically_increasing_id())
    extra = []
    if rules.op_column:
        is_delete = F.col(q(rules.op_column)).isin(*rules.delete_values)
        last = F.max(F.when(is_delete, F.col(_POS))).over(Window.partitionBy(*[q(k) for k in key]))
        ranked = ranked.withColumn(_LAST_DELETE, last)
        keep = F.col(_LAST_DELETE).isNull() | (F.col(_POS) > F.col(_LAST_DELETE))
        ranked = ranked.withColumn(_LIVE, F.when(keep, F.col(_POS)))
        for c in ops:  # the rows up to the key's last delete give no value
            ranked = ranked.withColumn(c, F.when(keep, F.col(q(c))))
        op = rules.op_column
        extra = [
            F.expr(f"max_by({q(op)}, {_POS})").alias(op),
            F.expr(f"max({_LAST_DELETE}) IS NOT NULL AND max({_POS}) > max({_LAST_DELETE})").alias(
                REPLACE
            ),
        ]
    else:
        ranked = ranked.withColumn(_LIVE, F.col(_POS))
    aggs = [F.expr(registry.spark_collapse(o, q(c), _LIVE)).alias(c) for c, o in ops.items()]
    out = ranked.groupBy(*[q(k) for k in key]).agg(*aggs, *extra)
    cast = [F.col(q(c)).cast(types[c]).alias(c) for c in ops]
    marks = [F.col(q(rules.op_column)), F.col(REPLACE)] if rules.op_column else []
    return ChangeBatch(out.select(*[q(k) for k in key], *marks, *cast), rules, tuple(ops))


def _without_null_keys(rows: DataFrame, key: list[str], rules: Changes, batch: Batch) -> DataFrame:
    """The rows whose key has no NULL part: MERGE's ON never matches a NULL, so such a row
    would be inserted as a key of its own, which the contract refuses or drops."""
    from pyspark.sql import functions as F  # deferred: slow to import

    null = F.lit(False)
    for k in key:
        null = null | F.col(q(k)).isNull()
    if rules.drop_null_keys:
        return rows.where(~null)
    if rules.contest_key:  # the contest's files: no NULL uuid is checked as before
        return rows
    found = rows.where(null).limit(1).count()
    if found:
        raise DataError(
            f"{batch.path}: row(s) with a NULL key column of {', '.join(key)} "
            "(set write.drop_null_keys to drop them)"
        )
    return rows


def without_null_keys(rows: DataFrame, key: list[str], rules: Changes, batch: Batch) -> DataFrame:
    """`collapse`'s rule for rows with a NULL key part, for a format that writes a batch's
    rows uncollapsed (Paimon): dropped with `write.drop_null_keys`, else refused."""
    return _without_null_keys(rows, key, rules, batch)


def table_schema(cfg: Config, batch: Batch, rows: DataFrame) -> StructType:
    """The schema a table of change data is created with: the key's columns as the batch
    types them, then every payload column of the batch's schema under the workload."""
    key = list(changes_of(cfg).key)
    types = {f.name: f.dataType.simpleString() for f in rows.schema.fields}
    fields = [f"{q(k)} {types[k]}" for k in key]
    for col, typ in payload_columns(cfg, batch.index).items():
        fields.append(f"{q(col)} {types.get(col) or spark_type(typ)}")
    return rows.sparkSession.createDataFrame([], ", ".join(fields)).schema


@dataclass(frozen=True)
class MergeClauses:
    """The MERGE of a collapsed change batch (the module's docstring), apart from any
    engine's syntax: the ON condition, each clause's condition ("" = none: no such
    clause, or one without a condition for the insert) and its values by target column,
    each a SQL expression over the target (`t`) and the source (`s`) that Spark SQL and
    DataFusion (delta-rs's MERGE) both evaluate."""

    on: str
    delete_if: str
    replace_if: str
    replace: dict[str, str]
    combine: dict[str, str]
    insert_if: str
    insert: dict[str, str]


def merge_clauses(
    rules: Changes,
    held: Collection[str],
    table_columns: Sequence[str],
    ops: Mapping[str, str],
    quote: Callable[[str], str] = q,
) -> MergeClauses:
    """The clauses of a collapsed change batch's MERGE. `held`: the payload columns the
    batch holds; `table_columns`: the table's payload columns; `ops`: their operators;
    `quote`: how the engine's SQL quotes a name."""
    value = {c: f"s.{quote(c)}" if c in held else "NULL" for c in table_columns}
    delete_if = replace_if = insert_if = ""
    if rules.op_column:
        deletes = ", ".join("'" + v.replace("'", "''") + "'" for v in rules.delete_values)
        delete_if = f"s.{quote(rules.op_column)} IN ({deletes})"
        replace_if = f"s.{quote(REPLACE)}"
        insert_if = f"NOT {delete_if}"
    combine = {
        c: registry.spark_combine(ops[c], f"t.{quote(c)}", f"s.{quote(c)}")
        for c in table_columns
        if c in held
    }
    return MergeClauses(
        on=" AND ".join(f"t.{quote(k)} = s.{quote(k)}" for k in rules.key),
        delete_if=delete_if,
        replace_if=replace_if,
        replace=value if replace_if else {},
        combine=combine,
        insert_if=insert_if,
        insert={**{k: f"s.{quote(k)}" for k in rules.key}, **value},
    )


def merge_sql(
    target: str,
    source: str,
    batch: ChangeBatch,
    table_columns: Sequence[str],
    ops: Mapping[str, str],
) -> str:
    """The MERGE of a collapsed change batch in Spark SQL (`merge_clauses`).
    `table_columns`: the table's payload columns; `ops`: their operators."""
    m = merge_clauses(batch.rules, batch.columns, table_columns, ops)

    def sets(values: Mapping[str, str]) -> str:
        return ", ".join(f"t.{q(c)} = {e}" for c, e in values.items())

    clauses = []
    if m.delete_if:
        clauses.append(f"WHEN MATCHED AND {m.delete_if} THEN DELETE")
    if m.replace:
        clauses.append(f"WHEN MATCHED AND {m.replace_if} THEN UPDATE SET {sets(m.replace)}")
    if m.combine:
        clauses.append(f"WHEN MATCHED THEN UPDATE SET {sets(m.combine)}")
    insert_if = f" AND {m.insert_if}" if m.insert_if else ""
    clauses.append(
        f"WHEN NOT MATCHED{insert_if} THEN INSERT ({', '.join(q(c) for c in m.insert)}) "
        f"VALUES ({', '.join(m.insert.values())})"
    )
    return f"MERGE INTO {target} t USING {source} s ON {m.on}\n" + "\n".join(clauses)


def apply(
    spark: SparkSession, cfg: Config, batch: ChangeBatch, target: str, table: DataFrame, view: str
) -> None:
    """The collapsed batch MERGEd into `target` (`table`: its read, for its columns)."""
    ops = contract_operators(cfg.workload)
    key = set(batch.rules.key)
    columns = [c for c in table.columns if c not in key and c in ops]
    batch.rows.createOrReplaceTempView(view)
    try:
        spark.sql(merge_sql(target, view, batch, columns, ops))
    finally:
        spark.catalog.dropTempView(view)
