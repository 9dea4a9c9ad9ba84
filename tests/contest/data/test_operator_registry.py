"""The operator registry (contest/data/operators.py): the only place an operator is named,
and every engine's expression of every operator agrees with the oracle's on random
batches with NULLs, "null" strings and repeated keys."""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from contest.data import merge_engines
from contest.data import operators as registry
from contest.data.batches import Batch
from contest.data.oracle import expected_result, select_sql
from contest.errors import MergeOperatorError
from contest.peers import registry as format_registry
from contest.read.merges import MERGES, merge_parts
from contest.read.operators import merge_rows

ROOT = Path(__file__).resolve().parents[3]
NAMES = sorted({*registry.OPERATOR_NAMES, *registry.LAKESOUL_OPERATORS})


def test_no_operator_name_is_written_outside_the_registry():
    """Every module reads the registry: an operator's name as a string literal anywhere
    else in the source (Python, the Hudi merger) is a second, silent copy."""
    literal = re.compile(r"[\"'](" + "|".join(NAMES) + r")[\"']")
    found = []
    for path in [
        *ROOT.glob("contest/**/*.py"),
        *ROOT.glob("meta/**/*.py"),
        *ROOT.glob("jvm/**/*.java"),
    ]:
        if path == ROOT / "contest/data/operators.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if literal.search(line):
                found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_every_operator_says_its_rule_and_types():
    for op in registry.OPERATORS.values():
        assert op.rule and op.types and op.default_type in op.types
        assert "NULL" in op.rule  # its NULL rule is written down


def test_a_format_that_cannot_express_an_operator_refuses_in_one_line():
    # Paimon's merge engine comes with its folder, registered with the formats.
    assert "paimon" in format_registry.peer_formats()
    why = merge_engines.refusal({"m": "Max"}, ("lakesoul",), "lakesoul-stock")
    assert why is not None and "\n" not in why
    assert "Max" in why and "lakesoul-stock" in why and "LakeSoul 2.6.2" in why
    assert merge_engines.refusal({"m": "Max"}, ("paimon", "spark"), "paimon") is None
    why = merge_engines.refusal({"t": "JoinedNotNullByComma"}, ("arrow",), "read.merge=arrow")
    assert why is not None and "JoinedNotNullByComma" in why


def test_an_operator_on_a_column_of_a_type_it_refuses():
    schema = pa.schema([("k", pa.string()), ("s", pa.string())])
    with pytest.raises(MergeOperatorError, match="Product needs a int64 column"):
        registry.validate(schema, ["k"], {"s": "Product"})


# -- property-style agreement --------------------------------------------------------

# Values of each type name (a user's decimals, dates and timestamps beside the
# contest's three), few distinct ones so that keys repeat values.
VALUES = {
    registry.INT64: lambda rng, n: pa.array(rng.integers(-3, 4, n), pa.int64()),
    registry.FLOAT64: lambda rng, n: pa.array(rng.integers(-8, 9, n) / 4.0, pa.float64()),
    registry.STRING: lambda rng, n: pa.array(
        rng.choice(np.array(["a", "b", "null", "", "zz", "B"]), n), pa.string()
    ),
    "decimal(15,2)": lambda rng, n: pa.array(
        [Decimal(int(v)).scaleb(-2) for v in rng.integers(-99_999, 99_999, n)],
        pa.decimal128(15, 2),
    ),
    registry.DATE: lambda rng, n: pa.array(rng.integers(9_000, 9_009, n), pa.int32()).cast(
        pa.date32()
    ),
    registry.TIMESTAMP: lambda rng, n: pa.array(
        rng.integers(0, 9, n) * 86_399_999_999, pa.int64()
    ).cast(pa.timestamp("us")),
    "timestamptz": lambda rng, n: pa.array(rng.integers(0, 9, n) * 3_600_000_001, pa.int64()).cast(
        pa.timestamp("us", tz="UTC")
    ),
}
CASES = [
    (name, typ)
    for name, op in registry.OPERATORS.items()
    for typ in VALUES
    if registry.family(typ) in op.types
]


