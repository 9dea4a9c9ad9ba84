"""contest dataset describe: a user's folder described from its footers (natural file
order, the key and op column guessed with their reasons, the types), its TOML loaded
and validated as a workload; nothing written into the folder."""

from __future__ import annotations

import dataclasses
import decimal
import tomllib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.config import load_config
from contest.data.batches import discover, natural_key
from contest.data.describe import column_stats, describe, guess_key, to_toml
from contest.data.oracle import expected_rows
from contest.data.workload import schema_of_batch, workload_schema, workload_settings
from contest.errors import ConfigError, DataError
from tests.support.own_data import write_own_data


def test_natural_order_puts_part_2_before_part_10():
    names = ["part-10.parquet", "part-2.parquet", "part-1.parquet", "a.parquet"]
    assert sorted(names, key=natural_key) == [
        "a.parquet",
        "part-1.parquet",
        "part-2.parquet",
        "part-10.parquet",
    ]


def test_discover_takes_any_names_in_natural_order(tmp_path):
    data = write_own_data(tmp_path / "d")
    batches = discover(data, None, None)
    assert [b.name for b in batches] == [f"part-{i}.parquet" for i in range(1, 13)]
    assert [b.index for b in batches] == list(range(12))


def test_describe_guesses_the_composite_key_and_debeziums_op_column(tmp_path):
    data = write_own_data(tmp_path / "d")
    d = describe(str(data))
    assert d.key == ("tenant", "item_id") and "tenant" in d.key_why
    assert (d.op_column, d.op_values) == ("op", "debezium")
    assert [c.name for c in d.columns] == ["tenant", "item_id", "op", "qty", "price", "label"]
    text = to_toml(d, "mine")
    assert "#   9: part-10.parquet (1 row)" in text
    assert "# files_per_batch = 1" in text and "order_column" not in text  # no log position


def test_a_log_position_column_is_offered_as_the_order_column(tmp_path):
    data = tmp_path / "d"
    data.mkdir()
    table = pa.table(
        {
            "id": pa.array([1], pa.int64()),
            "source_lsn": pa.array([7], pa.int64()),
            "ts_ms": pa.array([9], pa.int64()),
            "position": ["left"],  # named like one, but text: not offered
            "seq_name": pa.array([1], pa.int64()),  # not named like one
        }
    )
    pq.write_table(table, data / "part-1.parquet")
    text = to_toml(describe(str(data)), "mine")
    offered = [line for line in text.splitlines() if line.startswith("# order_column")]
    assert [line.split('"')[1] for line in offered] == ["source_lsn", "ts_ms"]


def test_its_toml_loads_and_validates_as_the_files_schema(tmp_path):
    data = write_own_data(tmp_path / "d")
    out = tmp_path / "mine.toml"
    before = sorted(p.name for p in data.iterdir())
    assert main(["dataset", "describe", str(data), "--out", str(out)]) == 0
    assert sorted(p.name for p in data.iterdir()) == before  # nothing written into it
    tomllib.loads(out.read_text())
    cfg = load_config(overrides=workload_settings(str(out)))
    w = cfg.workload
    assert (w.payload, w.key, w.op_column) == ("own", ["tenant", "item_id"], "op")
    assert w.columns == {"qty": "UseLast", "price": "UseLast", "label": "UseLast"}
    assert workload_schema(w) == pa.schema(
        [
            ("tenant", pa.string()),
            ("item_id", pa.int64()),
            ("qty", pa.int64()),
            ("price", pa.float64()),
            ("label", pa.string()),
        ]
    )


def test_an_out_file_inside_the_data_folder_is_refused(tmp_path, capsys):
    data = write_own_data(tmp_path / "d")
    before = sorted(p.name for p in data.iterdir())
    assert main(["dataset", "describe", str(data), "--out", str(data / "w.toml")]) == 2
    assert "inside the data folder" in capsys.readouterr().err.strip().splitlines()[-1]
    assert sorted(p.name for p in data.iterdir()) == before


def _footers(tmp_path, table: pa.Table) -> list[pq.FileMetaData]:
    pq.write_table(table, tmp_path / "f.parquet")
    return [pq.read_metadata(tmp_path / "f.parquet")]


def test_a_single_id_column_without_nulls_is_the_key(tmp_path):
    t = pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]})
    assert guess_key(column_stats(_footers(tmp_path, t)), 1)[0] == ("id",)


def test_an_id_column_with_a_null_is_no_key(tmp_path):
    t = pa.table({"id": pa.array([1, None], pa.int64()), "v": ["a", "b"]})
    key, why = guess_key(column_stats(_footers(tmp_path, t)), 1)
    assert key == () and "no column named like an id" in why


def test_an_order_key_and_its_line_number_are_a_pair(tmp_path):
    t = pa.table(
        {
            "l_orderkey": pa.array([1, 1], pa.int64()),
            "l_linenumber": pa.array([1, 2], pa.int32()),
            "l_partkey": pa.array([5, 6], pa.int64()),
        }
    )
    key, why = guess_key(column_stats(_footers(tmp_path, t)), 1)
    assert key == ("l_orderkey", "l_linenumber") and "line number" in why


