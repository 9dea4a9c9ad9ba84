"""contest check: the oracle's output passes, wrong results fail with the keys named."""

import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from contest.cli.main import main
from contest.data.generator import generate


@pytest.fixture(scope="module")
def data_and_expected(tmp_path_factory):
    root = tmp_path_factory.mktemp("chk")
    generate(root / "data", 0.001, seed=3, progress=False)
    assert main(["oracle", "--data", str(root / "data"), "--out", str(root / "exp")]) == 0
    return root / "data", root / "exp"


def test_oracle_output_checks_against_itself(data_and_expected, capsys):
    data, exp = data_and_expected
    assert main(["check", "--result", str(exp), "--data", str(data)]) == 0
    assert capsys.readouterr().out.startswith("OK: expected 20,000 rows")


def _write_variant(exp, tmp_path, change):
    t = change(pq.read_table(exp / "expected.parquet"))
    out = tmp_path / "result"
    out.mkdir()
    pq.write_table(t, out / "part-00000.parquet")
    (out / "_SUCCESS").touch()
    return out


def test_last_value_wins_for_name_is_caught(data_and_expected, tmp_path, capsys):
    data, exp = data_and_expected

    def break_name(t):
        names = t.column("name").to_pylist()
        names[5] = "null"
        return t.set_column(4, "name", pa.array(names))

    result = _write_variant(exp, tmp_path, break_name)
    assert main(["check", "--result", str(result), "--data", str(data)]) == 1
    out = capsys.readouterr().out
    uuid5 = pq.read_table(exp / "expected.parquet").column("uuid")[5].as_py()
    assert "1 uuid(s) differ; by column: name (1)" in out
    assert f"uuid {uuid5}: name:" in out and "got 'null'" in out


def test_missing_rows_and_wrong_types(data_and_expected, tmp_path, capsys):
    data, exp = data_and_expected
    result = _write_variant(exp, tmp_path, lambda t: t.slice(1))
    assert main(["check", "--result", str(result), "--data", str(data)]) == 1
    assert "1 expected uuid(s) missing" in capsys.readouterr().out
    shutil.rmtree(result)
    result = _write_variant(
        exp, tmp_path, lambda t: t.set_column(3, "requests", t.column("requests").cast(pa.int32()))
    )
    assert main(["check", "--result", str(result), "--data", str(data)]) == 1
    assert "requests is INTEGER" in capsys.readouterr().out


def test_incomplete_result_is_refused(data_and_expected, tmp_path, capsys):
    data, exp = data_and_expected
    result = _write_variant(exp, tmp_path, lambda t: t)
    (result / "_SUCCESS").unlink()
    assert main(["check", "--result", str(result), "--data", str(data)]) == 2
    assert "no _SUCCESS marker: the result is incomplete" in capsys.readouterr().err


def test_check_needs_one_mode(data_and_expected, capsys):
    data, exp = data_and_expected
    assert main(["check", "--result", str(exp)]) == 2
    assert main(["check", "--result", str(data / "nope"), "--data", str(data)]) == 2


@pytest.mark.spark
def test_contest_sha256_of_the_canonical_csv(spark, cfg, tmp_path):
    from contest.data.checker import contest_sha256
    from tests.support.contract_cases import row

    rows = [row("b", req=2, name=None), row("a", ip="1.2.3.4", req=1, name="", city="x,y")]
    out = tmp_path / "result"
    out.mkdir()
    from contest.data.batches import SCHEMA

    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), out / "part-0.parquet")
    (out / "_SUCCESS").touch()
    # Spark's CSV writer: header, NULL as nothing, "" for the empty string, quotes
    # around a value holding the separator; rows sorted by uuid.
    canonical = (
        "uuid,ip,hostname,requests,name,city,job,phonenum\n"
        'a,1.2.3.4,h,1,"","x,y",j,p\n'
        "b,ip,h,2,,c,j,p\n"
    )
    import hashlib

    digest = contest_sha256(spark, out, tmp_path / "csv")
    assert digest == hashlib.sha256(canonical.encode()).hexdigest()


def test_compare_range_by_range_counts_as_one_join(data_and_expected, tmp_path):
    """Bounded memory: the comparison split into key ranges finds the same missing,
    unexpected, duplicate and differing keys, and the same first samples."""
    from contest.data.checker import compare
    from contest.data.oracle import Budget

    data, exp = data_and_expected

    def damage(t):
        t = t.slice(3)  # three keys missing
        names = t.column("name").to_pylist()
        names[100] = "changed"
        names[-1] = "changed"
        t = t.set_column(4, "name", pa.array(names))
        extra = t.slice(0, 1).set_column(0, "uuid", pa.array(["zzz-not-a-key"]))
        dup = t.slice(50, 2)
        return pa.concat_tables([t, extra, dup])

    result = _write_variant(exp, tmp_path, damage)
    one = compare(result, exp / "expected.parquet", budget=Budget(1 << 30, parts=1))
    many = compare(result, exp / "expected.parquet", budget=Budget(1 << 30, parts=6))
    assert (one.missing_keys, one.extra_keys, one.duplicate_keys, one.differing_keys) == (
        3,
        1,
        2,
        2,
    )
    assert many.__dict__ == one.__dict__


def _result_of(table, folder):
    folder.mkdir()
    pq.write_table(table, folder / "part-00000.parquet")
    (folder / "_SUCCESS").touch()
    return folder


def test_composite_and_binary_keys_compare_exactly(tmp_path):
    """The checker takes the key the oracle recorded: two columns joined on both, a
    binary key byte for byte (one byte off is a missing and an unexpected key)."""
    from contest.data.batches import discover
    from contest.data.changes import Changes
    from contest.data.checker import compare
    from contest.data.oracle import expected_result
    from tests.support.contract_cases import CHANGE_CASES, write_change_case

    def expected(name):
        case = CHANGE_CASES[name]
        batches = discover(write_change_case(case, tmp_path / name), schema=None)
        out = tmp_path / f"{name}.parquet"
        return expected_result(batches, out, changes=Changes(**case["changes"])).path

    exp = expected("composite_int_and_string_key_in_debeziums_spelling")
    table = pq.read_table(exp)
    assert compare(_result_of(table, tmp_path / "same"), exp).ok
    # The same ids under the other tenant: both keys missing, two unexpected.
    other = table.set_column(0, "tenant", pa.array(["t0", "t0"]))
    report = compare(_result_of(other, tmp_path / "other"), exp)
    assert (report.missing_keys, report.extra_keys, report.key) == (2, 2, ["tenant", "id"])
    twice = pa.concat_tables([table, table.slice(1)])
    changed = twice.set_column(4, "requests", pa.array([6, 8, 7]))
    report = compare(_result_of(changed, tmp_path / "dup"), exp)
    assert (report.duplicate_keys, report.differing_keys) == (1, 1)
    text = report.render()
    assert "1 key(s) appear more than once" in text
    assert "key (t1, 2): requests: expected 7, got 8" in text

    exp = expected("binary_key_kept_as_binary")
    table = pq.read_table(exp)
    fixed = table.set_column(0, "bk", table.column("bk").cast(pa.binary(16)))
    assert compare(_result_of(fixed, tmp_path / "fixed"), exp).ok
    off = bytes(range(1, 16)) + b"\x00"
    report = compare(_result_of(table.set_column(0, "bk", pa.array([off])), tmp_path / "off"), exp)
    assert (report.missing_keys, report.extra_keys) == (1, 1)
    assert f"key {bytes(range(1, 17)).hex()}: missing from the result" in report.render()