def random_batches(rng, typ: str, batches: int = 3, rows: int = 40) -> list[pa.Table]:
    """A few batches on a few keys (repeated inside a batch too), ~30% NULL values."""
    out = []
    for _ in range(batches):
        keys = pa.array([f"k{i}" for i in rng.integers(0, 9, rows)])
        values = VALUES[typ](rng, rows)
        values = pc.if_else(pa.array(rng.random(rows) < 0.3), pa.nulls(rows, values.type), values)
        out.append(pa.table({"uuid": keys, "v": values}))
    return out


def as_dict(table: pa.Table) -> dict:
    return dict(zip(table.column("uuid").to_pylist(), table.column("v").to_pylist(), strict=True))


def oracle(tmp_path: Path, batches: list[pa.Table], name: str, typ: str) -> dict:
    """The oracle's SQL (select_sql) over the batches written as files, version i each."""
    from contest.data.oracle import connect, register_batches

    files = []
    for i, t in enumerate(batches):
        path = tmp_path / f"base-{i}.parquet"
        pq.write_table(t, path)
        files.append(Batch(i, str(path), t.num_rows, path.stat().st_size, i))
    sql = select_sql({"v": name}, {"v": typ})
    con = connect()
    try:
        cur = con.execute(sql.format(where=""), {"files": register_batches(con, files)})
        return {r[0]: r[1] for r in cur.fetchall()}
    finally:
        con.close()


@pytest.mark.parametrize(("name", "typ"), CASES)
@pytest.mark.parametrize("seed", [1, 2])
def test_numpy_and_every_read_merge_agree_with_the_oracle(tmp_path, name, typ, seed):
    rng = np.random.default_rng(seed)
    batches = random_batches(rng, typ)
    want = oracle(tmp_path, batches, name, typ)
    got = as_dict(merge_rows(pa.concat_tables(batches), ["uuid"], {"v": name}))
    assert got == want
    for method in MERGES:
        if merge_engines.refusal({"v": name}, (method,), method):
            with pytest.raises(MergeOperatorError, match=name):
                merge_parts(method, batches, ["uuid"], {"v": name})
            continue
        assert as_dict(merge_parts(method, batches, ["uuid"], {"v": name})) == want, method


@pytest.mark.spark
def test_spark_collapse_and_merge_agree_with_the_oracle(spark, tmp_path):
    """The Spark expressions MERGE INTO, copy-on-write and Hudi's merged rows use
    (collapse each batch, combine with the table's row), batch after batch, for every
    operator and type at once: one column each."""
    from contest.write.cow import upsert_cow

    rng = np.random.default_rng(7)
    tables = []
    ops: dict[str, str] = {}
    for i, (name, typ) in enumerate(CASES):
        ops[f"c{i}"] = name
        tables.append(random_batches(np.random.default_rng(100 + i), typ))
    batches = []
    for b in range(3):
        cols = {"uuid": pa.array([f"k{i}" for i in rng.integers(0, 9, 40)])}
        for i in range(len(CASES)):
            cols[f"c{i}"] = tables[i][b].column("v")
        batches.append(pa.table(cols))
    current = None
    for b, t in enumerate(batches):
        path = tmp_path / f"base-{b}.parquet"
        pq.write_table(t, path)
        # one partition: the file order is the rows' order
        df = spark.read.parquet(str(path)).coalesce(1)
        current = upsert_cow(current, df, ops).localCheckpoint()
    assert current is not None
    got = {r["uuid"]: r.asDict() for r in current.collect()}
    want = merge_rows(pa.concat_tables(batches), ["uuid"], ops).to_pylist()
    # Spark's collect gives an instant (TIMESTAMP) as a zoneless datetime in the session's
    # zone (UTC here): the expected instants in the same form.
    want_rows = {r["uuid"]: {c: _as_spark_collects(v) for c, v in r.items()} for r in want}
    wrong = sorted(
        f"{CASES[int(c[1:])]}: {k} {want_rows[k][c]!r} != {got[k][c]!r}"
        for k in want_rows
        for c in ops
        if want_rows[k][c] != got.get(k, {}).get(c)
    )
    assert not wrong and want_rows.keys() == got.keys(), wrong[:10]


