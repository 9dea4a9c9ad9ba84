"""The operator registry (contest/data/operators.py): the only place an operator is named,
and every engine's expression of every operator agrees with the oracle's on random
batches with NULLs, "null" strings and repeated keys."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from contest.data import operators as registry
from contest.data.batches import Batch
from contest.data.oracle import select_sql
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
    why = registry.refusal({"m": "Max"}, ("lakesoul",), "lakesoul-stock")
    assert why is not None and "\n" not in why
    assert "Max" in why and "lakesoul-stock" in why and "LakeSoul 2.6.2" in why
    assert registry.refusal({"m": "Max"}, ("paimon", "spark"), "paimon") is None
    why = registry.refusal({"t": "JoinedNotNullByComma"}, ("arrow",), "read.merge=arrow")
    assert why is not None and "JoinedNotNullByComma" in why


def test_an_operator_on_a_column_of_a_type_it_refuses():
    schema = pa.schema([("k", pa.string()), ("s", pa.string())])
    with pytest.raises(MergeOperatorError, match="Product needs a int64 column"):
        registry.validate(schema, ["k"], {"s": "Product"})


# -- property-style agreement --------------------------------------------------------

VALUES = {
    registry.INT64: lambda rng, n: pa.array(rng.integers(-3, 4, n), pa.int64()),
    registry.FLOAT64: lambda rng, n: pa.array(rng.integers(-8, 9, n) / 4.0, pa.float64()),
    registry.STRING: lambda rng, n: pa.array(
        rng.choice(np.array(["a", "b", "null", "", "zz", "B"]), n), pa.string()
    ),
}
CASES = [(name, typ) for name, op in registry.OPERATORS.items() for typ in op.types]


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
        if registry.refusal({"v": name}, (method,), method):
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
    assert {r["uuid"]: r for r in want} == got


def test_the_docs_list_every_operator_with_its_rule():
    page = (ROOT / "docs" / "concepts" / "procedure.md").read_text()
    read = page[page.index("## Read: merge-on-read") :]
    rows = {
        line.split("|")[1].strip(" `"): line for line in read.splitlines() if line.startswith("| `")
    }
    for name, op in registry.OPERATORS.items():
        assert name in rows, name
        assert op.rule.replace('"null"', '`"null"`').replace('","', "`,`") in rows[name], name
