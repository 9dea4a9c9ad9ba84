"""What a peer format asks of Spark and of its table, derived from the config alone."""

from pathlib import Path

import pytest

from contest.config import load_config
from contest.errors import ConfigError
from contest.evaluation.strategies import STRATEGIES
from contest.peers import formats
from contest.peers.hudi.options import ORDERING
from contest.peers.iceberg.format import identifier as iceberg_identifier
from contest.peers.write import classify, merge_sql

PEERS = ("delta-merge", "delta-dv", "iceberg-mor", "hudi-mor")


def preset(name: str, **overrides: object):
    return load_config(preset=STRATEGIES[name], overrides=overrides)


@pytest.mark.parametrize("name", PEERS)
def test_every_peer_submits_its_pinned_packages_and_start_settings(name):
    cfg = preset(name)
    opts = formats.submit_options(cfg)
    pinned = {
        "delta": "io.delta:delta-spark_2.12:3.3.2",
        "iceberg": "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0",
        "hudi": "org.apache.hudi:hudi-spark3.5-bundle_2.12:1.0.2",
    }[cfg.peer.format]
    assert opts[:2] == ["--packages", pinned]
    confs = dict(o.split("=", 1) for o in opts[3::2])
    assert opts[2::2] == ["--conf"] * len(confs)
    assert "spark.sql.extensions" in confs
    if cfg.peer.format == "hudi":  # Hudi's classes need Kryo, set before the context starts
        assert confs["spark.serializer"].endswith("KryoSerializer")


def test_lakesoul_strategies_submit_nothing_more():
    assert formats.submit_options(preset("optimized")) == []


def test_packages_key_replaces_the_pin():
    cfg = preset("delta-merge", **{"peer.packages": "g:a:1, g:b:2"})
    assert formats.coordinates(cfg) == ("g:a:1", "g:b:2")


def test_delta_presets_differ_in_deletion_vectors_only_where_meant():
    merge = formats.table_properties(preset("delta-merge"))
    dv = formats.table_properties(preset("delta-dv"))
    assert merge == {"delta.enableDeletionVectors": "false"}
    assert dv["delta.enableDeletionVectors"] == "true"


def test_iceberg_table_is_v2_merge_on_read_with_the_preset_layout():
    props = formats.table_properties(preset("iceberg-mor"))
    assert props["format-version"] == "2"
    assert {props[f"write.{op}.mode"] for op in ("merge", "update", "delete")} == {"merge-on-read"}
    assert props["write.parquet.compression-codec"] == "snappy"
    assert props["write.merge.distribution-mode"] == "none"
    cow = formats.table_properties(preset("iceberg-mor", **{"peer.merge_mode": "copy-on-write"}))
    assert cow["write.merge.mode"] == "copy-on-write"
    # iceberg-dv: the same layout on format v3 (deletion vectors), its MERGE hash-
    # distributed (one task writes a data file's vector: Iceberg refuses two).
    dv = formats.table_properties(preset("iceberg-dv"))
    hash_mode = {"write.distribution-mode": "hash", "write.merge.distribution-mode": "hash"}
    assert dv == props | {"format-version": "3"} | hash_mode
    hashed = formats.table_properties(preset("iceberg-mor", **{"peer.distribution": "hash"}))
    assert hashed["write.distribution-mode"] == hashed["write.merge.distribution-mode"] == "hash"


def test_hudi_is_mor_keyed_by_uuid_ordered_by_version_with_the_preset_index():
    opts = _hudi_options(preset("hudi-mor"), Path("/x/ccf-hudi"), "upsert")
    assert opts["hoodie.datasource.write.table.type"] == "MERGE_ON_READ"
    assert opts["hoodie.datasource.write.recordkey.field"] == "uuid"
    assert opts["hoodie.datasource.write.precombine.field"] == ORDERING
    assert opts["hoodie.index.type"] == "BUCKET"
    assert opts["hoodie.bucket.index.num.buckets"] == "8"
    assert opts["hoodie.metadata.enable"] == "false"
    assert opts["hoodie.table.name"] == "ccf_hudi"


