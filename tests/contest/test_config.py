import dataclasses

import pytest

# The checks of settings owned by the layers above config (workload shapes, peer
# formats) are registered by those layers, as contest.api and the CLI import them.
import contest.api  # noqa: F401
from contest.config import load_config, override
from contest.errors import ConfigError


def test_defaults_file_env_flags_in_that_order(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text(
        '[spark]\nmaster = "local[3]"\nshuffle_partitions = 3\n[table]\nhash_buckets = 8\n'
    )
    cfg = load_config(
        f, env={"CONTEST_SPARK_MASTER": "local[5]"}, overrides={"table.hash_buckets": "2"}
    )
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
    with pytest.raises(ConfigError, match="read.stock_threads: -1 is negative"):
        load_config(overrides={"read.stock_threads": -1})
    with pytest.raises(ConfigError, match="load_window_s: must be positive"):
        load_config(overrides={"load_window_s": 0})
    with pytest.raises(ConfigError, match="read.statistics: 'some' is not one of key, all, none"):
        load_config(overrides={"read.statistics": "some"})
    assert load_config(overrides={"read.statistics": "all"}).read.statistics == "all"
    assert (
        load_config(overrides={"write.file_dictionaries": "false"}).write.file_dictionaries is False
    )


def test_lakesoul_reader_knobs_default_to_lakesoul():
    cfg = load_config()
    assert (cfg.read.stock_batch_rows, cfg.read.stock_threads, cfg.read.stock_prefetch) == (
        8192,
        0,
        0,
    )
    cfg = load_config(overrides={"read.stock_batch_rows": 65536, "read.stock_prefetch": 2})
    assert cfg.read.stock_batch_rows == 65536 and cfg.read.stock_prefetch == 2


def test_spark_conf_takes_dotted_keys():
    cfg = load_config(overrides={"spark.conf.spark.sql.adaptive.enabled": "false"})
    assert cfg.spark.conf == {"spark.sql.adaptive.enabled": "false"}


def test_password_never_in_repr():
    cfg = load_config(
        env={
            "LAKESOUL_PG_URL": "jdbc:postgresql://h/db",
            "LAKESOUL_PG_USERNAME": "u",
            "LAKESOUL_PG_PASSWORD": "s3cret",
        }
    )
    assert cfg.pg.external
    assert "s3cret" not in repr(cfg)


def test_config_is_frozen_and_variants_are_new_objects():
    cfg = load_config()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.write.threads = 9  # type: ignore[misc]
    variant = override(cfg, {"write.threads": 9, "read.operators": {"requests": "SumAll"}})
    assert variant.write.threads == 9 and cfg.write.threads == 4
    assert variant.read.operators == {"requests": "SumAll"} and cfg.read.operators == {}
    with pytest.raises(ConfigError, match="write.threads: must be at least 1"):
        override(cfg, {"write.threads": 0})


def test_lakesoul_home_is_a_source_of_postgres_settings(tmp_path):
    props = tmp_path / "lakesoul.properties"
    props.write_text(
        "# LakeSoul's own file\nlakesoul.pg.driver=org.postgresql.Driver\n"
        "lakesoul.pg.url=jdbc:postgresql://db.internal:6543/meta\n"
        "lakesoul.pg.username = alice\nlakesoul.pg.password=pw=with=equals\n"
    )
    cfg = load_config(env={"lakesoul_home": str(props)})
    assert cfg.pg.url == "jdbc:postgresql://db.internal:6543/meta"
    assert (cfg.pg.username, cfg.pg.password) == ("alice", "pw=with=equals")
    # LakeSoul's own variables still win over the file.
    cfg = load_config(env={"lakesoul_home": str(props), "LAKESOUL_PG_USERNAME": "bob"})
    assert cfg.pg.username == "bob"
    with pytest.raises(ConfigError, match="no such properties file"):
        load_config(env={"lakesoul_home": str(tmp_path / "missing")})


def test_workload_section_and_its_errors(tmp_path):
    f = tmp_path / "w.toml"
    f.write_text(
        '[workload]\nbatches = 40\ndistribution = "recent"\nrecent_batches = 3\n'
        '[workload.columns]\n"m1" = "SumAll"\n'
    )
    cfg = load_config(f, overrides={"workload.batch_rows": "50"})
    assert (cfg.workload.batches, cfg.workload.batch_rows) == (40, 50)
    assert cfg.workload.columns == {"m1": "SumAll"}
    assert load_config().workload.batches == 11
    for key, value, says in [
        ("workload.batches", 0, "workload.batches"),
        ("workload.update_share", 1.5, "workload.update_share"),
        ("workload.null_share", -0.1, "workload.null_share"),
        ("workload.distribution", "gauss", "workload.distribution"),
        ("workload.zipf_exponent", 1.0, "workload.zipf_exponent"),
        ("workload.recent_batches", 0, "workload.recent_batches"),
        ("workload.columns.name", "SumAll", "workload.columns.name: a contest column"),
        ("workload.columns.x", "Median", "workload.columns.x"),
        ("workload.columns.Bad-Name", "UseLast", "workload.columns.Bad-Name"),
        ("workload.repeat_share", 0.6, "workload.repeat_share"),
    ]:
        with pytest.raises(ConfigError, match=says):
            load_config(overrides={key: value})


def test_named_workload_replaces_the_section_and_flags_still_win(tmp_path):
    from contest.data.workload import workload_settings

    f = tmp_path / "c.toml"
    f.write_text("[workload]\nrepeat_share = 0.3\n")
    cfg = load_config(
        f, workload=workload_settings("hot-keys"), overrides={"workload.batches": "5"}
    )
    assert cfg.workload.name == "hot-keys" and cfg.workload.distribution == "zipf"
    assert cfg.workload.repeat_share == 0.0  # the file's section is replaced whole
    assert cfg.workload.batches == 5  # a flag beats the workload
    with pytest.raises(ConfigError, match="no workload named 'nope'"):
        workload_settings("nope")
    mine = tmp_path / "mine.toml"
    mine.write_text("[workload]\nbatches = 3\n[spark]\nmaster = 'local[1]'\n")
    with pytest.raises(ConfigError, match="holds a \\[workload\\] table and its phases, not"):
        workload_settings(str(mine))
    mine.write_text("[workload]\nbatches = 3\n")
    assert workload_settings(str(mine)) == {"workload.batches": 3, "workload.name": "mine"}


def test_checks_of_the_layers_above_run_without_their_modules_imported_first():
    """`register_check` no longer depends on an import some caller may forget: a fresh
    process that imports only the configuration still has a peer format and a workload's
    extra column checked."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from contest.config import load_config\n"
        "from contest.errors import ConfigError\n"
        "assert 'contest.peers.formats' not in sys.modules\n"
        "for key, value in (('peer.format', 'nope'), ('workload.columns', {'x': 'Bogus'})):\n"
        "    try:\n"
        "        load_config(env={}, overrides={key: value})\n"
        "    except ConfigError as exc:\n"
        "        print(exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "peer.format: 'nope' is not one of" in out
    assert "workload.columns.x: 'Bogus' is not one of" in out


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        (
            "bad",
            '[spark]\nmaster = "local[1]"\n[table\nhash_buckets = 2\n',
            r"bad.toml:3: not valid TOML: .*\(column \d+\)$",
        ),
        (
            "typed",
            '# mine\n[spark]\nmaster = "local[1]"\n\n[table]\nhash_buckets = "many"\n',
            r"typed.toml:6: table.hash_buckets: expected an integer",
        ),
        (
            "key",
            "[spark]\nmaster = 'local[1]'\nmastr = 1\n",
            r"key.toml:3: unknown configuration key: spark.mastr",
        ),
        (
            "inline",
            "write = { threads = 'x' }\n",
            r"inline.toml:1: write.threads: expected an integer",
        ),
    ],
)
def test_a_config_files_errors_name_the_file_and_line(tmp_path, name, text, error):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=error):
        load_config(path)


def test_a_preset_yields_to_the_keys_a_user_set():
    from contest.config import get_key, unless_set

    cfg = override(load_config(), {"peer.buckets": 4, "spark.conf.spark.x.y": "1"})
    assert get_key(cfg, "peer.buckets") == 4 and get_key(cfg, "spark.conf.spark.x.y") == "1"
    assert get_key(cfg, "spark.conf.spark.unset") is None
    preset = {"peer.buckets": 8, "peer.hudi_index": "BUCKET", "spark.conf.spark.x.y": "2"}
    assert unless_set(cfg, preset) == {"peer.hudi_index": "BUCKET"}
    with pytest.raises(ConfigError, match="unknown configuration key: peer.nope"):
        get_key(cfg, "peer.nope")


def test_change_data_keys_default_to_the_contests_upserts(tmp_path):
    from contest.config import to_toml
    from contest.data.workload import cache_label

    w = load_config().workload
    assert (w.op_column, w.op_values, w.key) == ("", "lakesoul", ["uuid"])
    # A shape cached before these settings existed keeps its folder.
    assert cache_label(dataclasses.replace(w, batches=3)) == "contest-85ae17c96a"
    f = tmp_path / "c.toml"
    f.write_text('[workload]\nkey = ["tenant", "id"]\nop_column = "op"\nop_values = "debezium"\n')
    cfg = load_config(f)
    assert (cfg.workload.key, cfg.workload.op_column) == (["tenant", "id"], "op")
    again = tmp_path / "again.toml"
    again.write_text(to_toml(cfg))
    assert load_config(again).workload == cfg.workload
    assert load_config(overrides={"workload.key": "a, b"}).workload.key == ["a", "b"]
    assert cache_label(cfg.workload) != cache_label(dataclasses.replace(cfg.workload, key=["id"]))


@pytest.mark.parametrize(
    ("overrides", "says"),
    [
        ({"workload.op_values": "maxwell"}, "workload.op_values: 'maxwell' is not one of"),
        ({"workload.key": []}, "workload.key: one or two column names, got 0"),
        ({"workload.key": ["a", "b", "c"]}, "workload.key: one or two column names, got 3"),
        ({"workload.key": ["a", " "]}, "workload.key: a column name is empty"),
        ({"workload.key": ["a", "a"]}, "workload.key: a column named twice"),
        ({"workload.key": 5}, "workload.key: expected a list of strings, got 5"),
        ({"workload.key": ["k"], "workload.op_column": "k"}, "workload.op_column: 'k' is a key"),
        ({"workload.op_column": "city"}, "workload.op_column: 'city' is a payload column"),
    ],
)
def test_change_data_settings_are_refused_in_one_line(overrides, says):
    with pytest.raises(ConfigError, match=says) as info:
        load_config(overrides=overrides)
    assert "\n" not in str(info.value)
