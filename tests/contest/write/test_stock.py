"""The lakesoul-stock engine (LakeSoul's DBManager, NativeIOWriter, NativeIOReader and merge
operators, real jars): every contract case exact, and its pure parts."""

import json
import uuid

import pytest

from contest.errors import ReadError
from contest.read.stock import bucket_files, stock_operators
from contest.write.stock import stock_schema
from tests.support.contract_cases import CASES, row, versions_spec, write_case
from tests.support.lakesoul import result_rows, run_child

APPEND_ROWS = [
    {"uuid": f"k{i}", "ip": "1.1.1.1", "hostname": "h", "requests": 1,
     "name": "n", "city": "c", "job": "j", "phonenum": "p"} for i in range(3)
]  # fmt: skip


# Six batches whose versions are not their files' order: version v names key a "v<v>"
# (the last version's name is "null", skipped) and sets its ip; each adds v to requests.
VERSIONS = [0, 3, 1, 5, 2, 4]
CONCURRENT = {
    "batches": [
        [row("a", req=v, ip=f"ip{v}", name="null" if v == 5 else f"v{v}"), row(f"k{v}")]
        for v in VERSIONS
    ],
    "versions": dict(enumerate(VERSIONS)),
}


@pytest.fixture(scope="module")
def stock_run(cfg, pg, tmp_path_factory) -> dict:
    """One child process (one JVM with LakeSoul's jars) for every stock job the tests
    below check: each contract case written and read; then batches 0 and 2 appended one
    by one, batch 2 again and batch 1 after it (both refused), and the table read."""
    tmp = tmp_path_factory.mktemp("stock")
    steps, outs = [], {}
    for name, case in CASES.items():
        data = write_case(case, tmp / "data" / name)
        table = tmp / "tables" / f"stock_{name.lower()}"
        outs[name] = tmp / "out" / name
        steps.append(
            {"do": "stock_write", "data": str(data), "table": str(table),
             "versions": versions_spec(case)}
        )  # fmt: skip
        steps.append({"do": "stock_read", "table": table.name, "out": str(outs[name])})
    rows = APPEND_ROWS
    data = write_case({"batches": [rows, rows[:2], rows[1:]]}, tmp / "append-data")
    # Its own name: the tests' PostgreSQL outlives a run, and an append takes a table
    # of the same name that is there.
    table = tmp / "tables" / f"stock_twice_{uuid.uuid4().hex[:8]}"
    twice, older, out = tmp / "twice.txt", tmp / "older.txt", tmp / "append-out"
    steps += [
        {"do": "stock_append", "data": str(data), "table": str(table), "only": [0]},
        {"do": "stock_append", "data": str(data), "table": str(table), "only": [2]},
        {"do": "stock_append", "data": str(data), "table": str(table), "only": [2],
         "out": str(twice)},
        {"do": "stock_append", "data": str(data), "table": str(table), "only": [1],
         "out": str(older)},
        {"do": "stock_read", "table": table.name, "out": str(out)},
    ]  # fmt: skip
    # Concurrent writers (write.threads = 4): batches 1-5 written at once, committed in
    # version order; the versions are not the files' order, and every version changes
    # key a's name and ip, so a commit out of turn shows in the result.
    data = write_case(CONCURRENT, tmp / "concurrent-data")
    table = tmp / "tables" / "stock_concurrent"
    concurrent, report = tmp / "concurrent-out", tmp / "concurrent-report.json"
    steps += [
        {"do": "stock_write", "data": str(data), "table": str(table), "threads": 4,
         "versions": versions_spec(CONCURRENT), "report": str(report)},
        {"do": "stock_read", "table": table.name, "out": str(concurrent)},
    ]  # fmt: skip
    run_child(cfg, steps, tmp)
    return {
        "cases": outs,
        "twice": twice,
        "older": older,
        "append": out,
        "concurrent": concurrent,
        "concurrent_report": report,
    }


@pytest.mark.slow
@pytest.mark.spark  # the jobs run in a child process
def test_every_contract_case_is_exact(stock_run):
    for name, case in CASES.items():
        assert result_rows(stock_run["cases"][name]) == case["expected"], name


def test_stock_schema_adds_a_count_per_summed_column():
    assert stock_schema().names[-1] == "requests_nonnull"
    assert str(stock_schema().field("requests_nonnull").type) == "int64"


