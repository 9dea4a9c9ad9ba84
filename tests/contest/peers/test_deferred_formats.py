"""What the deferred-merge peers ask of Spark and of their tables, derived from the
config alone."""

from pathlib import Path

from contest.config import load_config
from contest.evaluation.strategies import STRATEGIES
from contest.peers import formats


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


def test_paimon_submits_its_pinned_connector_and_catalog():
    opts = formats.submit_options(preset("paimon-agg"))
    assert opts[:2] == ["--packages", "org.apache.paimon:paimon-spark-3.5:0.9.0"]
    confs = dict(o.split("=", 1) for o in opts[3::2])
    assert confs["spark.sql.catalog.paimon"] == "org.apache.paimon.spark.SparkCatalog"
    conf = formats.runtime_conf(preset("paimon-agg"), Path("/w/tables/ccf"))
    assert conf["spark.sql.catalog.paimon.warehouse"] == "file:///w/tables/ccf"