def test_codec_none_is_each_formats_uncompressed():
    cfg = preset("iceberg-mor", **{"peer.codec": "none"})
    assert formats.table_properties(cfg)["write.parquet.compression-codec"] == "uncompressed"
    cfg = preset("delta-merge", **{"peer.codec": "none"})
    conf = formats.runtime_conf(cfg, Path("/w/ns/t"))
    assert conf["spark.sql.parquet.compression.codec"] == "uncompressed"


def test_iceberg_tables_live_at_warehouse_namespace_table():
    cfg = preset("iceberg-mor")
    conf = formats.runtime_conf(cfg, Path("/w/eval/tables/ccf"))
    assert conf["spark.sql.catalog.peer.warehouse"] == "/w/eval"
    assert iceberg_identifier(Path("/w/eval/tables/ccf")) == "peer.`tables`.`ccf`"


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("peer.format", "kudu", "peer.format: 'kudu' is not one of delta, iceberg, hudi"),
        ("peer.codec", "lz4_raw", "peer.codec: 'lz4_raw' is not one of"),  # not Iceberg's
        ("peer.merge_mode", "mor", "peer.merge_mode"),
        ("peer.hudi_index", "bucket", "peer.hudi_index"),
        ("peer.buckets", "-1", "peer.buckets: must be 0"),
        ("peer.format_version", "1", "peer.format_version: 1 is not 2 or 3"),
        ("peer.distribution", "fanout", "peer.distribution: 'fanout' is not none, hash or range"),
    ],
)
def test_bad_peer_settings_are_one_line_naming_the_key(key, value, needle):
    with pytest.raises(ConfigError) as err:
        load_config(preset=STRATEGIES["iceberg-mor"], overrides={key: value})
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_the_merge_reads_target_columns_as_the_contract_needs():
    sql = merge_sql("t_tab", "s_view")
    assert "MERGE INTO t_tab t USING s_view s ON t.uuid = s.uuid" in sql
    assert "ELSE t.`requests` + s.`requests` END" in sql
    assert "t.`name` = coalesce(s.`name`, t.`name`)" in sql and "INSERT *" in sql


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("part-00000-1b2c-c000.lz4raw.parquet", "data"),
        ("deletion_vector_4f1e.bin", "delete"),
        ("00000-5-abc-00001-deletes.parquet", "delete"),
        ("00001-8-abc-00001-deletes.puffin", "delete"),  # Iceberg v3 deletion vectors
        (".0a1b-0_20261126043307354.log.1_3-85-254", "log"),
        ("00000000000000000010.checkpoint.parquet.crc", "other"),
    ],
)
def test_table_files_are_classified_by_name(name, kind):
    assert classify(name) == kind


def test_each_stream_sink_is_found_by_name_and_a_wrong_one_is_one_line():
    from contest.config import override
    from contest.peers.base import HARNESS_SINK, OWN_SINK

    hudi = formats.for_stream("hudi")
    assert [s.name for s in hudi.stream_sinks()] == [HARNESS_SINK, OWN_SINK]
    assert hudi.stream_sink().name == HARNESS_SINK  # the default: the first
    assert hudi.stream_sink(OWN_SINK).write == hudi.own_stream_writer
    assert formats.for_stream("paimon").stream_sink().name == OWN_SINK
    assert formats.for_stream("delta").stream_sink().name == HARNESS_SINK
    cfg = load_config()
    with pytest.raises(ConfigError, match="stream.sink: delta has foreach-batch, not 'own'"):
        override(cfg, {"peer.format": "delta", "stream.sink": OWN_SINK})
    paimon = override(cfg, {"peer.format": "paimon", "stream.sink": HARNESS_SINK})
    assert paimon.stream.sink == HARNESS_SINK  # the harness's beside Paimon's own
    with pytest.raises(ConfigError, match="iceberg has no streaming sink"):
        override(cfg, {"peer.format": "iceberg", "stream.sink": OWN_SINK})
    with pytest.raises(ConfigError, match="LakeSoul stream has the harness's foreach-batch only"):
        override(cfg, {"peer.format": "", "stream.sink": OWN_SINK})
    assert override(cfg, {"peer.format": "hudi", "stream.sink": OWN_SINK}).stream.sink == OWN_SINK


def _hudi_options(cfg, table, operation):
    return formats.of(cfg).write_options(cfg, table, operation)
