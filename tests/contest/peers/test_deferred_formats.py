"""What the two deferred-merge peers (paimon-agg, hudi-merger) ask of Spark and of their
tables, derived from the config alone."""

from pathlib import Path

import pytest

from contest.config import load_config
from contest.evaluation.strategies import STRATEGIES
from contest.peers import formats
from contest.peers.hudi.options import MERGER_CLASS, OPERATORS_KEY, STRATEGY_ID


def preset(name: str, **overrides: object):
    return load_config(preset=STRATEGIES[name], overrides=overrides)


def test_paimon_table_is_the_contract_as_an_aggregation_table():
    props = formats.table_properties(preset("paimon-agg"))
    assert props["primary-key"] == "uuid"
    assert props["merge-engine"] == "aggregation"
    assert props["fields.requests.aggregate-function"] == "sum"
    others = ("ip", "hostname", "name", "city", "job", "phonenum")
    assert {props[f"fields.{c}.aggregate-function"] for c in others} == {"last_non_null_value"}
    assert props["sequence.field"] == "_ver,_pos"  # version first, then row position
    assert props["bucket"] == "8" and props["write-only"] == "true"


def test_paimon_takes_each_operators_aggregate_function():
    cfg = preset("paimon-agg", **{"workload.columns": {"p": "Max", "t": "JoinedNotNullByComma"}})
    props = formats.table_properties(cfg)
    assert props["fields.p.aggregate-function"] == "max"
    assert props["fields.t.aggregate-function"] == "listagg"
    assert props["fields.requests.aggregate-function"] == "sum"


def test_paimon_submits_its_pinned_connector_and_catalog():
    opts = formats.submit_options(preset("paimon-agg"))
    assert opts[:2] == ["--packages", "org.apache.paimon:paimon-spark-3.5:0.9.0"]
    confs = dict(o.split("=", 1) for o in opts[3::2])
    assert confs["spark.sql.catalog.paimon"] == "org.apache.paimon.spark.SparkCatalog"
    conf = formats.runtime_conf(preset("paimon-agg"), Path("/w/tables/ccf"))
    assert conf["spark.sql.catalog.paimon.warehouse"] == "file:///w/tables/ccf"


def test_hudi_merger_registers_its_merger_through_hudis_options():
    opts = _hudi_options(preset("hudi-merger"), Path("/x/ccf"), "upsert")
    assert opts["hoodie.write.record.merge.mode"] == "CUSTOM"
    assert opts["hoodie.write.record.merge.strategy.id"] == STRATEGY_ID
    assert opts["hoodie.write.record.merge.custom.implementation.classes"] == MERGER_CLASS
    assert opts["hoodie.datasource.write.table.type"] == "MERGE_ON_READ"
    assert opts["hoodie.index.type"] == "BUCKET"


def test_hudi_merger_and_hudi_mor_differ_only_in_the_merge():
    mor = _hudi_options(preset("hudi-mor"), Path("/x/ccf"), "upsert")
    merger = _hudi_options(preset("hudi-merger"), Path("/x/ccf"), "upsert")
    assert {k: v for k, v in merger.items() if k not in mor} == {
        "hoodie.write.record.merge.mode": "CUSTOM",
        "hoodie.write.record.merge.strategy.id": STRATEGY_ID,
        "hoodie.write.record.merge.custom.implementation.classes": MERGER_CLASS,
        "hoodie.logfile.data.block.format": "parquet",  # a merger of Spark rows needs it
        # the column-to-rule map the merger reads (the contract's, from the registry)
        OPERATORS_KEY: "ip:last_non_null;hostname:last_non_null;requests:sum;"
        "name:last_non_null_nor_null_string;city:last_non_null;job:last_non_null;"
        "phonenum:last_non_null",
    }
    assert all(merger[k] == v for k, v in mor.items())


@pytest.mark.jars  # the record merger's jar, built from jvm/ by ./build.sh
def test_the_merger_jar_is_on_the_jobs_class_path():
    confs = formats.start_conf(preset("hudi-merger"))
    assert confs["spark.jars"].endswith("contest-lakesoul-stock.jar")


def _hudi_options(cfg, table, operation):
    return formats.of(cfg).write_options(cfg, table, operation)
