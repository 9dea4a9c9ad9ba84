"""Change data into Hudi (contest/data/changes.py): row kinds by Hudi's `_hoodie_is_deleted`,
keys of one or two columns as Hudi's record key, batches holding some payload columns.

Each batch is first collapsed by key with the delete rule (contest/peers/change_merge.py
`collapse`: the rows after a key's last delete in the batch fold; a key whose last row
is a delete is a delete; one deleted then inserted again is flagged to replace). Then
every row hudi-mor upserts carries `_hoodie_is_deleted`, true for a delete: Hudi's merge
drops such a record and the key's earlier ones ("Deletes" in Hudi's writing guide: the
`_hoodie_is_deleted` boolean field).

- hudi-mor (Hudi's default merge by ordering field): the collapsed rows are merged with
  the keys' current rows in Spark (`merged`): a held column by its operator, a column
  the batch lacks keeps the table's value, a replaced key takes the batch's values only;
  the full rows are upserted, the latest ordering value wins. A NULL is told from an
  absent column.
- hudi-merger (the contract's record merger, jvm/): the collapsed rows upserted as they
  are, a column the batch lacks written NULL (so it cannot be told from a NULL: every
  contract operator but UseLast skips NULLs). Deletes are the merger's own, not Hudi's:
  Hudi 1.0.2's reader, given a `_hoodie_is_deleted` record between a base file's row and
  a later insert, merged the insert with the base row (tried: a deleted key's old sum
  came back). A delete is a tombstone record (`_contest_deleted`), a key deleted and
  inserted again inside the batch is marked `_contest_afresh`; the merger resets the key
  on either (a record after a tombstone starts afresh) and the read leaves tombstones out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from contest.data import operators as registry
from contest.data.spark_types import spark_type
from contest.peers.change_merge import REPLACE, ChangeBatch, q

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

# Hudi's delete marker: a boolean field of the record (HoodieRecord.HOODIE_IS_DELETED_FIELD).
DELETED = "_hoodie_is_deleted"

# The contract's record merger's marks (ContractRecordMerger.DELETED, .AFRESH): a tombstone,
# and a record that starts the key afresh.
TOMBSTONE = "_contest_deleted"
AFRESH = "_contest_afresh"

# Hudi's key generators: one column or several, the table not partitioned.
SIMPLE_KEYS = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
COMPLEX_KEYS = "org.apache.hudi.keygen.ComplexKeyGenerator"


def key_options(key: Sequence[str]) -> dict[str, str]:
    """Hudi's record key of the workload's key columns (two: "a,b" with the complex key
    generator, which makes "a:<v>,b:<v>"), not partitioned."""
    return {
        "hoodie.datasource.write.recordkey.field": ",".join(key),
        "hoodie.datasource.write.partitionpath.field": "",
        "hoodie.datasource.write.keygenerator.class": (
            SIMPLE_KEYS if len(key) == 1 else COMPLEX_KEYS
        ),
    }


def is_delete(batch: ChangeBatch) -> Column:
    """Whether a collapsed row is a delete (never, without row kinds)."""
    from pyspark.sql import functions as F  # deferred: slow to import

    rules = batch.rules
    if not rules.op_column:
        return F.lit(False)
    return F.coalesce(F.col(q(rules.op_column)).isin(*rules.delete_values), F.lit(False))


def marked(rows: DataFrame, batch: ChangeBatch, deleted: Column) -> DataFrame:
    """The rows with `_hoodie_is_deleted` when the workload has row kinds; without, none
    (a table of upserts only never has the field: Hudi refuses to add a field without a
    default to a table's schema)."""
    return rows.withColumn(DELETED, deleted) if batch.rules.op_column else rows


def without_deletes(rows: DataFrame, marker: str = DELETED) -> DataFrame:
    """The rows that are not deletes (a new table's first batch: nothing to delete)."""
    from pyspark.sql import functions as F  # deferred: slow to import

    return rows.where(~F.col(marker)) if marker in rows.columns else rows


def payload_rows(batch: ChangeBatch, payload: Mapping[str, pa.DataType]) -> DataFrame:
    """The collapsed rows' key and every payload column (NULL for one the batch lacks, in
    the workload's type), with the collapse's op column and `REPLACE` flag, if any."""
    from pyspark.sql import functions as F  # deferred: slow to import

    cols = [F.col(q(k)) for k in batch.rules.key]
    for c, typ in payload.items():
        value = F.col(q(c)) if c in batch.columns else F.lit(None).cast(spark_type(typ))
        cols.append(value.alias(c))
    marks = [q(batch.rules.op_column), q(REPLACE)] if batch.rules.op_column else []
    return batch.rows.select(*cols, *marks)


def as_written(batch: ChangeBatch, payload: Mapping[str, pa.DataType]) -> DataFrame:
    """The collapsed rows as hudi-mor upserts them on a new table: `payload_rows` with
    `_hoodie_is_deleted`."""
    rows = payload_rows(batch, payload)
    return marked(rows, batch, is_delete(batch)).drop(*_marks(batch))


def for_merger(batch: ChangeBatch, payload: Mapping[str, pa.DataType]) -> DataFrame:
    """The collapsed rows as hudi-merger upserts them: `payload_rows` with the record
    merger's marks (ContractRecordMerger.DELETED: a tombstone; AFRESH: the key deleted
    and inserted again inside the batch, so it replaces the table's row)."""
    from pyspark.sql import functions as F  # deferred: slow to import

    rows = payload_rows(batch, payload)
    if not batch.rules.op_column:
        return rows
    rows = rows.withColumn(TOMBSTONE, is_delete(batch))
    return rows.withColumn(AFRESH, F.col(q(REPLACE))).drop(*_marks(batch))


def live(df: DataFrame) -> DataFrame:
    """A hudi-merger table's read without its tombstones (and the marks)."""
    from pyspark.sql import functions as F  # deferred: slow to import

    if TOMBSTONE not in df.columns:
        return df
    return df.where(~F.coalesce(F.col(TOMBSTONE), F.lit(False))).drop(TOMBSTONE, AFRESH)


def _marks(batch: ChangeBatch) -> list[str]:
    return [batch.rules.op_column, REPLACE] if batch.rules.op_column else []


def merged(
    batch: ChangeBatch,
    current: DataFrame,
    payload: Mapping[str, pa.DataType],
    ops: Mapping[str, str],
) -> DataFrame:
    """The batch's keys after it, merged in Spark with the table's rows (`current`: the
    key and the table's payload columns, some possibly missing): a delete of a key the
    table lacks left out; a replaced key takes only the batch's values."""
    from pyspark.sql import functions as F  # deferred: slow to import

    key = list(batch.rules.key)
    have = set(current.columns)
    old = current.select(
        *[q(k) for k in key],
        *[
            (F.col(q(c)) if c in have else F.lit(None).cast(spark_type(t))).alias(c)
            for c, t in payload.items()
        ],
        F.lit(True).alias("__found"),
    ).join(batch.rows.select(*[q(k) for k in key]), key, "left_semi")
    s, t = batch.rows.alias("s"), old.alias("t")
    on = [F.col(f"s.{q(k)}") == F.col(f"t.{q(k)}") for k in key]
    replace = F.col(f"s.{q(REPLACE)}") if batch.rules.op_column else F.lit(False)
    cols = [F.col(f"s.{q(k)}").alias(k) for k in key]
    for c, typ in payload.items():
        if c in batch.columns:
            combined = F.expr(registry.spark_combine(ops[c], f"t.{q(c)}", f"s.{q(c)}"))
            value = F.when(replace, F.col(f"s.{q(c)}")).otherwise(combined)
        else:
            value = F.when(replace, F.lit(None)).otherwise(F.col(f"t.{q(c)}"))
        cols.append(value.cast(spark_type(typ)).alias(c))
    deleted = is_delete(batch)
    joined = s.join(t, on, "left")
    known = F.col("t.__found").isNotNull()
    kept = joined.where(~deleted | known).select(*cols, deleted.alias("__deleted"))
    return marked(kept, batch, F.col("__deleted")).drop("__deleted")
