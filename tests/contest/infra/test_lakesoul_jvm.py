"""How LakeSoul's JVM libraries are loaded: coordinates, class path, spark-submit options,
the engines' configuration keys."""

import dataclasses
from pathlib import Path

import pytest

from contest.config import load_config
from contest.errors import ConfigError
from contest.evaluation.jobs import spark_submit
from contest.infra import lakesoul_jvm
from contest.peers import registry
from meta.catalog import schema_from_json


def test_the_lakesoul_set_is_a_package_set_with_its_excludes():
    assert registry.package_sets()["lakesoul"] == lakesoul_jvm.COORDINATES
    assert registry.package_excludes()["lakesoul"] == lakesoul_jvm.EXCLUDES
    assert "com.dmetasoul:lakesoul-io-java:2.6.2" in lakesoul_jvm.COORDINATES
    assert lakesoul_jvm.EXCLUDES == ("org.apache.spark:spark-catalyst_2.12",)


def test_arrow_15_and_hikari_4_go_first_and_jffi_main_jar_comes_from_maven(tmp_path):
    cp = lakesoul_jvm.classpath(tmp_path)
    assert cp[0].name == "org.apache.arrow_arrow-vector-15.0.2.jar"
    assert tmp_path / ".ivy2" / "jars" / "com.zaxxer_HikariCP-4.0.3.jar" in cp
    assert cp[-2].name == "com.github.jnr_jffi-1.3.13-native.jar"
    assert cp[-1] == tmp_path / ".m2/repository/com/github/jnr/jffi/1.3.13/jffi-1.3.13.jar"


def test_harness_jobs_get_no_lakesoul_options(cfg, tmp_path):
    cmd = spark_submit(cfg, "write", 2, tmp_path / "c.toml", [])
    assert "--packages" not in cmd and "--jars" not in cmd


def test_lakesoul_stock_jobs_carry_their_resolved_jars_and_classpath(cfg, pg, tmp_path):
    # The pinned coordinates, resolved before the timed job and handed to it by path
    # (the same jars a session with spark.jars.packages loads): nothing left to resolve.
    stock = dataclasses.replace(cfg, write=dataclasses.replace(cfg.write, engine="lakesoul-stock"))
    cmd = spark_submit(stock, "write", 2, tmp_path / "c.toml", [])
    assert "--packages" not in cmd and "--exclude-packages" not in cmd
    jars = [Path(j) for j in cmd[cmd.index("--jars") + 1].split(",")]
    names = {j.name for j in jars}
    assert "com.dmetasoul_lakesoul-io-java-2.6.2.jar" in names
    assert "org.casbin_jcasbin-1.81.0.jar" in names
    assert not any("spark-catalyst" in n for n in names)  # excluded, as --exclude-packages did
    assert all(j.is_file() for j in jars)
    assert any(j.name == "contest-lakesoul-stock.jar" for j in jars)
    assert "arrow-vector-15.0.2" in cmd[cmd.index("--driver-class-path") + 1].split(":")[0]
    assert "-Dlakesoul_home=" in cmd[cmd.index("--driver-java-options") + 1]
    props = (stock.state_path / lakesoul_jvm.PROPERTIES).read_text()
    assert "lakesoul.pg.driver=org.postgresql.Driver\n" in props


def test_engines_are_validated():
    with pytest.raises(ConfigError, match="write.engine"):
        load_config(overrides={"write.engine": "spark-connector"})


def test_both_schema_forms_are_read():
    spark_json = (
        '{"type":"struct","fields":[{"name":"uuid","type":"string","nullable":true,'
        '"metadata":{}},{"name":"requests","type":"long","nullable":true,"metadata":{}}]}'
    )
    arrow_json = (
        '{"fields":[{"name":"uuid","type":{"name":"utf8"},"nullable":false,"children":[],'
        '"metadata":[]},{"name":"requests","type":{"name":"int","isSigned":true,'
        '"bitWidth":64},"nullable":true,"children":[],"metadata":[]}],"metadata":[]}'
    )
    for text in (spark_json, arrow_json):
        schema = schema_from_json(text)
        assert schema.names == ["uuid", "requests"]
        assert [str(t) for t in schema.types] == ["string", "int64"]
