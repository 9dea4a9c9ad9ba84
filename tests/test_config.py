import pytest

from contest.config import ConfigError, load_config


def test_defaults_file_env_flags_in_that_order(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text(
        '[spark]\nmaster = "local[3]"\nshuffle_partitions = 3\n[table]\nhash_buckets = 8\n'
    )
    cfg = load_config(f, env={"CONTEST_SPARK_MASTER": "local[5]"},
                      overrides={"table.hash_buckets": "2"})
    assert cfg.spark.master == "local[5]"  # env beats file
    assert cfg.spark.shuffle_partitions == 3  # file beats default
    assert cfg.table.hash_buckets == 2  # flag beats file
    assert load_config().spark.master == "local[*]"


def test_unknown_key_is_named(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text("[spark]\nmastr = 1\n")
    with pytest.raises(ConfigError, match="spark.mastr"):
        load_config(f)
    with pytest.raises(ConfigError, match="nope"):
        load_config(overrides={"nope": 1})


def test_bad_values_are_rejected():
    with pytest.raises(ConfigError, match="table.hash_buckets"):
        load_config(overrides={"table.hash_buckets": "many"})
    with pytest.raises(ConfigError, match="hash_buckets"):
        load_config(overrides={"table.hash_buckets": 0})
    with pytest.raises(ConfigError, match="LAKESOUL_PG_USERNAME"):
        load_config(env={"LAKESOUL_PG_URL": "jdbc:postgresql://h:5432/db"})


def test_spark_conf_takes_dotted_keys():
    cfg = load_config(overrides={"spark.conf.spark.sql.adaptive.enabled": "false"})
    assert cfg.spark.conf == {"spark.sql.adaptive.enabled": "false"}


def test_password_never_in_repr():
    cfg = load_config(env={"LAKESOUL_PG_URL": "jdbc:postgresql://h/db",
                           "LAKESOUL_PG_USERNAME": "u", "LAKESOUL_PG_PASSWORD": "s3cret"})
    assert cfg.pg.external
    assert "s3cret" not in repr(cfg)
