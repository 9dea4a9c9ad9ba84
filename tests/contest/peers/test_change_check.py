"""Change data a strategy's format cannot take, refused before any data is written: the
registry's declarations (`Implementation.changes`) against the discovered batches."""

import pytest

from contest.benchmarks.peers.bench import refuse_changes
from contest.config import load_config
from contest.data.batches import discover
from contest.data.workload import schema_of_batch
from contest.errors import ConfigError
from contest.peers import change_check
from contest.peers.write import run_peer_write
from tests.support.contract_cases import CASES, CHANGE_CASES, write_case, write_change_case


def _cfg(**overrides):
    return load_config(overrides=overrides)


def _found(cfg, case, tmp_path):
    found = schema_of_batch(cfg.workload)
    discover(write_change_case(CHANGE_CASES[case], tmp_path / "d"), None, found)
    return found


def test_a_strategy_and_a_configuration_find_their_implementation():
    assert change_check.implementation_for(_cfg(), "delta-merge:defaults").name == "delta"
    assert change_check.implementation_for(_cfg(**{"peer.format": "hudi"})).name == "hudi"
    stock = {"write.engine": "lakesoul-stock", "read.engine": "lakesoul-stock"}
    assert change_check.implementation_for(_cfg(**stock)).name == "lakesoul-stock"
    assert change_check.implementation_for(_cfg(), "my-own-label").name == "lakesoul"
    assert change_check.implementation_for(_cfg(), "paimon-agg").name == "paimon"
    assert change_check.implementation_for(_cfg(), "hudi-mor").name == "hudi"


def test_the_contests_data_is_taken_by_every_implementation(tmp_path):
    cfg = _cfg()
    found = schema_of_batch(cfg.workload)
    discover(write_case(CASES["key_only_in_a_later_batch"], tmp_path / "d"), None, found)
    assert not found.partial
    for strategy in ("optimized", "delta-merge", "iceberg-mor", "paimon-agg", "hudi-mor"):
        assert change_check.refusal_of(cfg, found, strategy) is None


@pytest.mark.parametrize(
    ("strategy", "lacks"),
    [
        ("paimon-agg", "Paimon 0.9's aggregation engine retracts a -D row field by field"),
        ("lakesoul-stock", "LakeSoul 2.6.2's native IO has no CDC column option"),
        ("lakesoul-py", "lakesoul 2.0.0's Python scan does not apply CDC deletes"),
    ],
)
def test_deletes_refused_naming_the_mechanism_the_format_lacks(tmp_path, strategy, lacks):
    cfg = _cfg(**{"workload.op_column": "op"})
    found = _found(cfg, "delete_then_reinsert_starts_the_key_afresh", tmp_path)
    why = change_check.refusal_of(cfg, found, strategy)
    assert why is not None and "\n" not in why
    assert why.startswith(f"{strategy}: cannot delete rows (op column 'op'): {lacks}")


def test_delta_and_iceberg_take_deletes_partial_files_and_a_composite_int_key(tmp_path):
    # Spark's MERGE, delta-rs's MERGE and pyiceberg's delete and upsert (native/collapse.py).
    cfg = _cfg(
        **{
            "workload.op_column": "op",
            "workload.op_values": "debezium",
            "workload.key": ["tenant", "id"],
            "workload.columns": {"note": "UseLast"},
        }
    )
    found = _found(cfg, "composite_int_and_string_key_in_debeziums_spelling", tmp_path)
    assert found.partial
    takers = ("delta-merge", "delta-dv", "iceberg-mor", "iceberg-dv", "hudi-mor", "delta-rs")
    for strategy in (*takers, "pyiceberg"):
        assert change_check.refusal_of(cfg, found, strategy) is None
    why = change_check.refusal_of(cfg, found, "paimon-agg")
    assert why is not None and why.startswith("paimon-agg: cannot delete rows")


def test_a_peer_write_refuses_before_its_folder_is_touched(tmp_path):
    cfg = _cfg(**{"workload.op_column": "op", "peer.format": "paimon"})
    data = write_change_case(
        CHANGE_CASES["delete_then_reinsert_starts_the_key_afresh"], tmp_path / "d"
    )
    table = tmp_path / "t"
    with pytest.raises(ConfigError, match="^paimon: cannot delete rows"):
        run_peer_write(cfg, data, table)
    assert not table.exists()


def test_a_sitting_refuses_before_any_strategy_writes(tmp_path):
    """`contest bench peers`: every strategy of the sitting checked against the data."""
    data = write_change_case(
        CHANGE_CASES["delete_then_reinsert_starts_the_key_afresh"], tmp_path / "d"
    )
    change = {"workload.op_column": "op"}

    def config(preset):
        return load_config(preset=preset, overrides=change)

    refuse_changes(config, ["delta-merge", "iceberg-mor"], {}, data)
    with pytest.raises(ConfigError, match="^paimon-agg: cannot delete rows"):
        refuse_changes(config, ["delta-merge", "paimon-agg"], {}, data)


def test_a_strategy_that_declares_less_than_its_implementation_is_refused(tmp_path):
    # baseline-cow is the lakesoul implementation's, which takes deletes; its own
    # declaration (a copy-on-write join keeps no tombstones) refuses them before any work.
    cfg = _cfg(**{"workload.op_column": "op"})
    found = _found(cfg, "delete_then_reinsert_starts_the_key_afresh", tmp_path)
    assert change_check.refusal_of(cfg, found, "optimized") is None
    why = change_check.refusal_of(cfg, found, "baseline-cow")
    assert why == (
        "baseline-cow: cannot delete rows (op column 'op'): copy-on-write's full outer join "
        "per batch keeps no tombstones"
    )


def test_a_type_a_format_cannot_store_is_refused_naming_the_column():
    """Hudi has no timestamp without a zone (its Avro converter), a zoned one it stores;
    stock LakeSoul's write declares string and integer columns only, decimals of any
    precision among what it refuses."""
    own = {"workload.payload": "own", "workload.columns": {"at": "UseLast"}}

    def refusal(typ: str, strategy: str) -> str | None:
        cfg = _cfg(**own, **{"workload.types": {"at": typ}})
        return change_check.refusal_of(cfg, schema_of_batch(cfg.workload), strategy)

    why = refusal("timestamp", "hudi-mor")
    assert why == (
        "hudi-mor: cannot store column 'at' of type timestamp: Hudi 1.0.2's Avro schema "
        "converter has no timestamp without a time zone (Spark's TIMESTAMP_NTZ)"
    )
    assert refusal("timestamptz", "hudi-mor") is None
    assert refusal("timestamptz", "delta-merge") is None
    why = refusal("decimal(9,4)", "lakesoul-stock")
    assert why is not None and "cannot store column 'at' of type decimal(9,4)" in why
