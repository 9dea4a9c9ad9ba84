"""A user's other types through every format (issue 60): decimals (a SumAll at precision
38 in its scale), a date, a timestamp without a zone and one with a zone, keyed by an
int64 and an int32 column (tests/support/typed_cases.py), as whole-row upserts and as
changes (deletes, files of some columns). Each format's write and read in one child
session, its read compared with the oracle's answer, values and types exactly; a case
the strategy's declaration refuses ends in its one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data import operators as ops
from tests.support import peer_changes
from tests.support.config import cli
from tests.support.typed_cases import UUID_KEY, write_case

STRATEGIES = ["delta-merge", "iceberg-mor", "hudi-mor", "hudi-merger", "paimon-agg"]
# A format's refusal of a type it cannot store (contest/data/changes.py change_refusal).
STORED = re.compile(r"cannot store column '(\w+)' of type ")


def _cases(root, omit: tuple[str, ...] = ()) -> dict[str, dict]:
    made = {}
    for name, changes in (("upserts", False), ("changes", True)):
        data = root / name / "data"
        made[name] = {"data": data, "overrides": write_case(data, 11, changes, omit)}
    return peer_changes.with_answers(root, made)


def test_the_oracle_keeps_the_types_a_decimal_sum_widened(tmp_path):
    cases = _cases(tmp_path)
    schema = pq.read_schema(cases["upserts"]["expected"])
    assert schema.field("qty").type == pa.decimal128(ops.DECIMAL_SUM_PRECISION, 2)
    assert schema.field("price").type == pa.decimal128(12, 3)
    assert schema.field("day").type == pa.date32()
    assert schema.field("at").type == pa.timestamp("us")
    assert schema.field("at_utc").type.tz is not None
    assert schema.field("line").type == pa.int32()


@pytest.mark.spark
@pytest.mark.slow  # a child Spark session with the format's jars
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_formats_merge_of_user_types_is_the_oracles(tmp_path, strategy):
    cases = _cases(tmp_path / "cases")
    refused = peer_changes.refusals(strategy, cases)
    assert all("\n" not in why for why in refused.values())
    stored = STORED.search(refused.get("upserts", ""))
    if stored:  # a type the format cannot store, refused in one line: the others merge
        cases = _cases(tmp_path / "without", omit=(stored.group(1),))
        refused = peer_changes.refusals(strategy, cases)
    todo = {n: c for n, c in cases.items() if n not in refused}
    assert "upserts" in todo, refused  # whole-row upserts of the types it stores
    results = peer_changes.run(strategy, todo, tmp_path / "run", one_session=False)
    wrong = peer_changes.wrong_answers(results, todo)
    assert not wrong, "\n".join(wrong)


@pytest.mark.spark
@pytest.mark.pg
@pytest.mark.slow  # two spark-submit jobs a case
@pytest.mark.parametrize("strategy", ["optimized", "baseline-mor"])
def test_the_harness_merges_user_types_as_the_oracle(cfg, pg, tmp_path, capsys, strategy):
    """The harness's LakeSoul tables through `contest evaluate` on the changes case:
    exact by the checker, which compares types as well as values."""
    data = tmp_path / "data"
    overrides = write_case(data, 11, changes=True)
    wl = tmp_path / "typed.toml"
    wl.write_text(workload_toml(overrides))
    args = cli(cfg, "evaluate", "--strategy", strategy, "--data", str(data))
    code = main([*args, "--workload", str(wl), "--work", str(tmp_path / "w"), "--results", "-"])
    out, err = capsys.readouterr()
    assert code == 0, err[-3000:]
    rec = json.loads(out.strip().splitlines()[-1])
    assert rec["correct"], err[-3000:]
    got = pq.read_schema(next(Path(rec["result_dir"]).glob("*.parquet")))
    assert got.field("qty").type == pa.decimal128(ops.DECIMAL_SUM_PRECISION, 2)


def workload_toml(overrides: dict) -> str:
    """The case's `workload.*` keys as a workload file's [workload] table."""
    w = {k.removeprefix("workload."): v for k, v in overrides.items()}
    lines = ["[workload]"]
    tables = {k: w.pop(k) for k in ("columns", "types")}
    lines += [f"{k} = {json.dumps(v)}" for k, v in w.items()]
    for name, table in tables.items():
        lines += [f"[workload.{name}]", *(f"{c} = {json.dumps(t)}" for c, t in table.items())]
    return "\n".join(lines) + "\n"


@pytest.mark.pg
@pytest.mark.slow  # a native job's write and read a strategy
@pytest.mark.parametrize("strategy", ["delta-rs", "pyiceberg", "lakesoul-py"])
def test_a_native_engines_merge_of_user_types_is_the_oracles(cfg, pg, tmp_path, capsys, strategy):
    """The native libraries (whole-row upserts keyed by `uuid`: no change data here) on the
    typed columns, through `contest evaluate`: exact by the checker (values and types),
    or a type the library cannot store refused in one line before any work."""
    data = tmp_path / "data"
    overrides = write_case(data, 11, changes=False, key=UUID_KEY)
    wl = tmp_path / "typed.toml"
    wl.write_text(workload_toml(overrides))
    args = cli(cfg, "evaluate", "--strategy", strategy, "--data", str(data), "--cores", "2")
    code = main([*args, "--workload", str(wl), "--work", str(tmp_path / "w"), "--results", "-"])
    out, err = capsys.readouterr()
    rec = json.loads(out.strip().splitlines()[-1])
    if code != 0:  # refused: one line naming the type, nothing timed
        assert STORED.search(rec["error"]) and "\n" not in rec["error"], err[-3000:]
        assert rec["write_s"] is None
        return
    assert rec["correct"], err[-3000:]
    got = pq.read_schema(next(Path(rec["result_dir"]).glob("*.parquet")))
    assert got.field("qty").type == pa.decimal128(ops.DECIMAL_SUM_PRECISION, 2)
    assert got.field("at_utc").type.tz is not None and got.field("at").type.tz is None