def test_operators_default_to_the_contract_on_a_stock_table():
    cols = [f"{f.name}:{'long' if str(f.type) == 'int64' else 'string'}" for f in stock_schema()]
    ops = stock_operators(cols, ("uuid",), {})
    assert ops["requests"] == ops["requests_nonnull"] == "SumAll"
    assert ops["name"] == ops["ip"] == "UseLastNotNull" and "uuid" not in ops


def test_a_workloads_extra_columns_are_stored_by_their_operators_lakesoul_form():
    from contest.config import WorkloadConfig
    from contest.data.workload import contract_operators, workload_schema

    w = WorkloadConfig(columns={"m": "SumAll", "t": "UseLast", "l": "UseLastNotNullNorNullString"})
    ops = contract_operators(w)
    schema = stock_schema(workload_schema(w), ops)
    assert schema.names[-2:] == ["requests_nonnull", "m_nonnull"]
    cols = [f"{f.name}:{'long' if str(f.type) == 'int64' else 'string'}" for f in schema]
    got = stock_operators(cols, ("uuid",), {}, ops)
    assert got["m"] == got["m_nonnull"] == got["requests"] == "SumAll"
    assert got["t"] == "UseLast" and got["l"] == got["name"] == "UseLastNotNull"


def test_operators_lakesoul_lacks_are_refused():
    with pytest.raises(ReadError, match="no such operator"):
        stock_operators(["uuid:string", "name:string"], ("uuid",), {"name": "Mystery"})
    with pytest.raises(ReadError, match="no such column"):
        stock_operators(["uuid:string"], ("uuid",), {"nope": "SumAll"})


def test_bucket_files_keep_commit_order():
    commits = [["t/part-a_0001.parquet", "t/part-a_0000.parquet"], ["t/part-b_0001.parquet"]]
    assert bucket_files(commits) == [
        ["t/part-a_0000.parquet"],
        ["t/part-a_0001.parquet", "t/part-b_0001.parquet"],
    ]


@pytest.mark.slow
@pytest.mark.spark  # the jobs run in a child process
def test_an_append_refuses_a_batch_twice_and_an_older_one(stock_run):
    """Batches 0 and 2 appended one by one; batch 2 again, and batch 1 after it, are
    refused before anything is committed, and the read holds 0 and 2 once each."""
    assert "version 2 (base-2.parquet) is already committed" in stock_run["twice"].read_text()
    assert "version 1 (base-1.parquet) is older than version 2" in stock_run["older"].read_text()
    assert [(r["uuid"], r["requests"]) for r in result_rows(stock_run["append"])] == [
        ("k0", 1),
        ("k1", 2),
        ("k2", 2),
    ]


@pytest.mark.slow
@pytest.mark.spark  # the jobs run in a child process
def test_concurrent_writers_commit_in_version_order_and_stay_exact(stock_run):
    """write.threads = 4: the batches after the first are written at once (each later
    one starts before the first of them has committed) and committed in version order,
    so LakeSoul's reader merges them as if written one after another."""
    rows = result_rows(stock_run["concurrent"])
    assert rows[0] == row("a", req=15, ip="ip5", name="v4")
    assert [r["uuid"] for r in rows[1:]] == [f"k{v}" for v in range(6)]
    batches = json.loads(stock_run["concurrent_report"].read_text())["batches"]
    assert [b["version"] for b in batches] == list(range(6))
    assert all(b["commit_id"] and b["error"] is None for b in batches)
    later = batches[1:]
    assert all(b["start_s"] < later[0]["end_s"] for b in later[1:4])  # written at once


def test_the_turnstile_commits_in_version_order_and_stops_after_a_failure():
    """Writers finishing in any order commit in version order; after a failed commit
    no later version commits."""
    import random
    import threading
    import time

    from contest.write.stock import Turnstile

    versions = [7, 2, 9, 4, 5]
    turn, order = Turnstile(versions), []

    def writer(v: int) -> None:
        time.sleep(random.uniform(0, 0.02))
        turn.take(v, lambda ok: order.append((v, ok)) or v != 5)

    threads = [threading.Thread(target=writer, args=(v,)) for v in versions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    assert order == [(2, True), (4, True), (5, True), (7, False), (9, False)]
