"""Hudi's table options the harness sets, and the contract's record merger's names:
what the format, its history, its merger and its stream all use (a leaf module, so that
none of them imports another for a constant)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from contest.data import operators
from contest.data.merge_engines import MergeEngine, native_names

# Hudi's ordering (precombine) field: the batch's version, so that of two writes of a key
# the newer batch wins whatever order Hudi sees them in.
ORDERING = "_ver"
INDEXES = ("", "SIMPLE", "BLOOM", "BUCKET", "RECORD_INDEX")

MERGER_CLASS = "contest.hudi.ContractRecordMerger"
# ContractRecordMerger.STRATEGY_ID: the merge strategy Hudi persists in the table config.
STRATEGY_ID = "6f0c3a4e-2b1d-4c55-9a57-3c0e1f8a7b21"

# The merger's column-to-rule map ("col:rule;col:rule", ContractRecordMerger.OPERATORS_KEY):
# given with every write, compaction and read, in the props Hudi hands the merger. No ","
# or "=" in it: a compaction procedure's options cannot carry them (procedure_options).
OPERATORS_KEY = "hoodie.contest.merge.operators"

# The record merger's rule for each operator it expresses (ContractRecordMerger.java).
MERGER_RULES = {
    operators.USE_LAST: "last",
    operators.USE_LAST_NOT_NULL: "last_non_null",
    operators.SUM_ALL: "sum",
    operators.USE_LAST_NOT_NULL_NOR_NULL_STRING: "last_non_null_nor_null_string",
    operators.MAX: "max",
    operators.MIN: "min",
    operators.FIRST_NOT_NULL: "first_non_null",
    operators.JOINED_NOT_NULL_BY_COMMA: "join_comma",
    operators.PRODUCT: "product",
}
MERGE_ENGINE = MergeEngine("hudi", "the Hudi record merger", native=MERGER_RULES)


def table_name(table_path: Path) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in Path(table_path).name)


def procedure_options(opts: dict[str, str]) -> str:
    """Options as a Hudi procedure's `options` argument ("k=v,k=v", split on "," and
    "="): those with an empty value, or a comma or "=" in key or value, are left out."""
    return ",".join(
        f"{k}={v}" for k, v in opts.items() if v and not any(ch in k + v for ch in ",=")
    )


def merger_spec(ops: Mapping[str, str]) -> str:
    """The merger's column-to-rule map as one option value ("col:rule;...")."""
    rules = native_names(MERGE_ENGINE.name, ops)
    return ";".join(f"{col}:{rule}" for col, rule in rules.items())


def merger_options(ops: Mapping[str, str] | None = None) -> dict[str, str]:
    """Hudi's documented options registering the record merger, and its operator map
    (default: the contest's contract)."""
    return {
        "hoodie.write.record.merge.mode": "CUSTOM",
        "hoodie.write.record.merge.strategy.id": STRATEGY_ID,
        "hoodie.write.record.merge.custom.implementation.classes": MERGER_CLASS,
        OPERATORS_KEY: merger_spec(operators.CONTRACT if ops is None else ops),
    }