def test_a_type_no_operator_takes_is_refused_in_the_config():
    with pytest.raises(ConfigError, match="workload.types.v: UseLast does not take a binary"):
        load_config(
            overrides={
                "workload.payload": "own",
                "workload.key": ["id"],
                "workload.columns": {"v": "UseLast"},
                "workload.types": {"v": "binary"},
            }
        )


def test_lakesoul_spelling_a_decimal_described_and_a_time_column_left_out(tmp_path):
    t = pa.table(
        {
            "id": pa.array([1, 2], pa.int32()),
            "rowkind": ["insert", "delete"],
            "amount": pa.array([decimal.Decimal("1.50"), None], pa.decimal128(15, 2)),
            "day": pa.array([10_000, None], pa.int32()).cast(pa.date32()),
            "clock": pa.array([1, 2], pa.time64("us")),
            "note": ["a", None],
        }
    )
    (tmp_path / "d").mkdir()
    pq.write_table(t, tmp_path / "d" / "x.parquet")
    d = describe(str(tmp_path / "d"))
    assert (d.key, d.op_column, d.op_values) == (("id",), "rowkind", "lakesoul")
    assert d.unsupported == ("clock",)
    text = to_toml(d, "x")
    assert "# clock (time64[us]): no workload type takes it yet, left out" in text
    w = load_config(overrides=workload_settings_of(tmp_path, text)).workload
    assert w.columns == {"amount": "UseLast", "day": "UseLast", "note": "UseLast"}
    assert w.types == {"amount": "decimal(15,2)", "day": "date", "id": "int32"}


def workload_settings_of(tmp_path, text: str) -> dict:
    path = tmp_path / "w.toml"
    path.write_text(text)
    return workload_settings(str(path))


def test_a_string_column_of_many_values_is_no_op_column(tmp_path):
    t = pa.table({"id": pa.array(range(40), pa.int64()), "op": [f"v{i}" for i in range(40)]})
    (tmp_path / "d").mkdir()
    pq.write_table(t, tmp_path / "d" / "x.parquet", row_group_size=8)
    d = describe(str(tmp_path / "d"))
    assert d.op_column == "" and "no string column" in d.op_why


def test_an_unknown_payload_kind_is_refused():
    with pytest.raises(ConfigError, match="workload.payload: 'mine' is not one of contest, own"):
        load_config(overrides={"workload.payload": "mine"})


def test_the_oracle_keeps_the_files_payload_types_on_the_upsert_path(tmp_path):
    (tmp_path / "d").mkdir()
    # base-0's qty int32, base-1's int64 (a widening): the schemas differ, so the oracle
    # casts every column, to the files' types (not UseLast's string, SumAll's int64).
    for i, rows in enumerate([[("k1", 1, 0.5)], [("k1", 2, None), ("k2", 3, 1.25)]]):
        t = pa.table(
            {
                "uuid": [r[0] for r in rows],
                "qty": pa.array([r[1] for r in rows], pa.int32() if i == 0 else pa.int64()),
                "price": pa.array([r[2] for r in rows], pa.float64()),
            }
        )
        pq.write_table(t, tmp_path / "d" / f"base-{i}.parquet")
    batches = discover(tmp_path / "d", None, None)
    got = expected_rows(batches, {"qty": "UseLast", "price": "SumAll"})
    assert got == [
        {"uuid": "k1", "qty": 2, "price": 0.5},
        {"uuid": "k2", "qty": 3, "price": 1.25},
    ]


def test_an_int32_column_widened_to_int64_is_declared_and_a_mixed_one_left_out(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    for i, (wide, mixed) in enumerate([(pa.int32(), pa.int32()), (pa.int64(), pa.float64())]):
        t = pa.table(
            {
                "id": pa.array([i], pa.int64()),
                "n": pa.array([i], wide),
                "m": pa.array([i], mixed),
            }
        )
        pq.write_table(t, folder / f"f{i}.parquet")
    d = describe(str(folder))
    assert d.unsupported == ("m",)
    w = load_config(overrides=workload_settings_of(tmp_path, to_toml(d, "w"))).workload
    assert (w.types["n"], w.widened) == ("int64", {"n": 1})
    # The oracle and discover take it: int32 before batch 1, int64 from it.
    assert workload_schema(w).field("n").type == pa.int64()
    assert w.key == ["id"] and "m" not in w.columns
    w = dataclasses.replace(w, columns={**w.columns, "m": "UseLast"})  # m: the user's pick
    with pytest.raises(DataError, match="f0.parquet: column m is int32, expected string"):
        discover(folder, None, schema_of_batch(w))
    # Without m, the widening is taken: int32 in batch 0, int64 from batch 1.
    only = tmp_path / "only"
    only.mkdir()
    for f in sorted(folder.iterdir()):
        pq.write_table(pq.read_table(f, columns=["id", "n"]), only / f.name)
    assert (
        len(discover(only, None, schema_of_batch(dataclasses.replace(w, columns={"n": "UseLast"}))))
        == 2
    )
    # Left out, m is still in the files: refused, not dropped silently.
    w = dataclasses.replace(w, columns={"n": "UseLast"})
    with pytest.raises(DataError, match="f0.parquet: unexpected column"):
        discover(folder, None, schema_of_batch(w))