def _as_spark_collects(v):
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.UTC).replace(tzinfo=None)
    return v


def test_the_docs_list_every_operator_with_its_rule():
    page = (ROOT / "docs" / "concepts" / "procedure.md").read_text()
    read = page[page.index("## Read: merge-on-read") :]
    rows = {
        line.split("|")[1].strip(" `"): line for line in read.splitlines() if line.startswith("| `")
    }
    for name, op in registry.OPERATORS.items():
        assert name in rows, name
        assert op.rule.replace('"null"', '`"null"`').replace('","', "`,`") in rows[name], name


# -- a user's types ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typ", "name", "family"),
    [
        (pa.decimal128(15, 2), "decimal(15,2)", registry.DECIMAL),
        (pa.date32(), registry.DATE, registry.DATE),
        (pa.timestamp("us"), registry.TIMESTAMP, registry.TIMESTAMP),
        (pa.timestamp("us", tz="UTC"), "timestamptz", registry.TIMESTAMP),
        (pa.int32(), registry.INT64, registry.INT64),
    ],
)
def test_a_type_name_keeps_precision_scale_and_zone(typ, name, family):
    assert registry.type_name(typ) == name and registry.family(name) == family
    if not pa.types.is_integer(typ):
        assert registry.arrow_type(name) == typ


def test_a_decimal_sum_keeps_its_scale_at_precision_38():
    assert registry.merged_name(registry.SUM_ALL, "decimal(15,2)") == "decimal(38,2)"
    assert registry.merged_name(registry.USE_LAST, "decimal(15,2)") == "decimal(15,2)"
    schema = pa.schema([("uuid", pa.string()), ("q", pa.decimal128(15, 2))])
    assert registry.result_schema(schema, {"q": registry.SUM_ALL}).field("q").type == (
        pa.decimal128(38, 2)
    )
    assert registry.sql_type("decimal(38,2)") == "DECIMAL(38,2)"


def test_an_operator_refuses_a_type_outside_its_families_in_one_line():
    schema = pa.schema([("k", pa.string()), ("d", pa.date32())])
    with pytest.raises(MergeOperatorError, match="SumAll needs a numeric column, not date32"):
        registry.validate(schema, ["k"], {"d": registry.SUM_ALL})


@pytest.mark.parametrize("seed", [3])
def test_a_user_types_merged_by_numpy_keep_their_types_and_the_oracles_values(tmp_path, seed):
    """The merged table's types are the oracle's file's: a decimal sum at precision 38,
    a date a date, a timestamp with its zone or without one."""
    rng = np.random.default_rng(seed)
    ops = {
        "q": registry.SUM_ALL,
        "d": registry.MAX,
        "t": registry.USE_LAST,
        "z": registry.USE_LAST_NOT_NULL,
    }
    cols = {"q": "decimal(15,2)", "d": registry.DATE, "t": registry.TIMESTAMP, "z": "timestamptz"}
    batches = []
    for _ in range(3):
        t = pa.table({"uuid": pa.array([f"k{i}" for i in rng.integers(0, 5, 30)])})
        for c, typ in cols.items():
            values = VALUES[typ](rng, 30)
            t = t.append_column(
                c, pc.if_else(pa.array(rng.random(30) < 0.3), pa.nulls(30, values.type), values)
            )
        batches.append(t)
    files = []
    for i, t in enumerate(batches):
        path = tmp_path / f"base-{i}.parquet"
        pq.write_table(t, path)
        files.append(Batch(i, str(path), t.num_rows, path.stat().st_size, i))
    out = tmp_path / "expected.parquet"
    expected_result(files, out, operators=ops)
    want = pq.read_table(out)
    got = merge_rows(pa.concat_tables(batches), ["uuid"], ops).sort_by("uuid")
    assert got.schema.field("q").type == pa.decimal128(38, 2) == want.schema.field("q").type
    for c in ("d", "t", "z"):
        assert got.schema.field(c).type == want.schema.field(c).type, c
    assert got.to_pylist() == want.to_pylist()
