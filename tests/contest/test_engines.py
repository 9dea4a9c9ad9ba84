"""The engines registry: which engine a config picks, and what each refuses before any
Spark session starts."""

import io
import json

import pytest

from contest.config import load_config
from contest.engines import (
    AVAILABLE_ENGINES,
    JobOutcome,
    ReadJob,
    WriteJob,
    engine_for,
    settable_engines,
)
from contest.errors import ConfigError, DataError, UsageError
from contest.evaluation.strategies import STRATEGIES
from contest.write.job import WriteMode


@pytest.mark.parametrize(
    ("strategy", "engine"),
    [
        ("optimized", "harness"),
        ("baseline-cow", "harness"),
        ("lakesoul-stock", "lakesoul-stock"),
        ("delta-merge", "peer"),
        ("hudi-mor", "peer"),
    ],
)
def test_each_strategy_runs_on_its_engine(strategy, engine):
    cfg = load_config(preset=STRATEGIES[strategy])
    assert engine_for(cfg, "write").name == engine
    assert engine_for(cfg, "read").name == engine


def test_the_engine_settings_are_checked_against_the_registry(monkeypatch):
    """write.engine and read.engine take what AVAILABLE_ENGINES holds (but the peer's,
    which peer.format chooses), and nothing else: a throwaway engine registered there is
    taken, an unknown one refused in one line naming the known."""
    assert settable_engines() == ["harness", "lakesoul-stock"]
    with pytest.raises(ConfigError, match="write.engine: 'toy' is not one of harness"):
        load_config(overrides={"write.engine": "toy"})
    with pytest.raises(ConfigError, match="read.engine: 'peer' is not one of"):
        load_config(overrides={"read.engine": "peer"})
    monkeypatch.setitem(AVAILABLE_ENGINES, "toy", AVAILABLE_ENGINES["harness"])
    assert load_config(overrides={"write.engine": "toy"}).write.engine == "toy"


@pytest.mark.parametrize(
    ("strategy", "job"),
    [
        ("lakesoul-stock", WriteJob("d", "/t", mode=WriteMode.RESUME)),
        ("lakesoul-stock", WriteJob("d", "/t", delays={0: 1.0})),
        ("delta-merge", WriteJob("d", "/t", mode=WriteMode.RESUME)),
        ("delta-merge", WriteJob("d", "/t", only=[0, 1], delays={1: 1.0})),
    ],
)
def test_writes_an_engine_cannot_do_are_refused_before_spark(strategy, job):
    cfg = load_config(preset=STRATEGIES[strategy])
    with pytest.raises(UsageError):
        engine_for(cfg, "write").write(cfg, job)


@pytest.mark.parametrize("strategy", ["lakesoul-stock", "delta-merge", "paimon-agg"])
def test_an_append_of_batches_the_data_lacks_is_refused_before_spark(strategy, tmp_path):
    """--append --only is taken by the peers and lakesoul-stock (a workload's phases);
    an index with no batch file is one line naming it, before any session or table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from contest.data.batches import SCHEMA

    data = tmp_path / "data"
    data.mkdir()
    for i in range(2):
        pq.write_table(
            pa.table({f.name: pa.array([], f.type) for f in SCHEMA}), data / f"base-{i}.parquet"
        )
    cfg = load_config(preset=STRATEGIES[strategy])
    job = WriteJob(str(data), str(tmp_path / "t"), mode=WriteMode.APPEND, only=[1, 7])
    with pytest.raises(DataError, match=r"--only 7: no such batch"):
        engine_for(cfg, "write").write(cfg, job)
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("strategy", ["lakesoul-stock", "iceberg-mor"])
def test_latest_complete_and_gaps_are_for_the_harness_read(strategy):
    """Reads while the harness's concurrent writes land are its own; a version read
    (as of, changes) goes to every engine's own mechanism."""
    cfg = load_config(preset=STRATEGIES[strategy])
    for job in (ReadJob("/t", "/o", latest_complete=True), ReadJob("/t", "/o", allow_gaps=True)):
        with pytest.raises(UsageError, match="for the harness's|for LakeSoul tables"):
            engine_for(cfg, "read").read(cfg, job)


def test_an_outcome_is_one_json_line_and_its_messages():
    out, err = io.StringIO(), io.StringIO()
    code = JobOutcome({"rows": 3, "spark_cores": 2}, ("timeline", "summary"), 1).emit(out, err)
    assert code == 1
    assert json.loads(out.getvalue()) == {"rows": 3, "spark_cores": 2}
    assert err.getvalue().splitlines() == ["timeline", "summary"]
